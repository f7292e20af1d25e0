package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/progress"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// requireOpenCL skips a test that needs an OpenCL runtime, or fails it where CLMEMPROBE_REQUIRE_OPENCL=1.
func requireOpenCL(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CLMEMPROBE_REQUIRE_OPENCL") == "1" {
		t.Fatalf("required by CLMEMPROBE_REQUIRE_OPENCL=1: "+format, args...)
	}
	t.Skipf(format, args...)
}

// testChild is a child run inside the test process, its events kept in a buffer.
type testChild struct {
	*child
	out *bytes.Buffer
}

func newTestChild(t *testing.T, spec wire.Spec) *testChild {
	t.Helper()
	cell, f, err := progress.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(); cell.Close() })
	out := &bytes.Buffer{}
	return &testChild{child: &child{spec: spec, cell: wire.Cell{Cell: cell}, ev: wire.NewEncoder(out), root: sample.System}, out: out}
}

// events are the events the child sent, by kind. A job run without run sends no hello: the decoder is given
// one first, as a child's stream has it.
func (c *testChild) events(t *testing.T) map[wire.EventKind][]wire.Event {
	t.Helper()
	hello := &bytes.Buffer{}
	if err := wire.NewEncoder(hello).SendHello(); err != nil {
		t.Fatal(err)
	}
	d := wire.NewDecoder(io.MultiReader(hello, bytes.NewReader(c.out.Bytes())))
	got := map[wire.EventKind][]wire.Event{}
	for ev, ok := d.Next(); ok; ev, ok = d.Next() {
		got[ev.T] = append(got[ev.T], ev)
	}
	return got
}

// openCL is the library and the first platform with two devices, where this machine has one.
func openCL(t *testing.T) (lib string, platform int) {
	t.Helper()
	if os.Getenv("POCL_DEVICES") == "" {
		t.Setenv("POCL_DEVICES", "pthread pthread")
	}
	lib = cl.ResolveLibraryPath("")
	inv, _, err := newTestChild(t, wire.Spec{Library: lib}).inventory()
	if err != nil {
		requireOpenCL(t, "%v", err)
	}
	for p, pl := range inv {
		if len(pl.Devices) >= 2 {
			return lib, p
		}
	}
	requireOpenCL(t, "no platform with two devices")
	return "", 0
}

// Every strategy and touch runs its loop on the runtime to the budget, with the info, the samples and the
// attribution the loop's mode gives.
func TestStrategiesOnTheRuntime(t *testing.T) {
	lib, platform := openCL(t)
	const count = 40
	for _, c := range []struct {
		name      string
		strategy  result.Strategy
		touch     result.Touch
		perBuffer bool
	}{
		{"shared, create only", result.Shared, result.TouchNone, false},
		{"per-device, fill", result.PerDevice, result.TouchFill, false},
		{"migrate-first, kernel", result.MigrateFirst, result.TouchKernel, false},
		{"shared, fill, per buffer", result.Shared, result.TouchFill, true},
		{"device-list, fill", result.DeviceList, result.TouchFill, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := &wire.StrategySpec{Platform: platform, Devices: []int{0, 1}, Strategy: c.strategy, Size: 64 << 10, Count: count,
				Touch: c.touch, SampleInterval: time.Millisecond, PerBuffer: c.perBuffer}
			tc := newTestChild(t, wire.Spec{Kind: wire.KindStrategy, Library: lib, Strategy: spec})
			ans := tc.runStrategy()
			if c.strategy == result.DeviceList && ans.Outcome == result.OutcomeUnsupported {
				if !strings.Contains(ans.Reason, "CL_MEM_DEVICE_HANDLE_LIST_KHR") && !strings.Contains(ans.Reason, "clCreateBufferWithProperties") {
					t.Errorf("unsupported without saying why: %s", ans.Reason)
				}
				return
			}
			want := wire.AttributionPerBuffer
			if c.touch != result.TouchNone && !c.perBuffer {
				want = wire.AttributionBatched
			}
			if ans.Outcome != result.OutcomeCompleted || ans.AllocationsOK != count || ans.Attribution != want || ans.LoopSeconds <= 0 {
				t.Fatalf("%s after %d (%s), attribution %s; want completed after %d, %s", ans.Outcome, ans.AllocationsOK, ans.Reason,
					ans.Attribution, count, want)
			}
			evs := tc.events(t)
			if len(evs[wire.EventInfo]) != 1 || evs[wire.EventInfo][0].Info.Resources == nil {
				t.Errorf("info events %+v; want one with the ledger", evs[wire.EventInfo])
			}
			if n := len(evs[wire.EventSample]); n < len(forcedSchedule(count)) {
				t.Errorf("%d samples; the forced ones alone are %d", n, len(forcedSchedule(count)))
			}
		})
	}
}

// A strategy whose devices, platform or library are not there fails at set-up, saying which.
func TestStrategySetUpFails(t *testing.T) {
	lib, platform := openCL(t)
	for _, c := range []struct {
		name, library string
		platform      int
		devices       []int
		want          string
	}{
		{"a device that is gone", lib, platform, []int{0, 99}, "device 99 is gone"},
		{"a platform that is gone", lib, 99, []int{0}, "platform 99 is gone"},
		{"no library", "/nonexistent/libOpenCL.so.1", 0, []int{0}, "cannot load the OpenCL library: /nonexistent/libOpenCL.so.1 not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := &wire.StrategySpec{Platform: c.platform, Devices: c.devices, Strategy: result.Shared, Size: 4096, Count: 1}
			ans := newTestChild(t, wire.Spec{Kind: wire.KindStrategy, Library: c.library, Strategy: spec}).runStrategy()
			if ans.Outcome != result.OutcomeFailed || ans.FirstFailure == nil || ans.FirstFailure.Stage != result.StageSetup ||
				ans.Reason != c.want {
				t.Errorf("%s (%s); want failed at set-up: %s", ans.Outcome, ans.Reason, c.want)
			}
		})
	}
	if ans := newTestChild(t, wire.Spec{Kind: wire.KindStrategy}).runStrategy(); ans.Outcome != result.OutcomeFailed {
		t.Errorf("a spec without a strategy: %+v", ans)
	}
}

// The child's run answers each kind of job after a hello, refuses a kind it does not know, and answers a
// limit it cannot set with a failure at set-up.
func TestChildAnswersEachKind(t *testing.T) {
	lib, platform := openCL(t)
	ex := &wire.ExchangeSpec{Platform: platform, Devices: []int{0, 1}, Cells: 256, Halo: 4, Steps: 3, Sync: wire.SyncEvents}
	for _, c := range []struct {
		name string
		spec wire.Spec
		code int
		want string // in the answer
	}{
		{"describe", wire.Spec{Kind: wire.KindDescribe, Library: lib}, exitOK, `"inventory"`},
		{"exchange", wire.Spec{Kind: wire.KindExchange, Library: lib, Exchange: ex}, exitOK, `"correct":true`},
		{"exchange without a spec", wire.Spec{Kind: wire.KindExchange, Library: lib}, exitOK, "no exchange in the spec"},
		{"exchange on a platform that is gone", wire.Spec{Kind: wire.KindExchange, Library: lib, Exchange: &wire.ExchangeSpec{Platform: 99}},
			exitOK, "platform 99 is gone"},
		{"exchange on a device that is gone", wire.Spec{Kind: wire.KindExchange, Library: lib,
			Exchange: &wire.ExchangeSpec{Platform: platform, Devices: []int{0, 99}}}, exitOK, "device 99 is gone"},
		{"a limit the worker does not set", wire.Spec{Kind: wire.KindStrategy, Library: lib,
			Strategy: &wire.StrategySpec{Limits: map[string]uint64{"RLIMIT_STACK": 1}}}, exitOK, "RLIMIT_STACK is not a limit the worker sets"},
		{"an unknown kind", wire.Spec{Kind: "dance"}, exitUsage, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc := newTestChild(t, c.spec)
			if code := tc.run(); code != c.code {
				t.Fatalf("exit code %d, want %d", code, c.code)
			}
			d := wire.NewDecoder(bytes.NewReader(tc.out.Bytes()))
			var res json.RawMessage
			for ev, ok := d.Next(); ok; ev, ok = d.Next() {
				res = ev.Result
			}
			if d.BadLines() != 0 || !strings.Contains(string(res), c.want) {
				t.Errorf("%d bad lines, answer %s; want %q in it", d.BadLines(), res, c.want)
			}
		})
	}
}

// Under the supervisor, the child (this test binary again) answers its job over the protocol.
func TestRunChildUnderTheSupervisor(t *testing.T) {
	lib, _ := openCL(t)
	e, err := supervise.Run(context.Background(), supervise.Child{Spec: wire.Spec{Kind: wire.KindDescribe, Library: lib},
		Limits: supervise.Limits{Setup: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := supervise.Answer[wire.DescribeAnswer](e)
	if err != nil || len(a.Inventory) == 0 || e.BadLines != 0 {
		t.Errorf("answer %s (%v), %d bad lines; want the inventory", e.Answer, err, e.BadLines)
	}
}

// Started by hand, without the protocol's descriptors and spec, the child says what is wrong and exits with
// the usage code. (Which it says depends on what this process has open at 3 and 4 when it starts: nothing,
// for the tool's binary run from a shell; a test binary may hold files there.)
func TestRunChildByHand(t *testing.T) {
	cmd := exec.Command(os.Args[0], wire.ChildCommand, string(wire.KindDescribe))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.HasPrefix(string(out), "clmemprobe") {
		t.Errorf("exit %v, output %q; want exit %d and what the command is for", err, out, exitUsage)
	}
}
