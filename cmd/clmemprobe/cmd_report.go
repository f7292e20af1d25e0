package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/clmemprobe/clmemprobe/report"
	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"
)

type reportOptions struct {
	path, format, output string
	maxSamples           int64
}

var reportFormats = []string{"table", "json", "markdown", "csv", "png", "svg"}

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "render a saved run.json again: table, json, markdown, csv (samples), png or svg (chart)",
		ArgsUsage: "RUN.json",
		Description: "Renders a result written by run --out, with the verdict derived again from its numbers.\n" +
			"markdown is the report for a bug ticket; csv lists every kept sample, one row per strategy and sample;\n" +
			"png and svg draw memory against buffers allocated (for a sweep, buffers reached against buffer size)\n" +
			"and need --output or a redirected stdout.\n\n" + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "table", Usage: "table, json, markdown, csv, png or svg"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to this file instead of stdout"},
			&cli.Int64Flag{Name: "max-samples", Usage: "keep at most this many samples per strategy, evenly spread, first and last kept (smaller files for tickets; 0: all)"},
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			if err := flagsAfterArgs(c, "report --format markdown RUN.json"); err != nil {
				return err
			}
			if c.NArg() != 1 {
				return usageErr("report needs exactly one RUN.json argument (see clmemprobe report --help)")
			}
			return runReport(reportOptions{path: c.Args().First(), format: c.String("format"), output: c.String("output"), maxSamples: c.Int64("max-samples")})
		},
	}
}

func (o reportOptions) validate() error {
	if o.maxSamples < 0 || o.maxSamples == 1 {
		return usageErr("--max-samples must be 0 (all) or at least 2, got %d", o.maxSamples)
	}
	for _, f := range reportFormats {
		if o.format == f {
			return nil
		}
	}
	return usageErr("--format %q: choose %s", o.format, strings.Join(reportFormats, ", "))
}

func loadResult(path string) (*report.Run, error) {
	r, err := report.Load(path)
	var nr *report.ErrNotAResult
	if errors.As(err, &nr) || errors.Is(err, os.ErrNotExist) {
		return nil, usageErr("%v", err)
	}
	if err != nil {
		return nil, usageErr("cannot read %s: %v", path, err)
	}
	return r, nil
}

func runReport(o reportOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	r, err := loadResult(o.path)
	if err != nil {
		return err
	}
	// The verdict is derived from the numbers, so it is derived again: a result keeps what this build says.
	r.Verdict = report.Verdicts(r)
	if o.maxSamples > 0 {
		for i := range r.Strategies {
			r.Strategies[i].Samples = report.Downsample(r.Strategies[i].Samples, int(o.maxSamples))
		}
	}
	out := os.Stdout
	if o.output != "" {
		f, err := os.Create(o.output)
		if err != nil {
			return &exitError{exitOutput, fmt.Errorf("cannot write %s: %v", o.output, err)}
		}
		defer f.Close()
		out = f
	}
	var werr error
	switch o.format {
	case "csv":
		werr = report.WriteCSV(out, r)
	case "png", "svg":
		if o.output == "" && isatty.IsTerminal(out.Fd()) {
			return usageErr("a %s chart is binary: give --output FILE or redirect stdout", o.format)
		}
		werr = report.WriteChart(out, r, o.format)
	default:
		werr = render(out, r, o.format)
	}
	if werr != nil {
		return &exitError{exitOutput, werr}
	}
	return nil
}
