package supervise

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/progress"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// The supervisor is tested with this test binary as the child: re-executed as `__child KIND`, it plays the
// child that FAKE_CHILD names instead of running a job, so each rule of the protocol is checked on a real
// child process, without OpenCL.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == wire.ChildCommand {
		os.Exit(fakeChild(os.Getenv("FAKE_CHILD")))
	}
	os.Exit(m.Run())
}

// A fault report as the Go runtime prints it for a signal in native code.
const faultReport = "SIGSEGV: segmentation violation\nPC=0x7f00 m=0 sigcode=1 addr=0x0\nsignal arrived during cgo execution\n"

// fakeChild writes what a child of the given behaviour would write on its events descriptor, stores in its
// cell what it would store, and ends as it would.
func fakeChild(behaviour string) int {
	events := os.NewFile(wire.EventsFD, "events")
	cell, err := progress.Map(os.NewFile(wire.CellFD, "progress"))
	if err != nil {
		return 9
	}
	c := wire.Cell{Cell: cell}
	hello := fmt.Sprintf(`{"t":"hello","v":%d}`+"\n", wire.ProtocolVersion)
	res := `{"t":"result","r":{"answer":42}}` + "\n"
	switch behaviour {
	case "garbage":
		fmt.Fprint(events, hello+"this is not json\n{\"t\":\n"+res)
	case "old-protocol":
		fmt.Fprint(events, `{"t":"hello","v":0}`+"\n"+res)
	case "events":
		fmt.Fprint(events, hello+`{"t":"notice","n":"a"}`+"\n"+`{"t":"sample","s":{"index":3}}`+"\n"+res)
	case "slow-exit":
		fmt.Fprint(events, hello+res)
		time.Sleep(time.Minute) // the parent must not wait for this
	case "no-result":
		fmt.Fprint(events, hello)
		fmt.Fprintln(os.Stderr, "pocl: assertion `pool != NULL' failed")
		return 7
	case "fault":
		fmt.Fprint(events, hello)
		c.SetStage(wire.StageCreate)
		c.SetCount(17)
		fmt.Fprint(os.Stderr, "pocl: out of luck\n"+faultReport+"\ngoroutine 1 [syscall]:\n")
		return 2
	case "killed":
		fmt.Fprint(events, hello)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	case "silent-hang":
		fmt.Fprint(events, hello)
		time.Sleep(time.Minute)
	case "stuck-in-create":
		fmt.Fprint(events, hello)
		c.SetStage(wire.StageCreate)
		c.SetCount(5)
		time.Sleep(time.Minute)
	case "busy":
		fmt.Fprint(events, hello)
		c.SetStage(wire.StageCreate)
		for i := uint64(0); ; i++ {
			c.SetCount(i)
			time.Sleep(time.Millisecond)
		}
	}
	return 0
}

// setupTimedOut is the reason of a set-up past its limit of 300 ms.
const setupTimedOut = "set-up (loading the runtime, listing devices, creating contexts, building kernels) did not finish within 300ms (--setup-timeout)"

// want is what a test expects of an ending; zero fields are not checked, but for Stop and the answer.
type want struct {
	answer    string
	stop      Cause
	reason    string // the reason, whole
	badLines  int
	signal    string
	exitCode  int
	printed   string
	how       string // How, whole
	count     uint64
	stage     wire.Stage
	quickerBy time.Duration // supervising must take less
}

func (w want) check(t *testing.T, e *Ending, took time.Duration) {
	t.Helper()
	if string(e.Answer) != w.answer || e.Stop != w.stop || e.Reason != w.reason || e.BadLines != w.badLines {
		t.Errorf("answer %s, stopped %v (%s), %d bad lines; want %s, %v (%q), %d", e.Answer, e.Stop, e.Reason, e.BadLines,
			w.answer, w.stop, w.reason, w.badLines)
	}
	if e.Signal != w.signal || (w.exitCode != 0 && (e.ExitCode == nil || *e.ExitCode != w.exitCode)) || e.Printed != w.printed {
		t.Errorf("signal %q, exit code %v, printed %q; want %q, %d, %q", e.Signal, e.ExitCode, e.Printed, w.signal, w.exitCode, w.printed)
	}
	if (w.how != "" && e.How() != w.how) || (w.count != 0 && e.Count != w.count) || (w.stage != 0 && e.Stage != w.stage) {
		t.Errorf("how %q, count %d, stage %v; want %q, %d, %v", e.How(), e.Count, e.Stage, w.how, w.count, w.stage)
	}
	if w.quickerBy > 0 && took >= w.quickerBy {
		t.Errorf("supervising took %s, want less than %s", took, w.quickerBy)
	}
}

func TestChildEndings(t *testing.T) {
	setup := Limits{Setup: 10 * time.Second}
	for _, c := range []struct {
		name      string
		behaviour string
		child     Child
		want      want
	}{
		{"malformed lines are counted", "garbage", Child{Limits: setup}, want{answer: `{"answer":42}`, badLines: 2}},
		{"another protocol version is not trusted", "old-protocol", Child{Limits: setup}, want{answer: `{"answer":42}`, badLines: 1}},
		// The result completes the job: a child that lingers after it is killed after the grace time, and its
		// outcome is its result, not a hang.
		// (The set-up limit leaves a loaded machine a second to start the child; it lingers longer.)
		{"the result completes the job", "slow-exit", Child{Limits: Limits{Setup: time.Second, Hang: 100 * time.Millisecond}},
			want{answer: `{"answer":42}`, quickerBy: exitGrace + 2*time.Second}},
		{"the result returns at once when asked", "slow-exit", Child{Limits: setup, ReturnAtResult: true},
			want{answer: `{"answer":42}`, quickerBy: exitGrace}},
		{"a child without a result crashed", "no-result", Child{Limits: setup},
			want{reason: "the worker exited with status 7 without reporting a result; it printed: pocl: assertion `pool != NULL' failed", exitCode: 7,
				printed: "pocl: assertion `pool != NULL' failed", how: "failed: the worker exited with status 7 without reporting a result; it printed: pocl: assertion `pool != NULL' failed"}},
		{"a fault in native code is named", "fault", Child{Limits: setup}, want{signal: "SIGSEGV", printed: "pocl: out of luck",
			reason: "the worker faulted with SIGSEGV (segmentation violation at address 0x0, inside a call into the OpenCL runtime); it printed: pocl: out of luck",
			how:    `crashed with SIGSEGV (segmentation violation at address 0x0, inside a call into the OpenCL runtime) after printing "pocl: out of luck"`,
			count:  17, stage: wire.StageCreate}},
		{"a child killed from outside", "killed", Child{Limits: setup}, want{signal: "SIGKILL",
			reason: "the worker was killed by SIGKILL (not by clmemprobe: the kernel's OOM killer is the usual sender; see dmesg)", how: "crashed with SIGKILL"}},
		{"set-up that takes too long", "silent-hang", Child{Limits: Limits{Setup: 300 * time.Millisecond}},
			want{stop: Hung, reason: setupTimedOut, how: "hung: " + setupTimedOut}},
		{"a loop that stops moving", "stuck-in-create", Child{Limits: Limits{Setup: 10 * time.Second, Hang: 300 * time.Millisecond}},
			want{stop: Hung, reason: "watchdog: no progress for 300ms in stage create", how: "hung: watchdog: no progress for 300ms in stage create", count: 5, stage: wire.StageCreate}},
		{"a job past its time", "busy", Child{Limits: Limits{Setup: 10 * time.Second, Hang: time.Minute, Total: 300 * time.Millisecond}},
			want{stop: TimedOut, reason: "timeout: the strategy ran longer than 300ms", how: "failed: timeout: the strategy ran longer than 300ms"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("FAKE_CHILD", c.behaviour)
			c.child.Spec = wire.Spec{Kind: "fake"}
			start := time.Now()
			e, err := Run(context.Background(), c.child)
			if err != nil {
				t.Fatal(err)
			}
			c.want.check(t, e, time.Since(start))
		})
	}
}

// Every event but hello and result reaches OnEvent, in order; OnTick hears the child's count.
func TestEventsAndTicksReachTheCaller(t *testing.T) {
	t.Setenv("FAKE_CHILD", "events")
	var got []wire.EventKind
	e, err := Run(context.Background(), Child{Spec: wire.Spec{Kind: "fake"}, Limits: Limits{Setup: 10 * time.Second},
		OnEvent: func(ev wire.Event) { got = append(got, ev.T) }})
	if err != nil {
		t.Fatal(err)
	}
	if string(e.Answer) != `{"answer":42}` || len(got) != 2 || got[0] != wire.EventNotice || got[1] != wire.EventSample {
		t.Errorf("answer %s, events %v; want the answer after a notice and a sample", e.Answer, got)
	}
	t.Setenv("FAKE_CHILD", "busy")
	ticks := 0
	e, err = Run(context.Background(), Child{Spec: wire.Spec{Kind: "fake"}, Limits: Limits{Setup: 10 * time.Second, Total: 300 * time.Millisecond},
		OnTick: func(count uint64, elapsed time.Duration) { ticks++ }})
	if err != nil || e.Stop != TimedOut || ticks < 2 {
		t.Errorf("%v, stopped %v, %d ticks; want timed out after a few ticks", err, e.Stop, ticks)
	}
}

// A cancelled run stops its child, as interrupted.
func TestInterruptStopsTheChild(t *testing.T) {
	t.Setenv("FAKE_CHILD", "silent-hang")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	e, err := Run(ctx, Child{Spec: wire.Spec{Kind: "fake"}, Limits: Limits{Setup: time.Minute}})
	if err != nil || e.Stop != Interrupted || e.Reason != interruptedReason || e.How() != "was interrupted" {
		t.Errorf("%v, stopped %v (%s), %q; want interrupted", err, e.Stop, e.Reason, e.How())
	}
	if e.Stop.Outcome() != "stopped" {
		t.Errorf("an interrupted job is %q", e.Stop.Outcome())
	}
}

// Groups.Kill ends the children held in it, as a signal from outside would.
func TestGroupsKillEndsTheirChildren(t *testing.T) {
	t.Setenv("FAKE_CHILD", "silent-hang")
	g := &Groups{}
	go func() {
		for {
			g.mu.Lock()
			n := len(g.pgid)
			g.mu.Unlock()
			if n > 0 {
				g.Kill()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	e, err := Run(context.Background(), Child{Spec: wire.Spec{Kind: "fake"}, Limits: Limits{Setup: time.Minute}, Groups: g})
	if err != nil || !e.Crashed() || e.Signal != "SIGKILL" {
		t.Errorf("%v, crashed %v with %q; want killed", err, e.Crashed(), e.Signal)
	}
	if len(g.pgid) != 0 {
		t.Errorf("%d groups held after the child ended", len(g.pgid))
	}
}
