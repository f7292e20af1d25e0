package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A program whose one context over two devices fails at the host staging budget (faultcl's replicating
// model stages every buffer of a multi-device context): run --like its trace runs the probe at the program's
// size, on two devices, and says that one context per device, which stages nothing, would have let it go on.
func TestRunLikeATrace(t *testing.T) {
	const budget, size = 40 << 20, 256 << 10
	env := FaultEnv(t, fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", budget))
	dir := t.TempDir()
	res := runTool(t, traceEnv(env), "trace", "--out", dir, "-q", "--", Traceprog(t), "loop", strconv.Itoa(size), "1000")
	idx, _ := printedFailure(t, res.stdout)
	if want := uint64(budget / size); idx != want {
		t.Fatalf("the program failed at #%d, want %d (the staging budget over its buffer size)", idx, want)
	}
	r, run, _ := runOut(t, env, "--like", filepath.Join(dir, "trace.json"), "--max-allocs", "400", "--strategies", "shared,per-device")
	if run.code != 0 {
		t.Fatalf("run --like: exit %d: %s", run.code, run.stderr)
	}
	if l := r.Config.Like; l == nil || len(l.Sizes) != 1 || l.Sizes[0] != size || !l.Failed || l.FailureIndex != idx || l.ContextDevices != 2 ||
		l.LiveBytes != idx*size {
		t.Fatalf("the run's like: %+v; want the program's size %d, its failure at #%d on 2 devices with %d bytes live", r.Config.Like, size, idx, idx*size)
	}
	wantFailure(t, strategy(t, r, result.Shared), idx, result.StageCreate, -6, int(idx%2))
	if pd := strategy(t, r, result.PerDevice); pd.Outcome != result.OutcomeCompleted || len(pd.Devices) != 2 {
		t.Fatalf("per-device: %s on devices %v, want completed on both", pd.Outcome, pd.Devices)
	}
	if !hasVerdict(r, "The traced program") || !hasVerdict(r, "one context per device would let it go on past where it failed") {
		t.Errorf("the verdict does not hold the layouts against the program: %q", r.Verdict)
	}
	for _, bad := range [][]string{{"--like", filepath.Join(dir, "trace.json"), "--size", "4KiB"}, {"--like", filepath.Join(dir, "nothere.json")}} {
		oneLineError(t, runTool(t, env, append([]string{"run", "--dry-run"}, bad...)...), exitUsage, "--like")
	}
	if !slices.ContainsFunc(strings.Split(runTool(t, env, "run", "--help").stdout, "\n"), func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "--like ") }) {
		t.Error("run --help does not offer --like")
	}
}

// A traced program that used one device and never failed is run like on one device, not on every device
// of the platform (faultcl has two).
func TestRunLikeAProgramOfOneDevice(t *testing.T) {
	env := FaultEnv(t)
	dir := t.TempDir()
	if res := runTool(t, traceEnv(env), "trace", "--out", dir, "-q", "--", Traceprog(t), "bench", "10", "4096"); res.code != 0 {
		t.Fatalf("trace: exit %d: %s", res.code, res.stderr)
	}
	r, run, _ := runOut(t, env, "--like", filepath.Join(dir, "trace.json"), "--max-allocs", "5", "--strategies", "shared")
	if run.code != 0 {
		t.Fatalf("run --like: exit %d: %s", run.code, run.stderr)
	}
	if s := strategy(t, r, result.Shared); r.Config.Like == nil || r.Config.Like.Failed || r.Config.Like.ContextDevices != 1 || len(s.Devices) != 1 {
		t.Fatalf("like %+v, shared on devices %v: want one device, as the program's one context had", r.Config.Like, s.Devices)
	}
}
