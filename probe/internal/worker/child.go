// Package worker is the child's side of the engine: the process the engine starts (this binary again) for
// every call into an OpenCL runtime. RunChild reads the spec, runs the job (a strategy's allocation loop,
// the listing of platforms and devices, the halo exchange) and streams its events to the parent, storing
// its progress in the shared cell after every step. The allocation loop, its host guard, the worker's
// process limits and its resource ledger live here; trace's GPU memory child, which it also dispatches,
// lives in package gpumem.
//
// It imports the protocol (wire), the binding (cl), the samplers and the result model, and nothing that
// renders: go list -deps of this package holds nothing of report/.
package worker

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/gpumem"
	"github.com/clmemprobe/clmemprobe/probe/internal/progress"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// Exit codes of a child. The parent reads the answer, not the code: these tell a person running a child
// by hand what went wrong.
const (
	exitOK       = 0
	exitUsage    = 2 // not started by the engine, or a spec this build does not speak
	exitNoParent = 3 // the events stream is gone: nobody reads the answer
)

// child is what every kind of job has: its spec, the progress cell, the event stream, the host it reads
// (the real one, or a fixture in tests) and, once opened, the library.
type child struct {
	spec wire.Spec
	cell wire.Cell
	ev   *wire.Encoder
	root sample.Root
	lib  *cl.Library
	// oomScoreAdj is the file that makes this process the OOM killer's first choice; "" (a child run inside
	// a test) leaves it alone.
	oomScoreAdj string
}

// RunChild is the child process: it reads its spec, runs the job and streams events to the parent. It
// returns the process exit code. Whatever the runtime does to this process (crash, hang, OOM kill), the
// parent learns how far it got from the progress cell.
func RunChild(stdin io.Reader) int {
	if isDecoy(os.Args) {
		return runDecoy(stdin)
	}
	// First of all, before the runtime can start helper processes: the protocol's descriptors are this
	// process's alone. A helper that inherited them would keep the parent waiting for their end.
	for _, fd := range []int{wire.EventsFD, wire.CellFD} {
		if _, err := fcntl(fd, syscall.F_SETFD, syscall.FD_CLOEXEC); err != nil {
			fmt.Fprintln(os.Stderr, "clmemprobe: this hidden command is started by clmemprobe itself, not by hand")
			return exitUsage
		}
	}
	c := &child{ev: wire.NewEncoder(os.NewFile(wire.EventsFD, "events")), root: sample.System, oomScoreAdj: "/proc/self/oom_score_adj"}
	cellFile := os.NewFile(wire.CellFD, "progress")
	cell, err := progress.Map(cellFile)
	// The mapping outlives the descriptor. Closed now, not by the garbage collector at a moment of its own:
	// that would move the worker's descriptor count in the middle of a loop that a descriptor limit ends.
	_ = cellFile.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "clmemprobe child:", err)
		return exitUsage
	}
	c.cell = wire.Cell{Cell: cell}
	if c.spec, err = wire.ReadSpec(stdin); err != nil {
		fmt.Fprintln(os.Stderr, "clmemprobe child:", err)
		return exitUsage
	}
	return c.run()
}

// run runs the job of the spec and sends its answer.
func (c *child) run() int {
	// The job's limits, before this process opens anything more and before the runtime loads (which may size
	// its tables by them): the user's descriptor limit, which this process's Go runtime raised as it started,
	// and a variant's. A limit that cannot be set is the job's answer, at set-up.
	var limitErr error
	if c.spec.Strategy != nil {
		limitErr = setLimits(c.spec.Strategy.Limits)
	}
	if c.ev.SendHello() != nil {
		return exitNoParent
	}
	// If memory runs out, the kernel's OOM killer should pick this process, not the parent holding the data.
	if c.oomScoreAdj != "" {
		_ = os.WriteFile(c.oomScoreAdj, []byte(wire.OOMScoreFirst), 0)
	}
	c.cell.SetStage(wire.StageSetup)
	var answer any
	switch c.spec.Kind {
	case wire.KindStrategy:
		if limitErr != nil {
			answer = limitFailure(limitErr)
		} else {
			answer = c.runStrategy()
		}
	case wire.KindDescribe:
		answer = c.describe()
	case wire.KindExchange:
		answer = c.exchange()
	case wire.KindGPUMemory:
		answer = gpumem.Run(gpumem.Job{Spec: c.spec.GPUMemory, Cell: c.cell, Send: c.ev.Send})
	case wire.KindLayers:
		answer = c.askLayers()
	case wire.KindICD:
		answer = c.loadICD()
	case wire.KindLargestTry:
		answer = c.largestTry()
	default:
		fmt.Fprintf(os.Stderr, "clmemprobe child: unknown kind %q\n", c.spec.Kind)
		return exitUsage
	}
	c.cell.SetStage(wire.StageDone)
	if err := c.ev.SendResult(answer); err != nil {
		return exitNoParent
	}
	return exitOK
}

// open loads the OpenCL library in the child.
func (c *child) open() error {
	lib, err := cl.Open(c.spec.Library)
	c.lib = lib
	return err
}

func fcntl(fd int, cmd int, arg int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), uintptr(arg))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
