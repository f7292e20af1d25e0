package worker

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// The worker's process limits. A runtime that fails at a limit of the process (descriptors, locked memory,
// address space) fails in the probe only if the worker runs under the user's limits, and a variant that
// raises one is how the probe shows that the limit was the cause.
//
// The descriptor limit needs care: the Go runtime raises its own soft RLIMIT_NOFILE to the hard limit when
// it starts (go.dev/issue/46279) and puts the original back only in the programs it starts. A worker is this
// program again, so it would raise its own as well, and a user's `ulimit -Sn 1024` would never reach the
// runtime under test. The original soft limit cannot be read inside a Go process; a shell started from one
// gets it back, and says it (the engine reads it so, in shellNofile). Each worker then sets it again as its
// first act (setLimits), which also tells its Go runtime to leave the limit alone in the programs the OpenCL
// runtime starts.

// workerLimit is one limit a worker sets: its resource, the ulimit option that raises its hard limit, and
// whether it is a count (descriptors) rather than bytes.
type workerLimit struct {
	resource int
	hardFlag string
	count    bool
}

// workerLimits are the limits a spec may ask for, by the names of result.LimitSettings.
var workerLimits = map[string]workerLimit{
	"RLIMIT_NOFILE":  {syscall.RLIMIT_NOFILE, "ulimit -Hn", true},
	"RLIMIT_MEMLOCK": {unix.RLIMIT_MEMLOCK, "ulimit -Hl", false},
	"RLIMIT_AS":      {syscall.RLIMIT_AS, "ulimit -Hv", false},
}

// limitText writes a limit's value for a message: a count as a number, bytes as a size, RLIM_INFINITY as
// unlimited.
func limitText(l workerLimit, v uint64) string {
	switch {
	case v == result.Unlimited:
		return "unlimited"
	case v == result.HardLimit:
		return "the hard limit"
	case l.count:
		return strconv.FormatUint(v, 10)
	}
	return units.Size(v)
}

// setLimits sets each soft limit the spec names, keeping the hard limits: a worker does what `ulimit -S`
// does in a user's shell, and a soft limit above the hard one is refused however privileged the worker
// (raising a hard limit is the administrator's decision, and the reproducer, which sets soft limits only,
// must meet the same limit).
func setLimits(limits map[string]uint64) error {
	for _, name := range slices.Sorted(maps.Keys(limits)) {
		l, ok := workerLimits[name]
		if !ok {
			return fmt.Errorf("%s is not a limit the worker sets", name)
		}
		var rl syscall.Rlimit
		if err := syscall.Getrlimit(l.resource, &rl); err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		want := limits[name]
		if want == result.HardLimit {
			want = rl.Max
		}
		if want > rl.Max {
			return fmt.Errorf("%s %s is above the hard limit %s: raise the hard limit (%s, as root) or ask for less",
				name, limitText(l, want), limitText(l, rl.Max), l.hardFlag)
		}
		rl.Cur = want
		// syscall.Setrlimit, not unix.Setrlimit: for RLIMIT_NOFILE it also tells the Go runtime not to change
		// the limit of the programs this process starts.
		if err := syscall.Setrlimit(l.resource, &rl); err != nil {
			return fmt.Errorf("setting %s to %s: %w", name, limitText(l, want), err)
		}
	}
	return nil
}

// limitFailure is the answer of a worker whose limits could not be set: failed at set-up, before any call
// into the runtime.
func limitFailure(err error) *wire.StrategyAnswer {
	return &wire.StrategyAnswer{Outcome: result.OutcomeFailed, Reason: err.Error(),
		FirstFailure: &result.FirstFailure{Stage: result.StageSetup, Call: "setrlimit"}}
}
