package main

import (
	"context"
	"errors"
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
	Format, Output    string
	Strategy, Variant string
	Flags             string
	MaxSamples        string // a count: 1e3 as well as 1000
	Wide              bool
	args              []string
}

type reportRequest struct {
	path, output string
	job          report.Options // the job a one-job format (repro) takes
	format       *report.Format
	maxSamples   int
	wide         bool
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
			&cli.StringFlag{Name: "format", Value: "table", Destination: &o.Format, Usage: strings.Join(reportFormats(), ", ") + " (pprof and pprof-failure: a trace's only)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Destination: &o.Output, Usage: "write to this file instead of stdout"},
			&cli.StringFlag{Name: "max-samples", Value: "0", Destination: &o.MaxSamples, Usage: "keep at most this many samples per strategy, evenly spread, first and last kept (smaller files for tickets; 0: all)"},
			&cli.BoolFlag{Name: "wide", Destination: &o.Wide, Usage: "show every column of a table, however wide the terminal"},
			&cli.StringFlag{Name: "strategy", Destination: &o.Strategy, Usage: "repro: the strategy to reproduce (default: the one that failed first)"},
			&cli.StringFlag{Name: "variant", Destination: &o.Variant, Usage: "repro: the variant to reproduce"},
			&cli.StringFlag{Name: "flags", Destination: &o.Flags, Usage: "repro: the flag set to reproduce, as the run wrote it (use-host-ptr, read-only+alloc-host-ptr)"},
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			return runReport(c.Context, o, stdout)
		},
	}
}

func (o reportOptions) validate() (*reportRequest, error) {
	if len(o.args) != 1 {
		return nil, usageErr("report needs exactly one RUN.json (or a run's folder) argument (see clmemprobe report --help)")
	}
	var maxSamples uint64
	if err := parseCounts(countFlag{"max-samples", o.MaxSamples, &maxSamples, 0}); err != nil {
		return nil, err
	}
	if maxSamples == 1 {
		return nil, usageErr("--max-samples must be 0 (all) or at least 2, got %s", o.MaxSamples)
	}
	f, err := lookupFormat(o.Format, report.KindRun)
	if err != nil {
		// A trace's own format (pprof): the file decides, and a run given one is told so once it is read.
		tf, terr := report.Lookup(o.Format, report.KindTrace)
		if terr != nil {
			return nil, usageErr("--format: unknown format %q%s: choose %s", o.Format, suggestion(o.Format, reportFormats()), strings.Join(reportFormats(), ", "))
		}
		f = tf
	}
	if (o.Strategy != "" || o.Variant != "" || o.Flags != "") && f.Name != "repro" {
		return nil, usageErr("--strategy, --variant and --flags pick the job of --format repro; %s shows every job", f.Name)
	}
	flags := o.Flags
	if flags != "" {
		// As the run wrote it, whatever order or spelling was typed: CL_MEM_USE_HOST_PTR is use-host-ptr.
		f, err := result.ParseMemFlags(flags)
		if err != nil {
			return nil, usageErr("--flags: %v", err)
		}
		flags = f.String()
	}
	return &reportRequest{path: resultPath(o.args[0]), output: o.Output, format: f, maxSamples: int(maxSamples), wide: o.Wide,
		job: report.Options{Strategy: o.Strategy, Variant: o.Variant, Flags: flags}}, nil
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
	req, err := o.validate()
	if err != nil {
		return err
	}
	if err := checkOutput("--output", req.output, req.path); err != nil {
		return err
	}
	if t, err := result.LoadTrace(req.path); err != nil || t != nil {
		return reportTrace(stdout, req.output, req.format, req.wide, t, err) // a trace (cmd_trace.go)
	}
	r, err := loadResult(req.path)
	if err != nil {
		return err
	}
	if _, err := report.Lookup(req.format.Name, report.KindRun); err != nil {
		return usageErr("--format %s is a trace's (trace.json): %s is a run; choose %s", req.format.Name, req.path, strings.Join(report.Names(report.KindRun), ", "))
	}
	// The verdict is derived from the numbers, so it is derived again: a result says what this build says
	// of it, whatever verdict the file holds. It is derived from every sample; --max-samples thins what is
	// shown.
	j := judge.Run(r)
	if req.maxSamples > 0 {
		j = j.Thinned(req.maxSamples)
	}
	if req.format.Name == "repro" {
		if _, err := report.ReproJob(j, req.job.Strategy, req.job.Variant, req.job.Flags); err != nil {
			return usageErr("%s: %v", req.path, err)
		}
		return emitWith(stdout, req.output, req.format, j, req.job)
	}
	if req.format.Name == "markdown" && req.output != "" {
		// A report written beside the run's chart (run --out writes run.png next to run.json) links it.
		if fi, err := os.Lstat(filepath.Join(filepath.Dir(req.output), chartFile)); err == nil && fi.Mode().IsRegular() {
			return emitWith(stdout, req.output, req.format, j, report.Options{Chart: chartFile})
		}
	}
	return emit(stdout, req.output, req.format, j, req.wide)
}
