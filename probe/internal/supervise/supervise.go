// Package supervise is the parent's side of a child process: it starts this binary again as a child, hands
// it its spec and descriptors, reads its events, watches its progress cell against the time limits and the
// host-memory backstop, ends it (its whole process group) when it must, and says how it ended: its answer,
// or why it was stopped, or how it crashed.
package supervise

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/progress"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// Limits bound the time a child may take.
type Limits struct {
	// Setup bounds loading the runtime, enumerating, creating contexts and queues and building kernels.
	Setup time.Duration
	// Hang bounds the time a loop may go without progress (no buffer done, no stage entered).
	Hang time.Duration
	// Total bounds one strategy from start to end; 0 is no bound.
	Total time.Duration
}

// exitGrace is how long a child may take to exit once it has sent its result; then its process group is
// killed. Its result stands either way.
const exitGrace = 2 * time.Second

// outputDrain is how long the parent reads a child's output pipes after the child exited, when something
// else (a detached helper of the runtime) still holds them open.
const outputDrain = 250 * time.Millisecond

// Child is one child to run and how.
type Child struct {
	Spec wire.Spec
	// Env is added to this process's environment for the child: a variant's settings, logging variables.
	Env    []string
	Limits Limits
	// HostReserve, when set, is the backstop for the child's own host guard: at half of it the parent
	// kills a child that is stuck in a call while memory drains. Root is where the backstop reads memory.
	HostReserve uint64
	Root        sample.Root
	// Cgroup, when the tool runs in a memory cgroup with a limit, is watched the same way: at half the
	// cgroup's reserve (wire.CgroupReserve) the parent kills the child.
	Cgroup *sample.Cgroup
	// OnEvent hears every event but hello and result, from the reading goroutine.
	OnEvent func(wire.Event)
	// OnTick is called every tick with the cell's count and how long the child has run.
	OnTick func(count uint64, elapsed time.Duration)
	// ReturnAtResult returns the child's result as soon as it arrives, while the child's exit (a runtime's
	// teardown) is supervised in the background: for a child whose work is only its answer (listing the
	// devices), not for a worker, whose memory the next job must find freed.
	ReturnAtResult bool
	// Groups, when set, holds the child's process group while it runs, so that Groups.Kill can end it.
	Groups *Groups
	// Files are descriptors the child gets after the protocol's own, from wire.FirstExtraFD on.
	Files []*os.File
}

// Ending is how a child ended.
type Ending struct {
	Kind     wire.Kind       // the child's kind of job, which Answer's errors name it by
	Answer   json.RawMessage // the child's result, nil when it sent none; Answer decodes it
	Stop     Cause           // why the parent stopped it, NotStopped when it did not
	Reason   string          // why it was stopped, or how it died
	Signal   string          // the signal that ended it, when it crashed
	Detail   string          // what the Go runtime said of the fault ("segmentation violation at address 0x0")
	Printed  string          // the last line the runtime printed before it died, if any
	ExitCode *int            // its exit status, when it crashed without a signal
	Output   string          // the head and tail of what it printed
	Count    uint64          // the cell's count at the end
	// Confirmed is the cell's confirmed count at the end, where the child keeps one (HasConfirmed).
	Confirmed    uint64
	HasConfirmed bool
	Stage        wire.Stage // the cell's stage at the end
	Took         time.Duration
	BadLines     int // event lines that did not parse
	PID          int // the child's process id, which the kernel's log names it by
}

// Crashed reports whether the child died without a result and without being stopped by the parent.
func (e *Ending) Crashed() bool { return e.Answer == nil && e.Stop == NotStopped }

// Groups are the process groups of the children running now. The zero value is empty and ready.
type Groups struct {
	mu   sync.Mutex
	pgid map[int]bool
	// Decoy, when set, is started before each child where none is running: the OOM killer's second choice
	// after a child that ran out, ahead of the tool (Decoy says why).
	Decoy *Decoy
}

// Kill kills every process group held.
func (g *Groups) Kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for pgid := range g.pgid {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

func (g *Groups) hold(pgid int, live bool) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.pgid == nil {
		g.pgid = map[int]bool{}
	}
	if live {
		g.pgid[pgid] = true
	} else {
		delete(g.pgid, pgid)
	}
}

// Run runs a child to its end; with ReturnAtResult, to its answer, while its exit goes on being supervised.
func Run(ctx context.Context, c Child) (*Ending, error) {
	type answer struct {
		e   *Ending
		err error
	}
	ch := make(chan answer, 2)
	go func() {
		e, err := runChild(ctx, c, func(res json.RawMessage) {
			if c.ReturnAtResult {
				ch <- answer{&Ending{Answer: res, Kind: c.Spec.Kind}, nil}
			}
		})
		ch <- answer{e, err}
	}()
	a := <-ch
	return a.e, a.err
}

// process is a started child: its command, its progress cell, the read end of its events pipe, and what
// it prints.
type process struct {
	cmd      *exec.Cmd
	cell     wire.Cell
	cellFile *os.File
	events   *os.File
	out      *outputBuffer
	start    time.Time
	reaped   func() // ends the thread that started it, once it has been waited for
}

// close releases what the parent holds of the child once it is over.
func (p *process) close() {
	_ = p.events.Close()
	_ = p.cellFile.Close()
	_ = p.cell.Close()
	p.reaped()
}

// start starts the child with its spec on its standard input and the events pipe and the progress cell
// on the protocol's descriptors.
func start(c *Child) (*process, error) {
	c.Spec.Protocol = wire.ProtocolVersion
	specJSON, err := json.Marshal(c.Spec)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find this program to start a child process: %w", err)
	}
	cell, cellFile, err := progress.Create("")
	if err != nil {
		return nil, err
	}
	evR, evW, err := os.Pipe()
	if err != nil {
		cell.Close()
		cellFile.Close()
		return nil, fmt.Errorf("child pipe: %w", err)
	}
	defer evW.Close() // the child's copy is all that must stay open
	p := &process{cell: wire.Cell{Cell: cell}, cellFile: cellFile, events: evR, out: &outputBuffer{}}
	// The kind rides in the arguments too, so ps shows what each child does.
	p.cmd = exec.Command(exe, wire.ChildCommand, string(c.Spec.Kind))
	if len(c.Env) > 0 {
		p.cmd.Env = append(os.Environ(), c.Env...)
	}
	p.cmd.Stdin = bytes.NewReader(specJSON)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.ExtraFiles = append([]*os.File{evW, cellFile}, c.Files...)
	// A helper the runtime started and detached (setsid) may hold the output pipes open after the child
	// exited: what the child wrote is in the pipe already, so a short wait drains it.
	p.cmd.WaitDelay = outputDrain
	p.start = time.Now()
	// Its own process group, so it is killed as a group with any helper the runtime forked and does not get
	// the terminal's Ctrl-C before the parent decides; SIGKILL when the parent's thread dies.
	if p.reaped, err = startLocked(p.cmd, c.Groups); err != nil {
		p.reaped = func() {}
		p.close()
		return nil, fmt.Errorf("cannot start a child process: %w", err)
	}
	return p, nil
}

// runChild starts the child and supervises it to its end: its answer, or why it was stopped, or how it
// crashed. onResult hears the answer as it comes.
func runChild(ctx context.Context, c Child, onResult func(json.RawMessage)) (*Ending, error) {
	p, err := start(&c)
	if err != nil {
		return nil, err
	}
	defer p.close()
	pid := p.cmd.Process.Pid
	defer c.Groups.hold(pid, false)

	e := &Ending{PID: pid, Kind: c.Spec.Kind}
	gotResult := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		e.BadLines = readEvents(p.events, c.OnEvent, func(res json.RawMessage) {
			e.Answer = res
			close(gotResult)
			onResult(res)
		})
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- p.cmd.Wait() }()

	w := newWatch(&c, pid, p.cell, p.start)
	g := group{pgid: pid, every: tick, check: w.check, answered: gotResult, onAnswer: func(at time.Time) { w.resultAt = at }}
	st, waitErr := g.supervise(ctx, waitDone)
	e.Stop, e.Reason = st.cause, st.why
	// The events pipe closes when the child exits (no helper holds it: it is close-on-exec there); give the
	// reader a moment for the last lines, then stop it.
	select {
	case <-readDone:
	case <-time.After(exitGrace):
		p.events.Close()
		<-readDone
	}
	e.Took = time.Since(p.start)
	e.Count, e.Stage = p.cell.Count(), p.cell.Stage()
	e.Confirmed, e.HasConfirmed = p.cell.Confirmed()
	if e.Answer != nil {
		// The result completes the job: whatever happened after it (a slow exit, a kill) changes nothing.
		e.Stop, e.Reason = NotStopped, ""
	}
	e.Output = p.out.String()
	if e.Crashed() {
		describeCrash(e, waitErr)
	}
	return e, nil
}

// readEvents reads a child's events until the stream ends: each but hello and result goes to onEvent, the
// first result to onResult. It returns how many lines were bad.
func readEvents(r *os.File, onEvent func(wire.Event), onResult func(json.RawMessage)) int {
	d := wire.NewDecoder(r)
	answered := false
	for {
		ev, ok := d.Next()
		if !ok {
			return d.BadLines()
		}
		switch ev.T {
		case wire.EventHello:
		case wire.EventResult:
			if !answered {
				answered = true
				onResult(ev.Result)
			}
		default:
			if onEvent != nil {
				onEvent(ev)
			}
		}
	}
}
