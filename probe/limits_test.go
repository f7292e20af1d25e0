package probe

import (
	"context"
	"maps"
	"strings"
	"syscall"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// RLIMIT_ settings are the worker's limits, never its environment; the descriptor limit the command was
// started with goes to every worker, and a variant's own replaces it.
func TestLimitsGoToTheSpecNotTheEnvironment(t *testing.T) {
	p := Plan{RuntimeLog: map[string]string{"FAULTCL_LOG": "1"}, startNofile: 1024}
	j := Job{Variant: result.Variant{Name: "nofile", Settings: map[string]string{"RLIMIT_NOFILE": "65536", "RLIMIT_AS": "64GiB",
		"RLIMIT_MEMLOCK": "unlimited", "FAULTCL_DEVICES": "2"}}}
	if env := strings.Join(p.env(j), " "); env != "FAULTCL_LOG=1 FAULTCL_DEVICES=2" {
		t.Errorf("the worker's environment: %s", env)
	}
	limits, err := p.limits(j)
	want := map[string]uint64{"RLIMIT_NOFILE": 65536, "RLIMIT_AS": 64 << 30, "RLIMIT_MEMLOCK": result.Unlimited}
	if err != nil || !maps.Equal(limits, want) {
		t.Errorf("limits %v, %v; want %v", limits, err, want)
	}
	if limits, _ := p.limits(Job{}); !maps.Equal(limits, map[string]uint64{"RLIMIT_NOFILE": 1024}) {
		t.Errorf("the default variant's limits: %v", limits)
	}
	if limits, _ := (&Plan{}).limits(Job{}); limits != nil {
		t.Errorf("no limit read and none asked: %v, want none", limits)
	}
	if _, err := p.limits(Job{Variant: result.Variant{Name: "x", Settings: map[string]string{"RLIMIT_NOFILE": "many"}}}); err == nil {
		t.Errorf("a count that is not a number must be refused")
	}
}

func TestParseNofile(t *testing.T) {
	for in, want := range map[string]uint64{"1024\n524288\n": 1024, "1024\nunlimited\n": 1024, "  8 8 ": 8} {
		if got, err := parseNofile(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1024\n", "unlimited\nunlimited\n", "2048\n1024\n", "many\n1024\n", "sh: ulimit: bad option\n"} {
		if got, err := parseNofile(in); err == nil {
			t.Errorf("%q: %d, want an error", in, got)
		}
	}
	// A shell here reads the limit this test process was started with: never above the one its Go runtime
	// raised to.
	n, err := shellNofile(context.Background())
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || n == 0 || n > rl.Cur {
		t.Errorf("shellNofile: %d, %v (this process's soft limit %d)", n, err, rl.Cur)
	}
}
