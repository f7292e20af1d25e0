package worker

import (
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// nofileUnknown is the descriptor limit's source where the parent could not read the limit the command was
// started with: the worker ran under the one its Go runtime raised to, near the hard limit.
const nofileUnknown = "the Go runtime's raised limit (the shell's ulimit -n could not be read)"

// startLedger is the part of a job's resource ledger the worker's own limits bound, as the loop begins:
// the open descriptors of the loop's first sample s against the soft RLIMIT_NOFILE, and its locked memory
// (VmLck) against the soft RLIMIT_MEMLOCK. Both limits are read in the worker after setLimits, so they are
// the ones the runtime met. limits are the spec's: without an RLIMIT_NOFILE there, the parent could not read
// the user's limit, and the source says so. A figure the worker could not read is left out: no descriptor
// count in s, or a status file without VmLck (root says, as the sampler reads it).
func startLedger(root sample.Root, s result.Sample, limits map[string]uint64) *result.Resources {
	rs := &result.Resources{}
	if s.OpenFDs > 0 { // the count includes the sampler's own descriptor: 0 is none read
		source := "ulimit -n"
		if _, ok := limits["RLIMIT_NOFILE"]; !ok {
			source = nofileUnknown
		}
		rs.FDs = &result.Resource{AtStart: s.OpenFDs, AtEnd: s.OpenFDs, Limit: softLimit(syscall.RLIMIT_NOFILE), LimitSource: source}
	}
	if pm, err := root.SelfMemory(); err == nil && pm.HasLocked {
		rs.LockedMemory = &result.Resource{AtStart: s.LockedBytes, AtEnd: s.LockedBytes, Limit: softLimit(unix.RLIMIT_MEMLOCK),
			LimitSource: "ulimit -l"}
	}
	return rs
}

// softLimit is this process's soft limit of a resource; 0 for none (RLIM_INFINITY) or where it cannot be
// read, as a Resource's Limit has it.
func softLimit(resource int) uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(resource, &rl); err != nil || rl.Cur == unix.RLIM_INFINITY {
		return 0
	}
	return rl.Cur
}
