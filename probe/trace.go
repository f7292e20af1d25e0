package probe

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/kernlog"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/trace"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The ways the trace layer is put into a program (TraceRequest.Via).
const (
	TraceViaAuto    = trace.ViaAuto
	TraceViaLayer   = trace.ViaLayer
	TraceViaPreload = trace.ViaPreload
)

// The bounds of a trace's call log (TraceRequest.Calls): the first calls, the last before the first failure,
// the first after it.
const (
	TraceCallsHead   = trace.CallsHead
	TraceCallsBefore = trace.CallsBefore
	TraceCallsAfter  = trace.CallsAfter
)

// TraceVias lists them, for help texts and validation.
var TraceVias = []string{TraceViaAuto, TraceViaLayer, TraceViaPreload}

// TraceRequest is one run of the user's program under the trace layer.
type TraceRequest struct {
	Program string // a path, found already (the command line checks it)
	Args    []string
	Via     string
	Timeout time.Duration // 0: none
	// The program's standard streams, passed to it.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	ToolVersion    string
	// CacheDir is where the layer is built (default: the user's cache, $XDG_CACHE_HOME/clmemprobe).
	CacheDir string
	// Calls keeps a log of the program's calls around its first failure (trace --calls).
	Calls bool
	// NoLedger leaves out the ledger of the program's call sites (trace --ledger off); LedgerSample is the
	// mean bytes between sampled buffers under TraceLedgerWhole (0: every buffer attributed).
	NoLedger     bool
	LedgerSample uint64
}

// The ledger's defaults (TraceRequest.LedgerSample): sampled every 512 KiB on average under 1 MiB, every
// buffer of 1 MiB or more attributed.
const (
	TraceLedgerSample = trace.DefaultLedgerSample
	TraceLedgerWhole  = trace.LedgerWhole
)

// layerError is a layer that cannot be built or used: the machine lacks a compiler or headers, or the cache
// is in a place others can write. It counts as no OpenCL for the exit code (nothing ran).
type layerError struct{ err error }

func (e *layerError) Error() string        { return e.err.Error() }
func (e *layerError) Unwrap() error        { return e.err }
func (e *layerError) Is(target error) bool { return target == ErrNoOpenCL }

// ErrTraceStart is matched by a program that could not be started (not found, not executable).
var ErrTraceStart = errors.New("the program could not be started")

type startError struct{ err error }

func (e *startError) Error() string        { return e.err.Error() }
func (e *startError) Unwrap() error        { return e.err }
func (e *startError) Is(target error) bool { return target == ErrTraceStart }

// Trace builds the layer on first use (into the user's cache), runs the program with it as a supervised
// child in its own process group, and returns what the layer saw and the samples of the program's process.
// The program's crash, hang (past Timeout) or non-zero exit is in the result, not an error; an interrupt
// (ctx) ends the program's group and returns the result so far.
func Trace(ctx context.Context, req TraceRequest) (*result.Trace, error) {
	dir := req.CacheDir
	if dir == "" {
		d, err := trace.CacheDir()
		if err != nil {
			return nil, &layerError{err}
		}
		dir = d
	}
	layer, err := trace.Layer(context.WithoutCancel(ctx), dir)
	if err != nil {
		return nil, &layerError{err}
	}
	groups, end := session(true)
	defer end()
	// NVML is a vendor library: read in a child of the tool, started beside the program (newGPUChild says
	// why not before), and ended with its group when the trace ends.
	gpus := newGPUChild()
	var asked trace.LoaderAnswer
	if req.Via == TraceViaAuto {
		kept, ok := trace.KeptAnswer(dir, layer)
		if asked = kept; !ok {
			asked = askLoader(ctx, layer, groups)
			trace.KeepAnswer(dir, layer, asked)
		}
	}
	way, why := trace.ChooseWay(req.Via, asked)
	klog := kernlog.Start(sample.System)
	// The machine's description is read beside the program, not after it: nothing in it changes while the
	// program runs, and it was the slowest part of a trace's finish (the package database, /proc). It starts
	// once the program has (Started): begun before, its children took the CPU from the tool as it started
	// the program, and the program ran before the tool made it the OOM killer's first choice.
	machine := make(chan *result.Environment, 1)
	besides := func() {
		gpus.start(ctx, trace.DefaultSampleEvery, groups)
		go func() { machine <- Environment("") }()
	}
	t, err := trace.Run(ctx, trace.Spec{Program: req.Program, Args: req.Args, Layer: layer, Via: req.Via, Way: way, WayReason: why, WayKept: asked.Kept,
		Timeout: req.Timeout, Stdin: req.Stdin, Stdout: req.Stdout, Stderr: req.Stderr, GPUs: gpus, Groups: groups, Calls: req.Calls,
		Ledger: !req.NoLedger, LedgerSample: req.LedgerSample, Started: besides, Ended: func() { gpus.firstWord(gpuFirstWord) }})
	gpus.stop()
	if err != nil {
		klog.Close()
		return nil, &startError{err}
	}
	t.KernelLog = klog.End([]int{t.ProgramPID}, []string{filepath.Base(req.Program)})
	t.Tool = result.Tool{Name: result.ToolName, Version: req.ToolVersion}
	t.Environment = <-machine
	return t, nil
}

// loaderSetup bounds asking the ICD loader: loading it and its runtimes, and listing the platforms.
const loaderSetup = 60 * time.Second

// askLoader asks the ICD loader the program would load (libOpenCL.so.1 on the library path) whether it loads
// layers, by doing it: a child of the tool loads it with the layer in OPENCL_LAYERS and lists the platforms,
// and the layer counts its init in a channel of its own. A runtime that crashes or hangs there takes only
// the child.
func askLoader(ctx context.Context, layer string, groups *supervise.Groups) trace.LoaderAnswer {
	a := trace.LoaderAnswer{Library: cl.DefaultLibrary}
	ch, err := trace.NewChannel()
	if err != nil {
		a.Error = err.Error()
		return a
	}
	defer ch.Close()
	e, err := supervise.Run(ctx, supervise.Child{Spec: wire.Spec{Kind: wire.KindLayers, Library: cl.DefaultLibrary},
		Env: trace.LayerEnv(layer, wire.FirstExtraFD), Files: []*os.File{ch.File()}, Limits: Limits{Setup: loaderSetup}, Groups: groups})
	if err != nil {
		a.Error = err.Error()
		return a
	}
	a.Inits = ch.LayerInits()
	ans, err := supervise.Answer[wire.LayersAnswer](e)
	if err != nil {
		a.Fault = supervise.How(err)
		return a
	}
	a.Platforms, a.Error, a.File = ans.Platforms, ans.Error, ans.Loader
	return a
}
