package main

import (
	"context"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// compareOptions are the flags of `compare`.
type compareOptions struct {
	Tolerance, Format, Output string
	Wide                      bool
	args                      []string
}

type compareRequest struct {
	base, next string
	tolerance  float64
	format     *report.Format
	output     string
	wide       bool
}

func compareCommand(stdout io.Writer) *cli.Command {
	var o compareOptions
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare two results; exit 1 when a threshold regressed beyond the tolerance",
		ArgsUsage: "BASE.json|DIR NEW.json|DIR",
		Description: `For each strategy and buffer size: buffers reached, outcome and host cost per buffer, old against new.
Each argument is a run.json or a run's folder. A strategy regressed when it reached fewer buffers by more than --tolerance, when it now crashes or hangs,
when its host cost per buffer grew by more than the tolerance (and by more than 1% of the buffer size), or
when it is missing from the new run. A strategy the new run asked differently (only under another variant,
flag set or size) is not-comparable, shown beside the base's and not judged. For pipelines: exit 0 no
regression, 1 regression, 2 unusable input
(a file that is not a result, another schema version, or runs on other devices or with another touch mode:
those are not compared).

` + exitCodesOne("a threshold regressed beyond the tolerance", exitOK, exitRegression, exitUsage, exitOutput),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tolerance", Value: comparison.TolerancePercent, Destination: &o.Tolerance, Usage: "allowed change before it counts, as a percentage"},
			&cli.StringFlag{Name: "format", Value: "table", Destination: &o.Format, Usage: strings.Join(report.Names(report.KindComparison), ", ")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Destination: &o.Output, Usage: "write to this file instead of stdout"},
			&cli.BoolFlag{Name: "wide", Destination: &o.Wide, Usage: "show every column of a table, however wide the terminal"},
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			return runCompare(c.Context, o, stdout)
		},
	}
}

func (o compareOptions) validate() (*compareRequest, error) {
	if len(o.args) != 2 {
		return nil, usageErr("compare needs two arguments, BASE.json and NEW.json, files or run folders (see clmemprobe compare --help)")
	}
	tol, err := ParsePercent(o.Tolerance)
	if err != nil {
		return nil, usageErr("--tolerance: %v", err)
	}
	f, err := lookupFormat(o.Format, report.KindComparison)
	if err != nil {
		return nil, err
	}
	return &compareRequest{base: resultPath(o.args[0]), next: resultPath(o.args[1]), tolerance: tol, format: f, output: o.Output, wide: o.Wide}, nil
}

func runCompare(_ context.Context, o compareOptions, stdout io.Writer) error {
	req, err := o.validate()
	if err != nil {
		return err
	}
	if err := checkOutput("--output", req.output, req.base, req.next); err != nil {
		return err
	}
	base, err := loadResult(req.base)
	if err != nil {
		return err
	}
	next, err := loadResult(req.next)
	if err != nil {
		return err
	}
	cmp := judge.Compare(base, next, req.tolerance)
	if cmp.Incomparable != "" {
		return usageErr("%s and %s cannot be compared: %s; compare runs of the same devices and touch mode", req.base, req.next, cmp.Incomparable)
	}
	if err := emit(stdout, req.output, req.format, cmp, req.wide); err != nil {
		return err
	}
	if cmp.Regressed {
		return &exitError{exitRegression, nil}
	}
	return nil
}
