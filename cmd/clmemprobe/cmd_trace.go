package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/cmd/clmemprobe/internal/safefile"
	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// traceFile is the file of trace --out.
const traceFile = "trace.json"

// traceOptions are the flags of `trace`.
type traceOptions struct {
	outputOptions               // --output: the rendered trace, instead of stdout
	Timeout       durationValue // 0: no limit
	Out           string        // the folder of trace.json
	Via           choice        // how the layer goes into the program
	LedgerSample  amount
	Force, Calls  bool
	args          []string
}

// traceExitCodes are trace's own meanings of the codes it ends with.
var traceExitCodes = "EXIT CODES:\n" +
	"   0    the program ran and exited by itself, with any status (its status is in the result)\n" +
	"   2    bad input: a flag, no program after --, a program that is not found or not executable, an --out folder in use or holding a result\n" +
	"   3    the trace layer cannot be built: no C compiler or no OpenCL headers (the line says what to install), or its cache is writable by others\n" +
	"   4    the tool could not write its results or its output\n" +
	"   5    the program crashed (killed by a signal) or ran past --timeout and was ended (the result is written)\n" +
	"   130  interrupted with Ctrl-C: the program's process group is ended, the result so far is written"

func traceCommand(stdout, stderr io.Writer) *cli.Command {
	var o traceOptions
	return &cli.Command{
		Name:      "trace",
		Usage:     "run your own OpenCL program under an interception layer and diagnose its allocations",
		ArgsUsage: "-- PROGRAM [ARGS...]",
		Description: `Runs PROGRAM unchanged, with clmemprobe's OpenCL layer loaded into it one way: the ICD loader's layers
(OPENCL_LAYERS) where the loader loads them (the tool asks it first), else LD_PRELOAD; the result says which
and why (way_in). Every call goes on to the runtime, whichever way the program loads OpenCL (linked, dlopen,
a Python or JVM extension, a plugin), and the program sees what it would untraced. The layer
records every context (its devices), every buffer and sub-buffer created (size, flags, context, code), every
failed enqueue and every release into shared memory the tool reads as the program runs; the tool samples the
program's memory and descriptors. The result names the program's first allocation failure (its index in the
program's own sequence of creates, the call, the code, the context and its devices, the live buffers of every
context at that moment), classifies the limit as run does, and says how the program ended.

The layer is C, built on first use with the machine's C compiler (cc, or $CC) into ~/.cache/clmemprobe
($XDG_CACHE_HOME/clmemprobe); it needs gcc and opencl-c-headers. The program's standard input, output and
error are its own (with --format json, give --out to keep the result apart from what the program prints).
A program whose calls went around the layer (a vendor library it opened itself, say) is said so in the
result's first line, with what to try; "did not use OpenCL" only where it mapped no OpenCL library.
Ctrl-C sends the program SIGTERM; a second Ctrl-C kills its process group at once, and the trace is written.

Example:
   clmemprobe trace --timeout 10m --out trace1 -- ./my_solver --grid 4096

` + traceExitCodes,
		Flags: []cli.Flag{
			traceTimeoutFlag(&o.Timeout),
			&cli.StringFlag{Name: "out", Destination: &o.Out, Usage: "folder to write trace.json, timeline.json (for Perfetto and chrome://tracing) and the ledger's pprof profiles (live-at-exit.pb.gz, live-at-failure.pb.gz after a failure) into (created if missing; one trace at a time)"},
			&cli.BoolFlag{Name: "force", Destination: &o.Force, Usage: "replace the trace an --out folder already holds"},
			&cli.BoolFlag{Name: "calls", Destination: &o.Calls, Usage: "keep a log of the program's calls with their arguments and results (commands logged as they are made, so one it is killed in is there): the first " + fmt.Sprint(probe.TraceCallsHead) + ", the last " + fmt.Sprint(probe.TraceCallsBefore) + " up to its first failure and the " + fmt.Sprint(probe.TraceCallsAfter) + " after (the API log of a bug ticket; bundle writes it to api-calls.log)"},
			ledgerFlag(&o.LedgerSample, "the ledger of call sites (which of your functions made each buffer, what each left unreleased): buffers of 1 MiB or more are attributed one by one, smaller ones sampled by bytes, one per this many on average (their sites' figures are then estimates, said so); 0 attributes every buffer (each costs an unwind the first time its stack is seen), off keeps no ledger"),
			choiceFlag(&o.Via, "via", probe.TraceViaAuto, probe.TraceVias, func(s string) error {
				return fmt.Errorf("--via %q%s: choose %s", s, suggestion(s, probe.TraceVias), strings.Join(probe.TraceVias, ", "))
			}, "how the layer goes in: auto (the loader's layers where the loader loads them, else LD_PRELOAD), layer, preload"),
			formatFlag(&o.Format, "table", strings.Join(report.Names(report.KindTrace), ", "), ofKind(report.KindTrace)),
			o.outputFlag("write the --format output (what stdout would get) to this file instead; not --out, the folder of trace.json and timeline.json"),
			o.quietFlag(),
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			return runTrace(c.Context, o, stdout, stderr)
		},
	}
}

// validate checks the rules between trace's flags and its arguments. It has no side effects.
func (o traceOptions) validate() error {
	if len(o.program()) == 0 {
		return usageErr("trace needs a program: clmemprobe trace [FLAGS] -- PROGRAM [ARGS...]")
	}
	if name := resultFileOf(o.Output, o.Out); o.Output != "" && name != "" {
		return usageErr("--output %s is --out's own %s; give the rendered trace another name", o.Output, name)
	}
	return nil
}

// program is the program to trace and its arguments: what follows --.
func (o traceOptions) program() []string {
	if len(o.args) > 0 && o.args[0] == "--" {
		return o.args[1:]
	}
	return o.args
}

// request is the trace the flags ask for, of the program found on PATH.
func (o traceOptions) request() (probe.TraceRequest, error) {
	args := o.program()
	if err := checkOutput("--output", o.Output); err != nil {
		return probe.TraceRequest{}, err
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return probe.TraceRequest{}, usageErr("trace: %s: %v", args[0], lookError(err))
	}
	return probe.TraceRequest{Program: path, Args: args[1:], Via: o.Via.Text, Timeout: o.Timeout.D, ToolVersion: version, Calls: o.Calls,
		NoLedger: o.LedgerSample.Off, LedgerSample: o.LedgerSample.N}, nil
}

// traceTimeoutFlag is trace's --timeout: 0 is no limit.
func traceTimeoutFlag(v *durationValue) cli.Flag {
	v.zeroIsNone = true
	return durationFlag(v, "timeout", "0", "end the program (SIGTERM, then SIGKILL after 2 s) after this long; 0 is no limit")
}

// ledgerFlag is --ledger-sample: the ledger's mean bytes between sampled buffers, 0 for every buffer, or
// off for no ledger.
func ledgerFlag(v *amount, usage string) cli.Flag {
	v.parse = func(s string) (uint64, bool, error) {
		if s == "off" || s == "0" {
			return 0, s == "off", nil
		}
		b, err := units.ParseSize(s)
		if err != nil {
			return 0, false, fmt.Errorf("--ledger-sample: %v (a size such as 512KiB, 0 for every buffer, or off)", err)
		}
		return b, false, nil
	}
	return valueFlag("ledger-sample", v, "512KiB", usage)
}

// lookError says why a program cannot be run, without exec's wrapping of the name.
func lookError(err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return "not found (give a path, or a name on PATH)"
	case errors.Is(err, os.ErrPermission):
		return "not executable"
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err.Error()
	}
	return err.Error()
}

func runTrace(ctx context.Context, o traceOptions, stdout, stderr io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	req, err := o.request()
	if err != nil {
		return err
	}
	var lock *safefile.DirLock
	if o.Out != "" {
		if lock, err = lockOutDir(o.Out, o.Force, "a trace", traceOutFiles...); err != nil {
			return err
		}
		defer lock.Unlock()
	}
	ctx, stop := withInterrupt(ctx, stderr)
	defer stop()
	req.Stdin, req.Stdout, req.Stderr = os.Stdin, stdout, stderr
	t, err := probe.Trace(ctx, req)
	if err != nil {
		return err
	}
	return finishTrace(judge.Trace(t, ctx.Err() != nil), o, stdout, stderr)
}

// finishTrace writes trace.json and timeline.json (with --out), renders the trace, and says how the program
// ended in the exit code.
func finishTrace(j findings.JudgedTrace, o traceOptions, stdout, stderr io.Writer) error {
	t := j.Trace()
	if o.Out != "" {
		written, err := writeTraceOut(j, o.Out)
		if err != nil {
			return err
		}
		if !o.Quiet {
			fmt.Fprintf(stderr, "wrote %s\n", strings.Join(written, ", "))
		}
	}
	if o.Output != "" {
		if err := emit(stdout, o.Output, o.Format.Format, j, false); err != nil {
			return err
		}
	} else if err := render(stdout, o.Format.Name(), j); err != nil {
		return err
	}
	switch {
	case t.Exit.Interrupted:
		return &exitError{exitInterrupted, fmt.Errorf("interrupted: the program %s; the trace so far is written", t.Exit.Description)}
	case t.Exit.TimedOut || t.Exit.Signal != "":
		return &exitError{exitWorkerFault, fmt.Errorf("the program %s; the trace is written", t.Exit.Description)}
	}
	return nil
}

// The ledger's pprof profiles that trace --out writes beside trace.json: what each call site held when the
// program ended, and at its first failure (only where there was one).
const (
	profileEndFile     = "live-at-exit.pb.gz"
	profileFailureFile = "live-at-failure.pb.gz"
)

// traceOutFiles are the files trace --out may write, for its lock and --force.
var traceOutFiles = []string{traceFile, timelineFile, profileEndFile, profileFailureFile}

// traceOutFile is a file rendered from a trace: its name and the format that renders it.
type traceOutFile struct{ name, format string }

// profilesOf are the ledger's profiles a trace has, as trace --out and bundle write them: what each call
// site held at the end, and at the first failure where there was one; none without a ledger.
func profilesOf(t *result.Trace) []traceOutFile {
	var out []traceOutFile
	if t.Ledger != nil {
		out = append(out, traceOutFile{profileEndFile, "pprof"})
		if t.FirstFailure != nil {
			out = append(out, traceOutFile{profileFailureFile, "pprof-failure"})
		}
	}
	return out
}

// writeTraceOut writes trace --out's files, trace.json first, and returns their paths. A profile the trace
// has nothing for (no ledger, no failure) is not written, and an older one of that name is removed: no file
// of an earlier trace stands beside this one.
func writeTraceOut(j findings.JudgedTrace, dir string) ([]string, error) {
	files := append([]traceOutFile{{traceFile, "json"}, {timelineFile, "timeline"}}, profilesOf(j.Trace())...)
	for _, name := range traceOutFiles {
		if !slices.ContainsFunc(files, func(f traceOutFile) bool { return f.name == name }) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, outputErr("--out: %v", named(name, err))
			}
		}
	}
	var written []string
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := safefile.WriteFile(path, func(w io.Writer) error { return report.Render(w, f.format, j) }); err != nil {
			if len(written) > 0 {
				return written, outputErr("--out: %v (%s is written)", named(f.name, err), written[0])
			}
			return written, outputErr("--out: %v", named(f.name, err))
		}
		written = append(written, path)
	}
	return written, nil
}

// reportTrace is `report` of a trace.json: its findings derived again by this build, then rendered in the
// format asked for (table, json, markdown or repro).
func reportTrace(stdout io.Writer, output string, f *report.Format, wide bool, t *result.Trace, loadErr error) error {
	if loadErr != nil {
		return inputError(loadErr)
	}
	if _, err := lookupFormat(f.Name, report.KindTrace); err != nil {
		return err
	}
	j := judge.Trace(t, false)
	if f.Name == "repro" || f.Name == "pprof" || f.Name == "pprof-failure" {
		// The reproducer needs a failure to repeat, a profile a ledger (and a failure, for pprof-failure): a
		// trace without one is bad input, said before any file.
		if err := report.Render(io.Discard, f.Name, j); err != nil {
			return usageErr("%v", err)
		}
	}
	return emit(stdout, output, f, j, wide)
}
