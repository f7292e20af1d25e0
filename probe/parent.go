package probe

import (
	"github.com/clmemprobe/clmemprobe/probe/internal/footprint"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
)

// MinAddressSpace is the least address-space limit the tool's own process documents that it runs under.
const MinAddressSpace = footprint.MinAddressSpace

// FitParent prepares the tool's own process for the limits it runs under before any work: one glibc malloc
// arena, a Go memory limit from RLIMIT_AS and the memory cgroup, and an error that says what to set when
// the address-space limit (ulimit -v) is below MinAddressSpace. A child does not call it: a worker keeps the
// defaults its runtime is measured with.
func FitParent() error {
	var limit uint64
	if cg, _ := sample.FindCgroup(sample.System); cg != nil {
		limit = cg.Limit()
	}
	return footprint.Fit(sample.System, limit)
}
