package supervise

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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
	// OOMFirst makes the program the OOM killer's first choice (oom_score_adj 1000, which raising needs no
	// privilege for) as soon as it starts, as the workers make themselves: where its memory cgroup or the
	// machine runs out, the kernel ends the program that allocates, not the tool that records it. (Once the
	// killer's victim is reaped and still exiting, a second kill otherwise found the tool at 0 beside it.)
	OOMFirst bool
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
func RunProgram(ctx context.Context, p Program) (ProgramEnd, error) {
	reaped, err := startLocked(p.Cmd, p.Groups)
	if err != nil {
		return ProgramEnd{}, err
	}
	defer reaped()
	pgid := p.Cmd.Process.Pid
	defer p.Groups.hold(pgid, false)
	if p.OOMFirst {
		// Written microseconds after the exec, long before a runtime has loaded, let alone allocated.
		oomFirst(pgid)
	}
	if p.OnStart != nil {
		p.OnStart(pgid)
	}
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	start := time.Now()
	every := p.Every
	if every <= 0 {
		every = tick
	}
	g := group{pgid: pgid, every: every, grace: p.Grace, check: func(now time.Time) (Cause, string, bool) {
		if p.OnTick != nil {
			p.OnTick()
		}
		if p.Timeout > 0 && now.Sub(start) > p.Timeout {
			return TimedOut, fmt.Sprintf("the program ran longer than %s", p.Timeout), true
		}
		return NotStopped, "", false
	}}
	st, err := g.supervise(ctx, done)
	return ProgramEnd{State: p.Cmd.ProcessState, WaitErr: err, TimedOut: st.cause == TimedOut, Interrupted: st.cause == Interrupted}, nil
}
