package main

import (
	"fmt"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

// A bundle's title says what the judge found of a worker that crashed: the runtime only where the judge
// found the runtime at fault (a crash by SIGSEGV), the limit where a memory cgroup's OOM killer ended it,
// and a cause not measured where nothing tells (before, each of them was "An OpenCL runtime that crashed").
func TestBundleTitleFollowsTheJudgedLimit(t *testing.T) {
	const mib = 1 << 20
	crashed := func(signal string, cg *result.Cgroup) *result.Run {
		return &result.Run{Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}}, Jobs: []result.JobResult{{Strategy: result.Shared,
			Devices: []int{0}, SizeBytes: mib, Outcome: result.OutcomeCrashed, Signal: signal, Reason: "killed by " + signal,
			AllocationsOK: 900, BytesOK: 900 * mib, Resources: &result.Resources{Cgroup: cg}}}}
	}
	oom := &result.Cgroup{Version: 1, Path: "/walk1g", Memory: result.Resource{Limit: 1 << 30, AtEnd: 1 << 30}, OOMKillsAtStart: 1, OOMKillsAtEnd: 2}
	for _, c := range []struct {
		name string
		run  *result.Run
		want string
	}{
		{"a fault of the runtime", crashed("SIGSEGV", nil), "An OpenCL runtime that crashed"},
		{"its cgroup's OOM killer", crashed("SIGKILL", oom), fmt.Sprintf("An OpenCL allocation probe ended at a limit (%s)", result.LimitCgroupMemory)},
		{"nothing measured", crashed("SIGKILL", nil), "An OpenCL allocation probe whose worker crashed, for a cause not measured"},
	} {
		j := findings.Judge(c.run)
		if got := bundleTitle(j); got != c.want {
			t.Errorf("%s (limit %s): %q, want %q", c.name, j.Limit(&j.Run().Jobs[0]).Limit, got, c.want)
		}
	}
}
