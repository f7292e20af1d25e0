package supervise

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A program that ignores SIGTERM is killed Grace after its time is up; one the run interrupts gets SIGTERM
// first; its group is held in Groups while it runs, so that Kill (the engine's Abort) ends it at once.
func TestRunProgramEndsWhatIgnoresSIGTERM(t *testing.T) {
	ignoring := func() *exec.Cmd { return exec.Command("sh", "-c", "trap '' TERM INT; while :; do sleep 0.05; done") }
	start := time.Now()
	e, err := RunProgram(context.Background(), Program{Cmd: ignoring(), Timeout: 200 * time.Millisecond, Grace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := e.State.Sys().(syscall.WaitStatus)
	if !e.TimedOut || !ws.Signaled() || ws.Signal() != syscall.SIGKILL || time.Since(start) < 500*time.Millisecond {
		t.Fatalf("end %+v after %s: want timed out and SIGKILL after timeout plus grace", e, time.Since(start))
	}
	var g Groups
	ticks := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e, err = RunProgram(ctx, Program{Cmd: ignoring(), Grace: time.Hour, Groups: &g, Every: 10 * time.Millisecond,
		OnTick: func() {
			if ticks++; ticks == 5 {
				cancel() // SIGTERM, ignored; the hour's grace would never end it
			}
			if ticks == 10 {
				g.Kill() // what a second Ctrl-C does
			}
		}})
	if err != nil || !e.Interrupted || e.State == nil || e.State.ExitCode() != -1 {
		t.Fatalf("interrupted then killed: %+v, %v", e, err)
	}
	if _, err := RunProgram(context.Background(), Program{Cmd: exec.Command("/nonexistent/program")}); err == nil {
		t.Fatal("a program that cannot start must be an error")
	}
}
