package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// reportOptions are the flags of `report`.
type reportOptions struct {
	outputOptions
	Strategy, Variant string        // repro: the job to reproduce
	Flags             memFlagsValue // repro: its flag set
	MaxSamples        amount        // 1e3 as well as 1000
	args              []string
}

func reportCommand(stdout io.Writer) *cli.Command {
	var o reportOptions
	return &cli.Command{
		Name:      "report",
		Usage:     "render a saved run.json again: " + strings.Join(report.Names(report.KindRun), ", "),
		ArgsUsage: "RUN.json|DIR",
		Description: "Renders a result written by run --out (its run.json, or the folder), with the verdict derived again from its numbers.\n" +
			"markdown is the report for a bug ticket; csv lists every kept sample, one row per strategy and sample;\n" +
			"png and svg draw memory against buffers allocated (for a sweep, buffers reached against buffer size)\n" +
			"and need --output or a redirected stdout. timeline writes the run (or a trace.json) over time in Chrome's\n" +
			"trace event format, for Perfetto (ui.perfetto.dev) and chrome://tracing, as run --out writes timeline.json.\n\n" + exitCodes(exitOK, exitUsage, exitOutput),
		Flags: []cli.Flag{
			formatFlag(&o.Format, "table", strings.Join(reportFormats(), ", ")+" (pprof and pprof-failure: a trace's only)", reportFormat),
			o.outputFlag("write to this file instead of stdout"),
			countFlag(&o.MaxSamples, "max-samples", "0", 0, "keep at most this many samples per strategy, evenly spread, first and last kept (smaller files for tickets; 0: all)"),
			o.wideFlag(),
			&cli.StringFlag{Name: "strategy", Destination: &o.Strategy, Usage: "repro: the strategy to reproduce (default: the one that failed first)"},
			&cli.StringFlag{Name: "variant", Destination: &o.Variant, Usage: "repro: the variant to reproduce"},
			memFlagsFlag(&o.Flags, "flags", "", "repro: the flag set to reproduce, as the run wrote it (use-host-ptr, read-only+alloc-host-ptr)"),
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			return runReport(c.Context, o, stdout)
		},
	}
}

// validate checks the rules between report's flags and its argument. It has no side effects.
func (o reportOptions) validate() error {
	if len(o.args) != 1 {
		return usageErr("report needs exactly one RUN.json (or a run's folder) argument (see clmemprobe report --help)")
	}
	if o.MaxSamples.N == 1 {
		return usageErr("--max-samples must be 0 (all) or at least 2, got %s", o.MaxSamples.Text)
	}
	if f := o.Format.Format; (o.Strategy != "" || o.Variant != "" || o.Flags.Text != "") && f.Name != "repro" {
		return usageErr("--strategy, --variant and --flags pick the job of --format repro; %s shows every job", f.Name)
	}
	return nil
}

// reportFormat takes a run's format, or a trace's own (pprof): the file decides, and a run given a trace's
// format is told so once it is read.
func reportFormat(name string) (*report.Format, error) {
	if f, err := report.Lookup(name, report.KindRun); err == nil {
		return f, nil
	}
	if f, err := report.Lookup(name, report.KindTrace); err == nil {
		return f, nil
	}
	return nil, fmt.Errorf("--format: unknown format %q%s: choose %s", name, suggestion(name, reportFormats()), strings.Join(reportFormats(), ", "))
}

// job is the job a one-job format (repro) takes; its flags as the run wrote them, whatever order or
// spelling was typed: CL_MEM_USE_HOST_PTR is use-host-ptr.
func (o reportOptions) job() report.Options {
	j := report.Options{Strategy: o.Strategy, Variant: o.Variant}
	if o.Flags.Text != "" {
		j.Flags = o.Flags.Flags.String()
	}
	return j
}

// reportFormats are the formats report renders: a run's, then those only a trace has.
func reportFormats() []string {
	names := report.Names(report.KindRun)
	for _, n := range report.Names(report.KindTrace) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// resultPath is the run.json an argument names: the file itself, or the run.json in a run's folder (what
// run --out wrote), as merge takes folders too.
func resultPath(arg string) string {
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		// A trace's folder (trace --out) holds trace.json and no run.json.
		if _, err := os.Lstat(filepath.Join(arg, runFile)); errors.Is(err, os.ErrNotExist) {
			if _, err := os.Lstat(filepath.Join(arg, traceFile)); err == nil {
				return filepath.Join(arg, traceFile)
			}
		}
		return filepath.Join(arg, runFile)
	}
	return arg
}

// inputError is a result file that could not be loaded, as bad input (exit 2): one that is not there named
// as the argument it was given for, with what to give.
func inputError(err error) error {
	var pe *fs.PathError
	var nr *result.NotAResultError
	switch {
	case errors.Is(err, os.ErrNotExist) && errors.As(err, &pe):
		return usageErr("%s: no such file or folder (give a run.json or the folder run --out wrote; report, bundle and run --like also take a trace.json or trace --out's folder)", pe.Path)
	case errors.As(err, &nr) || errors.Is(err, os.ErrNotExist):
		return usageErr("%v", err)
	}
	return usageErr("cannot read the result: %v", err)
}

// loadResult reads a run.json; what cannot be read is bad input (exit 2).
func loadResult(path string) (*result.Run, error) {
	r, _, err := loadResultBytes(path)
	return r, err
}

// loadResultBytes is loadResult that also returns the bytes read.
func loadResultBytes(path string) (*result.Run, []byte, error) {
	r, b, err := result.LoadWithBytes(path)
	if err != nil {
		return nil, nil, inputError(err)
	}
	return r, b, nil
}

func runReport(_ context.Context, o reportOptions, stdout io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	path, f := resultPath(o.args[0]), o.Format.Format
	if err := checkOutput("--output", o.Output, path); err != nil {
		return err
	}
	if t, err := result.LoadTrace(path); err != nil || t != nil {
		return reportTrace(stdout, o.Output, f, o.Wide, t, err) // a trace (cmd_trace.go)
	}
	r, err := loadResult(path)
	if err != nil {
		return err
	}
	if _, err := report.Lookup(f.Name, report.KindRun); err != nil {
		return usageErr("--format %s is a trace's (trace.json): %s is a run; choose %s", f.Name, path, strings.Join(report.Names(report.KindRun), ", "))
	}
	// The verdict is derived from the numbers, so it is derived again: a result says what this build says
	// of it, whatever verdict the file holds. It is derived from every sample; --max-samples thins what is
	// shown.
	j := judge.Run(r)
	if o.MaxSamples.N > 0 {
		j = j.Thinned(int(o.MaxSamples.N))
	}
	if f.Name == "repro" {
		job := o.job()
		if _, err := report.ReproJob(j, job.Strategy, job.Variant, job.Flags); err != nil {
			return usageErr("%s: %v", path, err)
		}
		return emitWith(stdout, o.Output, f, j, job)
	}
	if f.Name == "markdown" && o.Output != "" {
		// A report written beside the run's chart (run --out writes run.png next to run.json) links it.
		if fi, err := os.Lstat(filepath.Join(filepath.Dir(o.Output), chartFile)); err == nil && fi.Mode().IsRegular() {
			return emitWith(stdout, o.Output, f, j, report.Options{Chart: chartFile})
		}
	}
	return emit(stdout, o.Output, f, j, o.Wide)
}
