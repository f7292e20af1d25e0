package probe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// fakeChildEnv names the role this test binary plays when re-executed as a child: empty, the real child
// (RunChild); "hang", a child that says hello and hangs, for Abort.
const fakeChildEnv = "PROBE_TEST_CHILD"

// Re-executed as `__child KIND`, this test binary is the engine's child, as the tool's own binary would be.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ChildCommand {
		if os.Getenv(fakeChildEnv) == "hang" {
			fmt.Fprintf(os.NewFile(wire.EventsFD, "events"), `{"t":"hello","v":%d}`+"\n", wire.ProtocolVersion)
			time.Sleep(time.Minute)
		}
		os.Exit(RunChild(os.Stdin))
	}
	os.Exit(m.Run())
}

// requireOpenCL skips a test that needs an OpenCL runtime, or fails it where CLMEMPROBE_REQUIRE_OPENCL=1.
func requireOpenCL(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CLMEMPROBE_REQUIRE_OPENCL") == "1" {
		t.Fatalf("required by CLMEMPROBE_REQUIRE_OPENCL=1: "+format, args...)
	}
	t.Skipf(format, args...)
}

// openCL describes this machine's runtime and picks its first platform with two devices.
func openCL(t *testing.T) (string, result.Inventory, int) {
	t.Helper()
	if os.Getenv("POCL_DEVICES") == "" {
		t.Setenv("POCL_DEVICES", "pthread pthread")
	}
	lib := LibraryPath("")
	inv, err := Describe(context.Background(), lib, time.Minute)
	if err != nil {
		requireOpenCL(t, "%v", err)
	}
	for p, pl := range inv {
		if len(pl.Devices) >= 2 {
			return lib, inv, p
		}
	}
	requireOpenCL(t, "no platform with two devices")
	return "", nil, 0
}

// recorder is an Observer that keeps what it heard.
type recorder struct {
	mu                               sync.Mutex
	started, jobs, samples, progress int
	done                             []int // the strategies in the run at each JobDone
}

func (r *recorder) RunStarted(*result.Run) { r.mu.Lock(); r.started++; r.mu.Unlock() }
func (r *recorder) JobStarted(Job)         { r.mu.Lock(); r.jobs++; r.mu.Unlock() }
func (r *recorder) Progress(Progress)      { r.mu.Lock(); r.progress++; r.mu.Unlock() }
func (r *recorder) Sample(Job, *result.Sample) {
	r.mu.Lock()
	r.samples++
	r.mu.Unlock()
}
func (r *recorder) JobDone(_ Job, run *result.Run) {
	r.mu.Lock()
	r.done = append(r.done, len(run.Jobs))
	r.mu.Unlock()
}

// A run of two strategies under two variants on the runtime: every job completes its budget, with its
// samples and a fitted cost, and the observer hears each step.
func TestRunOnTheRuntime(t *testing.T) {
	lib, inv, platform := openCL(t)
	p := Plan{Library: lib, Platform: platform, Devices: []int{0, 1}, Strategies: []result.Strategy{result.Shared, result.PerDevice},
		Sizes: []uint64{64 << 10}, MaxAllocs: 40, Touch: result.TouchFill, Limits: Limits{Setup: time.Minute, Hang: time.Minute},
		SampleInterval: time.Millisecond, Variants: []result.Variant{{}, {Name: "nofile", Settings: map[string]string{"RLIMIT_NOFILE": "hard",
			"FAULTCL_LOG": "1"}}}, Command: []string{"clmemprobe", "run"}, ToolVersion: "test"}
	obs := &recorder{}
	run, err := Run(context.Background(), p, inv, obs)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Jobs) != 4 || run.Partial || run.Config.Attribution != AttributionBatched || len(run.Devices) != 2 {
		t.Fatalf("%d strategies, partial %v, attribution %s, %d devices; want 4 whole, batched, 2", len(run.Jobs), run.Partial,
			run.Config.Attribution, len(run.Devices))
	}
	for _, s := range run.Jobs {
		if s.Outcome != result.OutcomeCompleted || s.AllocationsOK != 40 || s.Attribution != AttributionBatched || !s.Fit.OK ||
			s.LoopStarted == "" || s.Resources == nil {
			t.Errorf("%s %s: %s after %d (%s), attribution %s, fit %+v", s.Strategy, s.Variant, s.Outcome, s.AllocationsOK, s.Reason,
				s.Attribution, s.Fit)
		}
	}
	if obs.started != 1 || obs.jobs != 4 || obs.samples < 4*result.FitMinSamples || fmt.Sprint(obs.done) != "[1 2 3 4]" {
		t.Errorf("observer: %d runs, %d jobs, %d samples, done %v", obs.started, obs.jobs, obs.samples, obs.done)
	}
	if run.StartupSeconds <= 0 || run.ParentPeakRSSBytes == 0 || run.Ended == "" {
		t.Errorf("startup %v s, parent peak %d, ended %q", run.StartupSeconds, run.ParentPeakRSSBytes, run.Ended)
	}
}

// A cancelled run stops before its next job and returns what it has, marked partial, with the context's
// error.
func TestRunInterrupted(t *testing.T) {
	lib, inv, platform := openCL(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := Plan{Library: lib, Platform: platform, Devices: []int{0}, Strategies: []result.Strategy{result.Shared}, Sizes: []uint64{4096},
		MaxAllocs: 10, Limits: Limits{Setup: time.Minute}, PerBuffer: true}
	run, err := Run(ctx, p, inv, nil)
	if !errors.Is(err, context.Canceled) || !run.Partial || len(run.Jobs) != 0 || run.Config.Attribution != AttributionPerBuffer {
		t.Errorf("%v, partial %v, %d strategies, attribution %s", err, run.Partial, len(run.Jobs), run.Config.Attribution)
	}
}

// A library that is not there is no OpenCL, for listing the devices and for the exchange alike.
func TestNoLibraryIsNoOpenCL(t *testing.T) {
	const missing = "/nonexistent/libOpenCL.so.1"
	if _, err := Describe(context.Background(), missing, time.Minute); !errors.Is(err, ErrNoOpenCL) || errors.Is(err, ErrChildFault) {
		t.Errorf("Describe: %v", err)
	}
	r := ExchangeRequest{Devices: []int{0, 1}, Cells: 64, Halo: 2, Steps: 2, Sync: SyncEvents}
	if _, err := Exchange(context.Background(), missing, r, Limits{Setup: time.Minute}); !errors.Is(err, ErrNoOpenCL) {
		t.Errorf("Exchange: %v", err)
	}
	r.Sync = "sometimes"
	if _, err := Exchange(context.Background(), missing, r, Limits{}); err == nil || err.Error() != `--sync "sometimes": choose events or none` {
		t.Errorf("an invalid request: %v", err)
	}
}

// The exchange on the runtime: every step verified.
func TestExchangeOnTheRuntime(t *testing.T) {
	lib, _, platform := openCL(t)
	r := ExchangeRequest{Platform: platform, Devices: []int{0, 1}, Cells: 1024, Halo: 8, Steps: 6, VerifyEvery: 2, Sync: SyncEvents,
		BenchBytes: 4096, BenchReps: 1}
	ex, err := Exchange(context.Background(), lib, r, Limits{Setup: time.Minute, Hang: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !ex.Verified || !ex.Correct || len(ex.Checks) != 3 || len(ex.Paths) != 6 {
		t.Errorf("verified %v, correct %v, %d checks, %d paths; want 3 checks and 3 paths at 2 sizes", ex.Verified, ex.Correct,
			len(ex.Checks), len(ex.Paths))
	}
	r.Devices = []int{0, 99}
	if _, err := Exchange(context.Background(), lib, r, Limits{Setup: time.Minute}); !errors.Is(err, ErrNoOpenCL) || err.Error() != "no OpenCL: device 99 is gone" {
		t.Errorf("a device that is gone: %v", err)
	}
}

// Abort ends the children of every call in flight: a child that hangs in set-up is a fault of the runtime.
func TestAbortEndsTheChildren(t *testing.T) {
	t.Setenv(fakeChildEnv, "hang")
	described, aborting := make(chan struct{}), make(chan struct{})
	go func() {
		// Again and again until Describe returns: an Abort before the child's group is held kills nothing.
		defer close(aborting)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-described:
				return
			case <-tick.C:
				Abort()
			}
		}
	}()
	_, err := Describe(context.Background(), cl.DefaultLibrary, time.Minute)
	close(described)
	<-aborting // no Abort of this test's may reach the next test's children
	if !errors.Is(err, ErrChildFault) || !errors.Is(err, ErrNoOpenCL) || err.Error() != "the OpenCL runtime crashed with SIGKILL, listing platforms and devices" {
		t.Errorf("%v; want a child killed while listing the devices", err)
	}
	if len(sessions.live) != 0 {
		t.Errorf("%d sessions left", len(sessions.live))
	}
}

// The engine does not write into its inputs: a run made with the caller's environment lists the
// inventory's platforms in its own copy and leaves the caller's as it was.
func TestNewRunLeavesTheCallersEnvironment(t *testing.T) {
	mine := &result.Environment{Hostname: "box", Platforms: []result.Platform{{Name: "earlier"}}}
	inv := result.Inventory{{Platform: result.Platform{Name: "listed"}}}
	p := Plan{Environment: mine, Sizes: []uint64{1 << 20}}
	r := newRun(&p, p.hostRoot(), inv)
	if len(mine.Platforms) != 1 || mine.Platforms[0].Name != "earlier" {
		t.Errorf("the caller's environment now lists %+v; want only its own platform", mine.Platforms)
	}
	if r.Environment == mine || len(r.Environment.Platforms) != 2 || r.Environment.Platforms[1].Name != inv[0].Name ||
		r.Environment.Hostname != mine.Hostname {
		t.Errorf("the run's environment is %+v; want a copy of the caller's with the inventory's platform added", r.Environment)
	}
}
