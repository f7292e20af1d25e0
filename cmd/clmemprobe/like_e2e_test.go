package main

import (
	"fmt"
	"os"
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
	r, run, runDir := runOut(t, env, "--like", filepath.Join(dir, "trace.json"), "--max-allocs", "400", "--strategies", "shared,per-device")
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
	followTheBundlesRunAgain(t, env, runDir, r)
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

// followTheBundlesRunAgain follows the "run the whole probe again" step of the bundle of run --like's result
// where its receiver would: in a folder of its own, with bin/clmemprobe and nothing of the user's (no
// trace). It runs, and asks what the run did: the program's size, on as many devices, shared failing at the
// same buffer. Before, the step was "run --like s1/trace1 ...", and failed with exit 2 there.
func followTheBundlesRunAgain(t *testing.T, env []string, runDir string, r *result.Run) {
	t.Helper()
	readme := bundleFiles(t, env, runDir)["README.md"]
	_, step, ok := strings.Cut(readme, "To run the whole probe again")
	if !ok {
		t.Fatalf("the bundle's README has no step to run again:\n%s", readme)
	}
	_, block, _ := strings.Cut(step, "```sh\n")
	line, _, _ := strings.Cut(block, "\n")
	if strings.Contains(line, "--like") {
		t.Errorf("the step names the user's trace: %s", line)
	}
	there := t.TempDir()
	if err := os.Mkdir(filepath.Join(there, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(Binary(t), filepath.Join(there, "bin", "clmemprobe")); err != nil {
		t.Fatal(err)
	}
	res := runToolVia(t, env, "/bin/sh", "-c", "cd \"$1\" && "+line+" --out again -q", "sh", there)
	if res.code != 0 {
		t.Fatalf("%s: exit %d: %s", line, res.code, res.stderr)
	}
	again, err := result.Load(filepath.Join(there, "again", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if again.Config.SizeBytes != r.Config.SizeBytes || !slices.Equal(again.Config.Sizes, r.Config.Sizes) || !slices.Equal(again.Config.Devices, r.Config.Devices) || len(r.Config.Devices) != 2 {
		t.Errorf("run again: sizes %v on devices %v, want the --like run's %v on %v", again.Config.Sizes, again.Config.Devices, r.Config.Sizes, r.Config.Devices)
	}
	first, second := strategy(t, r, result.Shared).FirstFailure, strategy(t, again, result.Shared).FirstFailure
	if first == nil || second == nil || first.Index != second.Index {
		t.Errorf("shared's first failure %+v, run again %+v: want the same buffer", first, second)
	}
}
