package supervise

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The watchdog's verdict at a moment, from what it read of the cell and when.
func TestVerdict(t *testing.T) {
	t0 := time.Now()
	limits := Limits{Setup: 10 * time.Second, Hang: 5 * time.Second, Total: time.Minute}
	for _, c := range []struct {
		name     string
		stage    wire.Stage
		moved    time.Duration // since start, when the count or stage last moved
		resultAt time.Duration // since start, 0: no result yet
		at       time.Duration // since start, when the verdict is asked
		cause    Cause
		kill     bool
	}{
		{"set-up within its time", wire.StageSetup, 0, 0, 9 * time.Second, NotStopped, false},
		{"set-up past its time", wire.StageSetup, 0, 0, 11 * time.Second, Hung, true},
		{"a loop that moves", wire.StageCreate, 20 * time.Second, 0, 24 * time.Second, NotStopped, false},
		{"a loop that stopped moving", wire.StageCreate, 20 * time.Second, 0, 26 * time.Second, Hung, true},
		{"a long set-up is not a hang", wire.StageSetup, 0, 0, 9 * time.Second, NotStopped, false},
		{"done is not a hang", wire.StageDone, 20 * time.Second, 0, 30 * time.Second, NotStopped, false},
		{"past the total time", wire.StageCreate, 61 * time.Second, 0, 61 * time.Second, TimedOut, true},
		{"a result, within the grace", wire.StageDone, 0, 30 * time.Second, 31 * time.Second, NotStopped, false},
		{"a result, past the grace", wire.StageDone, 0, 30 * time.Second, 30*time.Second + exitGrace + time.Millisecond, NotStopped, true},
		{"a result counts before the time limit", wire.StageDone, 0, 59 * time.Second, 62 * time.Second, NotStopped, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &watch{c: &Child{Limits: limits}, start: t0, stage: c.stage, lastMove: t0.Add(c.moved), setupSince: t0}
			if c.resultAt > 0 {
				w.resultAt = t0.Add(c.resultAt)
			}
			cause, why, kill := w.verdict(t0.Add(c.at))
			if cause != c.cause || kill != c.kill || (cause != NotStopped) != (why != "") {
				t.Errorf("%v, %v (%q); want %v, %v", cause, kill, why, c.cause, c.kill)
			}
		})
	}
}

// What moves the watchdog's clock: a new count or a new stage; a return to set-up starts set-up's time
// again.
func TestObserve(t *testing.T) {
	t0 := time.Now()
	w := &watch{start: t0, lastMove: t0, setupSince: t0}
	for _, step := range []struct {
		name             string
		count            uint64
		stage            wire.Stage
		moved, setupFrom bool
	}{
		{"nothing new", 0, wire.StageSetup, false, false},
		{"a stage", 0, wire.StageCreate, true, false},
		{"a count", 1, wire.StageCreate, true, false},
		{"the same again", 1, wire.StageCreate, false, false},
		{"back to set-up", 1, wire.StageSetup, true, true},
	} {
		now := w.lastMove.Add(time.Second)
		before, setupBefore := w.lastMove, w.setupSince
		w.observe(now, step.count, step.stage)
		if (w.lastMove != before) != step.moved || (w.setupSince != setupBefore) != step.setupFrom {
			t.Errorf("%s: moved %v, set-up restarted %v; want %v, %v", step.name, w.lastMove != before, w.setupSince != setupBefore,
				step.moved, step.setupFrom)
		}
	}
}

// host is a fixture host with avail bytes of system memory available and, with a working set ws > 0, in
// the memory cgroup of probe/internal/sample's cgroup-v2 fixture (a Slurm job step, limited to 4 GiB) with
// that working set.
func host(t *testing.T, avail, ws uint64) (sample.Root, *sample.Cgroup) {
	t.Helper()
	dir := t.TempDir()
	if ws > 0 {
		if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "sample", "testdata", "cgroup-v2"))); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, text string) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/meminfo", fmt.Sprintf("MemTotal: %d kB\nMemAvailable: %d kB\n", 64<<20, avail>>10))
	root := sample.Under(dir)
	if ws == 0 {
		return root, nil
	}
	write("sys/fs/cgroup/job_42/step_0/memory.current", fmt.Sprintln(ws))
	write("sys/fs/cgroup/job_42/step_0/memory.stat", "inactive_file 0\n")
	cg, why := sample.FindCgroup(root)
	if cg == nil {
		t.Fatal(why)
	}
	return root, cg
}

// The backstop kills at half the reserve: the system's, or the memory cgroup's (wire.CgroupReserve).
func TestBackstop(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		name      string
		avail, ws uint64
		reserve   uint64
		want      string // the reason, whole; "" for none
	}{
		{"plenty of memory", 8 * gib, 0, gib, ""},
		{"system memory below half the reserve", gib/2 - 1<<20, 0, gib, "host guard: system available memory 511 MiB fell below half the reserve 1 GiB"},
		{"system memory above half the reserve", gib/2 + 1<<20, 0, gib, ""},
		// The cgroup's reserve is a sixteenth of its 4 GiB: 256 MiB, half of it 128 MiB.
		{"a cgroup with room", 8 * gib, 3 * gib, gib, ""},
		{"a cgroup below half its reserve", 8 * gib, 4*gib - 100<<20, gib,
			"host guard: the memory cgroup /job_42/step_0 has 100 MiB free (its limit 4 GiB less its working set), below half its reserve 256 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, cg := host(t, c.avail, c.ws)
			why := (&Child{Root: root, Cgroup: cg, HostReserve: c.reserve}).backstop()
			if why != c.want {
				t.Errorf("%q; want %q", why, c.want)
			}
		})
	}
}

// A child stuck in a call while memory drains past the backstop is stopped by the guard.
func TestTheBackstopStopsAChild(t *testing.T) {
	t.Setenv("FAKE_CHILD", "stuck-in-create")
	root, _ := host(t, 100<<20, 0)
	e, err := Run(context.Background(), Child{Spec: wire.Spec{Kind: "fake"}, Limits: Limits{Setup: time.Minute, Hang: time.Minute},
		Root: root, HostReserve: 1 << 30})
	if err != nil || e.Stop != Guard || !strings.HasPrefix(e.Reason, "host guard") || e.Stop.Outcome() != result.OutcomeStopped {
		t.Errorf("%v, stopped %v (%s); want stopped by the guard", err, e.Stop, e.Reason)
	}
}

func TestCauses(t *testing.T) {
	for _, c := range []struct {
		cause   Cause
		name    string
		outcome result.Outcome
		stop    result.StopCause
	}{
		{NotStopped, "not stopped", "", ""}, {Interrupted, "interrupted", result.OutcomeStopped, result.StopInterrupted},
		{TimedOut, "timed out", result.OutcomeStopped, result.StopTimedOut}, {Hung, "hung", result.OutcomeHung, result.StopHung},
		{Guard, "guard", result.OutcomeStopped, result.StopHostGuard}, {Cause(99), "cause 99", result.OutcomeStopped, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.cause.String() != c.name || c.cause.Outcome() != c.outcome || c.cause.StopCause() != c.stop {
				t.Errorf("%q, %q, %q; want %q, %q, %q", c.cause, c.cause.Outcome(), c.cause.StopCause(), c.name, c.outcome, c.stop)
			}
		})
	}
}
