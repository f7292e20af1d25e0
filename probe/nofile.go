package probe

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The worker sets the descriptor limit this command was started with again (see probe/internal/worker's
// rlimit.go for why): the parent reads it here, through a shell, since a Go process cannot read it itself.

// nofileTimeout bounds the shell that reads the limit.
const nofileTimeout = 10 * time.Second

// nofileShell is what the shell runs to tell the soft and hard descriptor limits it was started with.
const nofileShell = "ulimit -S -n; ulimit -H -n"

// shellNofile is the soft RLIMIT_NOFILE this command was started with, as a shell started from it reads it
// (see above). It fails where there is no /bin/sh or it says something else than two limits.
func shellNofile(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, nofileTimeout)
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
