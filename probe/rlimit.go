package probe

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
)

// The worker's process limits. A runtime that fails at a limit of the process (descriptors, locked memory,
// address space) fails in the probe only if the worker runs under the user's limits, and a variant that
// raises one is how the probe shows that the limit was the cause.
//
// The descriptor limit needs care: the Go runtime raises its own soft RLIMIT_NOFILE to the hard limit when
// it starts (go.dev/issue/46279) and puts the original back only in the programs it starts. A worker is this
// program again, so it would raise its own as well, and a user's `ulimit -Sn 1024` would never reach the
// runtime under test. The original soft limit cannot be read inside a Go process; a shell started from one
// gets it back, and says it (shellNofile). Each worker then sets it again as its first act (setLimits), which
// also tells its Go runtime to leave the limit alone in the programs the OpenCL runtime starts.

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
func limitFailure(err error) *strategyAnswer {
	return &strategyAnswer{Outcome: result.OutcomeFailed, Reason: err.Error(),
		FirstFailure: &result.FirstFailure{Stage: result.StageSetup, Call: "setrlimit"}}
}

// nofileShell is what the shell runs to tell the soft and hard descriptor limits it was started with.
const nofileShell = "ulimit -S -n; ulimit -H -n"

// shellNofile is the soft RLIMIT_NOFILE this command was started with, as a shell started from it reads it
// (see above). It fails where there is no /bin/sh or it says something else than two limits.
func shellNofile(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/bin/sh", "-c", nofileShell).Output()
	if err != nil {
		return 0, fmt.Errorf("/bin/sh -c %q: %w", nofileShell, err)
	}
	return parseNofile(string(out))
}

// parseNofile reads the shell's two lines: the soft limit, then the hard one, each a number or unlimited.
// An unlimited soft limit is no limit to set again: the kernel takes no RLIM_INFINITY for descriptors.
func parseNofile(out string) (uint64, error) {
	f := strings.Fields(out)
	if len(f) != 2 {
		return 0, fmt.Errorf("the shell said %q, not a soft and a hard limit", out)
	}
	var v [2]uint64
	for i, s := range f {
		if s == "unlimited" {
			v[i] = result.Unlimited
			continue
		}
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("the shell said %q, not a soft and a hard limit", out)
		}
		v[i] = n
	}
	switch {
	case v[0] > v[1]:
		return 0, fmt.Errorf("the shell's soft limit %s is above its hard limit %s", f[0], f[1])
	case v[0] == result.Unlimited:
		return 0, fmt.Errorf("the shell's soft limit is unlimited")
	}
	return v[0], nil
}
