package trace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Via says how the layer is put into the program.
const (
	ViaAuto    = "auto"    // one way: the loader's layers where it loads them (the tool asks it), LD_PRELOAD where not
	ViaLayer   = "layer"   // OPENCL_LAYERS only
	ViaPreload = "preload" // LD_PRELOAD only
)

// Spec is one traced run of a program.
type Spec struct {
	Program string
	Args    []string
	// Env is the program's environment (nil: this process's); the layer's variables are added to it.
	Env   []string
	Layer string // the built layer's path
	// Via is what the user asked for; Way the one way the layer goes in (result.WayLayer or
	// result.WayPreload), and WayReason why; WayKept says the loader's answer was kept from an earlier trace.
	Via, Way, WayReason string
	WayKept             bool
	// Groups holds the program's process group while it runs, so that the engine's Abort ends it.
	Groups *supervise.Groups
	// Timeout bounds the program's run; 0 is none. At the end its process group is ended.
	Timeout time.Duration
	// The program's standard streams: passed to it as they are, so it sees the terminal it would.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// SampleEvery is the host sampling period (default 100 ms).
	SampleEvery time.Duration
	Root        sample.Root
	// GPUs is NVML's reading of the GPUs, from a child of the tool; nil leaves only the program's DRM
	// fdinfo counters for device memory.
	GPUs GPUSource
	// Calls keeps the log of the program's calls (trace --calls).
	Calls bool
	// Ledger attributes the program's buffers to their call sites, sampling those under LedgerWhole at a mean
	// of LedgerSample bytes apart (0: every buffer).
	Ledger       bool
	LedgerSample uint64
	// Started runs once the program has started and has been made the OOM killer's first choice (nil:
	// nothing): work that can run beside the program starts there, not before, so that it takes no CPU
	// from the tool while it starts the program.
	Started func()
	// Ended runs once the program has ended and its last sample is taken, before the trace is made (nil:
	// nothing): a source still starting (the GPU memory child) can give its last word, which says why no
	// sample had its figures, without a reading taken after the program counting as the program's.
	Ended func()
}

// DefaultSampleEvery is the sampling period where the spec names none: the GPU memory child reads at it.
const DefaultSampleEvery = 100 * time.Millisecond

// termGrace is how long a program stopped by timeout or interrupt has after SIGTERM before SIGKILL.
const termGrace = 2 * time.Second

// drainEvery is how often the ring is read: well inside the time the fastest create loop seen takes to fill
// 64 Ki records (see docs/performance.md#measurements-behind-comments-in-the-code).
const drainEvery = 2 * time.Millisecond

// Run runs the program with the layer and returns what the layer and the samples saw, whatever the program
// did: exited, crashed, hung past the timeout or was interrupted (ctx). The program is supervised as the
// tool's workers are (supervise.RunProgram). The error is only for a program that could not be started, or a
// channel that could not be made.
func Run(ctx context.Context, spec Spec) (*result.Trace, error) {
	ch, err := NewChannel()
	if err != nil {
		return nil, err
	}
	defer ch.Close()
	if spec.Calls {
		ch.LogCalls()
	}
	if spec.Ledger {
		ch.Ledger(spec.LedgerSample, LedgerWhole)
	}
	cmd := exec.Command(spec.Program, spec.Args...)
	cmd.Env = environ(spec)
	cmd.ExtraFiles = []*os.File{ch.File()} // descriptor 3 in the program
	cmd.Stdin, cmd.Stdout, cmd.Stderr = spec.Stdin, spec.Stdout, spec.Stderr
	// A helper the program left behind may hold its output pipes (when they are not files): bounded.
	cmd.WaitDelay = time.Second
	root := spec.Root
	if root.Proc == "" {
		root = sample.System
	}
	var c *collector
	pid := 0
	started := time.Now()
	end, err := supervise.RunProgram(ctx, supervise.Program{Cmd: cmd, Timeout: spec.Timeout, Grace: termGrace, Groups: spec.Groups,
		Every: drainEvery, OnTick: func() { c.tick() }, OOMFirst: true,
		OnStart: func(p int) {
			pid = p
			c = newCollector(ch, spec, started)
			c.attach(root, p, spec.GPUs)
			if spec.Started != nil {
				spec.Started()
			}
		}})
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", spec.Program, err)
	}
	c.finish()
	ended := time.Now() // the trace's time is the program's, not the wait below
	if spec.Ended != nil {
		spec.Ended()
	}
	t := c.trace(spec, end, started, ended)
	t.ProgramPID = pid
	if spec.Ledger {
		t.Ledger = ch.ledger(spec.LedgerSample, LedgerWhole)
	}
	return t, nil
}

// environ is the program's environment with the layer's variables: the channel's descriptor, and the layer
// appended to OPENCL_LAYERS (the loader calls the last one first, so it sees what the program asked) and put
// first in LD_PRELOAD.
func environ(spec Spec) []string {
	base := spec.Env
	if base == nil {
		base = os.Environ()
	}
	var env []string
	layers, preload := "", ""
	for _, kv := range base {
		switch {
		case strings.HasPrefix(kv, "OPENCL_LAYERS="):
			layers = strings.TrimPrefix(kv, "OPENCL_LAYERS=")
		case strings.HasPrefix(kv, "LD_PRELOAD="):
			preload = strings.TrimPrefix(kv, "LD_PRELOAD=")
		case strings.HasPrefix(kv, "CLMEMPROBE_TRACE_FD="):
		default:
			env = append(env, kv)
		}
	}
	switch spec.Way {
	case result.WayLayer:
		layers = join(layers, spec.Layer, ":")
	case result.WayPreload:
		preload = join(spec.Layer, preload, ":")
	}
	for k, v := range map[string]string{"OPENCL_LAYERS": layers, "LD_PRELOAD": preload} {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "CLMEMPROBE_TRACE_FD=3")
}

func join(a, b, sep string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + sep + b
}

// describe is the program's end in words, with its exit code or signal.
func describe(e supervise.ProgramEnd) result.TraceExit {
	x := result.TraceExit{TimedOut: e.TimedOut, Interrupted: e.Interrupted}
	st := e.State
	if st == nil {
		x.Description = "its end was not seen: " + errString(e.WaitErr)
		return x
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		x.Signal = supervise.SignalName(ws.Signal())
		x.Description = "was killed by " + x.Signal
		if ws.CoreDump() {
			x.Description += " (core dumped)"
		}
	default:
		code := st.ExitCode()
		x.Code = &code
		x.Description = "exited with status " + strconv.Itoa(code)
	}
	switch {
	case e.TimedOut:
		x.Description += ", ended by clmemprobe at --timeout"
	case e.Interrupted:
		x.Description += ", ended by clmemprobe when interrupted"
	}
	return x
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.String()
	}
	return err.Error()
}
