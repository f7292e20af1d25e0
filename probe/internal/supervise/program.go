package supervise

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// Program is a process the tool runs that is not this binary: the user's program under trace. It is
// supervised as a child is: in a process group of its own (a Ctrl-C at the terminal reaches the tool, which
// decides), killed when the tool dies (Pdeathsig, from a thread that outlives it), held in Groups so that
// Abort (a second Ctrl-C) kills it, and ended when the run is interrupted or its time is up: SIGTERM to its
// group, then SIGKILL after Grace, so that a program that ignores SIGTERM and SIGINT still ends.
type Program struct {
	// Cmd is the program, its arguments, environment, descriptors and standard streams; RunProgram sets its
	// SysProcAttr.
	Cmd     *exec.Cmd
	Timeout time.Duration // 0: none
	Grace   time.Duration // from SIGTERM to SIGKILL
	Groups  *Groups
	// Every is how often OnTick runs while the program runs; OnStart runs once, after the start and before
	// the first tick, with the program's pid. Both run on the supervising goroutine.
	Every   time.Duration
	OnStart func(pid int)
	OnTick  func()
}

// ProgramEnd is how a program ended: its wait status, and whether the tool ended it.
type ProgramEnd struct {
	State       *os.ProcessState // nil when its end was not seen
	WaitErr     error
	TimedOut    bool
	Interrupted bool
}

// RunProgram starts the program and supervises it to its end. The error is only for a program that could
// not be started.
//
// The program is started from a goroutine locked to its thread, which then only waits (parked) until the
// program is reaped: the parent-death signal fires when that thread ends. The supervision itself (the
// ticks, the signals) runs on the caller's goroutine, so that a tick every few milliseconds (the trace's
// drain) can run on whichever thread is free instead of waking that one each time.
func RunProgram(ctx context.Context, p Program) (ProgramEnd, error) {
	started := make(chan error, 1)
	reaped := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after the program
		err := startInGroup(p.Cmd, p.Groups)
		started <- err
		if err == nil {
			<-reaped
		}
	}()
	if err := <-started; err != nil {
		return ProgramEnd{}, err
	}
	defer close(reaped)
	return superviseProgram(ctx, p)
}

// superviseProgram waits for the started program while it ticks, and ends its group on timeout or
// interrupt: SIGTERM, then SIGKILL after Grace.
func superviseProgram(ctx context.Context, p Program) (ProgramEnd, error) {
	pgid := p.Cmd.Process.Pid
	defer p.Groups.hold(pgid, false)
	if p.OnStart != nil {
		p.OnStart(pgid)
	}
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	var limit <-chan time.Time
	if p.Timeout > 0 {
		tm := time.NewTimer(p.Timeout)
		defer tm.Stop()
		limit = tm.C
	}
	every := p.Every
	if every <= 0 {
		every = tick
	}
	ticks := time.NewTicker(every)
	defer ticks.Stop()
	var e ProgramEnd
	var kill <-chan time.Time
	end := func() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		kill = time.After(p.Grace)
	}
	for {
		select {
		case err := <-done:
			e.State, e.WaitErr = p.Cmd.ProcessState, err
			if e.TimedOut || e.Interrupted {
				_ = syscall.Kill(-pgid, syscall.SIGKILL) // what the program left of its group goes too
			}
			return e, nil
		case <-ticks.C:
			if p.OnTick != nil {
				p.OnTick()
			}
		case <-limit:
			e.TimedOut, limit = true, nil
			end()
		case <-ctx.Done():
			if !e.Interrupted && !e.TimedOut {
				e.Interrupted = true
				end()
			}
		case <-kill:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			kill = nil
		}
	}
}

// startInGroup starts cmd in a process group of its own, to be killed with SIGKILL when the calling thread
// ends (the caller's goroutine is locked to it and outlives the process), and holds the group in groups.
func startInGroup(cmd *exec.Cmd, groups *Groups) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	groups.hold(cmd.Process.Pid, true)
	return nil
}
