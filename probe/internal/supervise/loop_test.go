package supervise

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The loop keeps the first cause it ended a group for: a later interrupt does not replace it; a gentle end
// (grace) sends SIGTERM once and waits; an answer is heard once.
func TestTheLoopKeepsTheFirstCause(t *testing.T) {
	terms := filepath.Join(t.TempDir(), "terms")
	cmd := exec.Command("sh", "-c", "trap 'echo TERM >> \"$0\"' TERM; trap '' INT; while :; do sleep 0.05; done", terms)
	done := started(t, cmd)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answered := make(chan struct{})
	close(answered)
	heard, ticks := 0, 0
	const why = "set-up did not finish"
	g := group{pgid: cmd.Process.Pid, every: 5 * time.Millisecond, grace: time.Hour, answered: answered,
		onAnswer: func(time.Time) { heard++ },
		check: func(time.Time) (Cause, string, bool) {
			if heard == 0 {
				return NotStopped, "", false // the steps count from the answer, which the loop takes when it will
			}
			switch ticks++; ticks {
			case 6:
				cancel() // after the stop: it must not become the cause
			default:
				if got, _ := os.ReadFile(terms); ticks >= 12 && len(got) > 0 {
					// The program has heard the SIGTERM; the hour's grace would never end it.
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				}
			}
			return Hung, why, ticks >= 3
		}}
	st, _ := g.supervise(ctx, done)
	if !st.ended || st.cause != Hung || st.why != why || heard != 1 {
		t.Fatalf("ended %v for %v (%q), answer heard %d times; want hung, %q, once", st.ended, st.cause, st.why, heard, why)
	}
	if got, _ := os.ReadFile(terms); string(got) != "TERM\n" {
		t.Errorf("the program heard %q; want one SIGTERM", got)
	}
	if ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the program ended %v; want killed by the SIGKILL, SIGTERM ignored", cmd.ProcessState)
	}
}

// A child's group is killed at once (no grace) when the check says so, and the loop says why.
func TestTheLoopKillsAChildAtOnce(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	done := started(t, cmd)
	g := group{pgid: cmd.Process.Pid, every: 5 * time.Millisecond, check: func(time.Time) (Cause, string, bool) {
		return TimedOut, "timeout", true
	}}
	st, err := g.supervise(context.Background(), done)
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if st.cause != TimedOut || err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("%v, %v, %v; want timed out and SIGKILL", st.cause, err, cmd.ProcessState)
	}
}

// started starts cmd as the loop's processes are started, and gives the channel its wait error comes on.
func started(t *testing.T, cmd *exec.Cmd) <-chan error {
	reaped, err := startLocked(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- cmd.Wait()
		reaped()
	}()
	return done
}
