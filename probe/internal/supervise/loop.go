package supervise

import (
	"context"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// group is one process group the tool started, as the one supervision loop sees it: how often to look at
// it, how to end it, and what to check at each look. A child of this binary and a program under trace differ
// only in these values.
type group struct {
	pgid  int
	every time.Duration
	// grace, when set, ends the group gently: SIGTERM, then SIGKILL grace later (the user's program, which
	// may want to clean up); 0 kills at once (a child of this binary, which holds nothing worth a goodbye).
	grace time.Duration
	// check runs every tick; stop ends the group, for cause. NotStopped with stop is an end that is no stop
	// (a child that lingers after its answer): it is recorded as the first, so no later cause replaces it,
	// and the caller, which has the answer, drops it. A time limit checked here is late by up to every.
	check func(now time.Time) (cause Cause, why string, stop bool)
	// answered, when set, closes when the child's answer has come; onAnswer hears when.
	answered <-chan struct{}
	onAnswer func(at time.Time)
}

// stop is why the loop ended a group: the first cause it ended it for.
type stop struct {
	cause Cause
	why   string
	ended bool
}

// supervise runs until the group's leader is reaped (waitDone) and returns why the loop ended it, if it
// did, and the leader's wait error. It ends the group when ctx is done (Interrupted) or when check says so;
// a group it ended gently is killed once more after the leader exits, so that nothing the program left stays.
func (g *group) supervise(ctx context.Context, waitDone <-chan error) (stop, error) {
	t := time.NewTicker(g.every)
	defer t.Stop()
	var st stop
	var kill <-chan time.Time
	end := func(cause Cause, why string) {
		if !st.ended {
			st = stop{cause: cause, why: why, ended: true}
			if g.grace > 0 {
				_ = syscall.Kill(-g.pgid, syscall.SIGTERM)
				kill = time.After(g.grace)
			}
		}
		if g.grace == 0 {
			_ = syscall.Kill(-g.pgid, syscall.SIGKILL)
		}
	}
	interrupted := ctx.Done()
	for {
		select {
		case err := <-waitDone:
			if st.ended && g.grace > 0 {
				// What the program left in its group goes too. A child of this binary got SIGKILL already,
				// and its reaped group's id may be another's soon: it is not signalled again.
				_ = syscall.Kill(-g.pgid, syscall.SIGKILL)
			}
			return st, err
		case <-g.answered:
			g.answered = nil
			g.onAnswer(time.Now())
		case <-interrupted:
			interrupted = nil // heard once: a closed channel would spin the loop
			end(Interrupted, interruptedReason)
		case now := <-t.C:
			if cause, why, ok := g.check(now); ok {
				end(cause, why)
			}
		case <-kill:
			kill = nil
			_ = syscall.Kill(-g.pgid, syscall.SIGKILL)
		}
	}
}

// startLocked starts cmd in a process group of its own, held in groups, to be killed with SIGKILL when the
// thread that started it ends (Pdeathsig): so it starts it from a goroutine locked to its thread that then
// only waits, parked, until reaped is called, after the process has been waited for. The supervision itself
// runs on the caller's goroutine, on whichever thread is free.
func startLocked(cmd *exec.Cmd, groups *Groups) (reaped func(), err error) {
	if groups != nil {
		groups.Decoy.ensure()
	}
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after the process
		err := startInGroup(cmd, groups)
		started <- err
		if err == nil {
			<-done
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return func() { close(done) }, nil
}

// startInGroup starts cmd in a process group of its own, to be killed with SIGKILL when the calling thread
// ends, and holds the group in groups.
func startInGroup(cmd *exec.Cmd, groups *Groups) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	groups.hold(cmd.Process.Pid, true)
	return nil
}
