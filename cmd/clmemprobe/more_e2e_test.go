package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/result"
)

func TestTouchKernelOnPoCL(t *testing.T) {
	const n, size = 40, mib
	// A sampling interval longer than the run: the fit rests on the samples taken at fixed buffer counts
	// alone, as on a loaded machine whose interval samples are thinned out (this test once failed so).
	r, res, _ := runOut(t, PoCLEnv(t), "--touch", "kernel", "--max-allocs", fmt.Sprint(n), "--strategies", "shared,per-device", "--sample-interval", "30s")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, s := range r.Strategies {
		// The kernel writes every byte, and PoCL's device memory is host memory.
		if s.Outcome != result.OutcomeCompleted || s.AllocationsOK != n || s.HostBytesPerBuffer < 0.9*size {
			t.Errorf("%s: %s after %d, host cost %.0f per buffer; want completed %d at about %d", s.Strategy, s.Outcome, s.AllocationsOK, s.HostBytesPerBuffer, n, size)
		}
	}
}

// A reserve larger than the machine's memory must stop every strategy before its first buffer.
func TestHostGuardStops(t *testing.T) {
	r, res, _ := runOut(t, PoCLEnv(t), "--touch", "fill", "--max-allocs", "100", "--strategies", "shared,per-device", "--host-reserve", "1000TiB")
	if res.code != 0 {
		t.Errorf("exit %d: a guard stop is a result, not an error", res.code)
	}
	for _, s := range r.Strategies {
		if s.Outcome != result.OutcomeStopped || !strings.Contains(s.Reason, "host guard") || s.AllocationsOK != 0 {
			t.Errorf("%s: %s (%s) after %d buffers; want stopped by the host guard before the first", s.Strategy, s.Outcome, s.Reason, s.AllocationsOK)
		}
	}
}

// A sweep runs every strategy at every size; on the replicating runtime the shared threshold is the host
// budget divided by the size.
func TestSweepOverSizes(t *testing.T) {
	const budget = 256 << 20
	sizes := []uint64{64 << 10, 1 << 20, 1<<20 + 4<<10}
	r, _, _ := runOut(t, FaultEnv(t, fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", budget)), "--sizes", "64KiB,1MiB,1MiB+4KiB",
		"--strategies", "shared", "--max-allocs", "100000")
	if len(r.Strategies) != len(sizes) {
		t.Fatalf("%d results, want one per size", len(r.Strategies))
	}
	for i, s := range r.Strategies {
		if s.SizeBytes != sizes[i] || s.FirstFailure == nil || s.FirstFailure.Index != budget/sizes[i] {
			t.Errorf("size %d: first failure %+v, want index %d", s.SizeBytes, s.FirstFailure, budget/sizes[i])
		}
	}
}

func TestCompareExitCodes(t *testing.T) {
	env := FaultEnv(t, fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", 64<<20))
	_, _, base := runOut(t, env, "--strategies", "shared", "--max-allocs", "1000")
	_, _, same := runOut(t, env, "--strategies", "shared", "--max-allocs", "1000")
	_, _, worse := runOut(t, FaultEnv(t, fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", 32<<20)), "--strategies", "shared", "--max-allocs", "1000")
	notResult := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(notResult, []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	j := func(dir string) string { return filepath.Join(dir, "run.json") }
	if res := runTool(t, env, "compare", j(base), j(same)); res.code != 0 || !strings.Contains(res.stdout, "equal") {
		t.Errorf("same runtime: exit %d\n%s", res.code, res.stdout)
	}
	if res := runTool(t, env, "compare", j(base), j(worse)); res.code != exitRegression || !strings.Contains(res.stdout, "64 -> 32 buffers") {
		t.Errorf("half the budget: exit %d\n%s", res.code, res.stdout)
	}
	if res := runTool(t, env, "compare", j(worse), j(base)); res.code != 0 || !strings.Contains(res.stdout, "improved") {
		t.Errorf("twice the budget: exit %d\n%s", res.code, res.stdout)
	}
	oneLineError(t, runTool(t, env, "compare", j(base), notResult), exitUsage, "not a clmemprobe result")
}

// On a terminal the run shows a live line per strategy on stderr.
func TestProgressLineOnATerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed: no pseudo-terminal to test with")
	}
	env := PoCLEnv(t)
	cmd := exec.Command(script, "-qec", Binary(t)+" run --max-allocs 20000 --strategies shared,per-device", "/dev/null")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"\rshared", "buffers", "completed in"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("terminal output lacks %q:\n%q", want, out)
		}
	}
}
