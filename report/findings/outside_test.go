package findings

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// TestOutsideRSSNeedsTheRunsOwnCgroup: system available memory fell by 1.6 MiB per 1 MiB buffer while the
// worker's RSS grew by 1 MiB. Where the run's own memory cgroup grew by 1.6 MiB too, the buffers held
// 600 KiB outside the process; where it grew as the RSS did, the machine's other processes took the rest,
// and the judge says that instead (in a 1 GiB cgroup the tool had said "420-540 KiB outside RSS" while the
// cgroup grew as RSS). The root cgroup without a limit is the machine's, no witness of its own; with a
// limit it is a container's, named "/" in its own cgroup namespace.
func TestOutsideRSSNeedsTheRunsOwnCgroup(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		path           string
		limit          uint64
		cgroup         float64
		outside, other bool
	}{
		{"/pod/job", 0, 1.6 * mib, true, false},
		{"/pod/job", 0, 1.0 * mib, false, true},
		{"/", 1 << 30, 1.0 * mib, false, true}, // a container's, named "/" in its cgroup namespace
		{"/", 0, 1.0 * mib, true, false},
	} {
		r := fixture.Run(t)
		r.Jobs = r.Jobs[:1]
		j := &r.Jobs[0]
		sys, cg := 1.6*mib, c.cgroup
		j.SizeBytes, j.HostBytesPerBuffer, j.SystemBytesPerBuffer, j.CommittedBytesPerBuffer, j.SlopeNoise = mib, mib, &sys, nil, nil
		j.Fit = &result.Fit{Samples: 50, Spanned: j.AllocationsOK, OK: true}
		j.Resources = &result.Resources{Cgroup: &result.Cgroup{Version: 2, Path: c.path, Memory: result.Resource{PerBuffer: &cg, Limit: c.limit}}}
		apply(r)
		outside, other := false, false
		for _, f := range r.Findings {
			outside = outside || f.Kind == result.FindingOutsideRSS
			if f.Kind == result.FindingUnmeasured && f.Evidence["cgroup_bytes_per_buffer"] == cg && f.Evidence["machine_outside_rss_bytes_per_buffer"] == sys-mib {
				other = true
			}
		}
		if outside != c.outside || other != c.other {
			t.Errorf("cgroup %s at %.0f per buffer: outside the process %v, other processes' %v; want %v, %v: %q", c.path, cg, outside, other, c.outside, c.other, r.Verdict)
		}
	}
}
