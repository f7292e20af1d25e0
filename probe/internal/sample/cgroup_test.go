package sample

import (
	"path/filepath"
	"testing"
)

// The fixtures: a Kubernetes-like v1 tree whose pod limit (1 GiB) binds the container below it and whose
// node-level 2 GiB limit is looser; a Slurm-like v2 tree whose job limit (4 GiB) binds its step; a machine
// without a memory cgroup.
func TestFindCgroup(t *testing.T) {
	for _, c := range []struct {
		name, tree        string
		version           int
		path              string
		limit, workingSet uint64
		oomKills          uint64
	}{
		{name: "v1, the pod's limit binds", tree: "cgroup-v1", version: 1, path: "/kubepods/pod1/ctr",
			limit: 1 << 30, workingSet: 734003200 - 62914560, oomKills: 3},
		{name: "v2, the job's limit binds its step", tree: "cgroup-v2", version: 2, path: "/job_42/step_0",
			limit: 4 << 30, workingSet: 1610612736 - 200000000, oomKills: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cg, why := FindCgroup(Under(filepath.Join("testdata", c.tree)))
			if cg == nil {
				t.Fatalf("no cgroup: %s", why)
			}
			if cg.Version != c.version || cg.Path != c.path {
				t.Errorf("version %d path %q, want %d %q", cg.Version, cg.Path, c.version, c.path)
			}
			if got := cg.Limit(); got != c.limit {
				t.Errorf("limit %d, want %d", got, c.limit)
			}
			if ws, err := cg.WorkingSet(); err != nil || ws != c.workingSet {
				t.Errorf("working set %d (%v), want %d", ws, err, c.workingSet)
			}
			if n, ok := cg.OOMKills(); !ok || n != c.oomKills {
				t.Errorf("oom kills %d (%v), want %d", n, ok, c.oomKills)
			}
		})
	}
	if cg, why := FindCgroup(Under(filepath.Join("testdata", "cgroup-none"))); cg != nil ||
		why != "no memory cgroup (no cgroup v1 memory controller, no cgroup v2 hierarchy with the memory controller)" {
		t.Errorf("a machine without a memory cgroup: %v, %q", cg, why)
	}
}
