package main

import (
	"context"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// compareOptions are the flags of `compare`.
type compareOptions struct {
	outputOptions
	Tolerance percentValue
	args      []string
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
			toleranceFlag(&o.Tolerance, "allowed change before it counts, as a percentage"),
			formatFlag(&o.Format, "table", strings.Join(report.Names(report.KindComparison), ", "), ofKind(report.KindComparison)),
			o.outputFlag("write to this file instead of stdout"),
			o.wideFlag(),
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			return runCompare(c.Context, o, stdout)
		},
	}
}

// validate checks the arguments compare takes. It has no side effects.
func (o compareOptions) validate() error {
	if len(o.args) != 2 {
		return usageErr("compare needs two arguments, BASE.json and NEW.json, files or run folders (see clmemprobe compare --help)")
	}
	return nil
}

func runCompare(_ context.Context, o compareOptions, stdout io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	basePath, nextPath := resultPath(o.args[0]), resultPath(o.args[1])
	if err := checkOutput("--output", o.Output, basePath, nextPath); err != nil {
		return err
	}
	base, err := loadResult(basePath)
	if err != nil {
		return err
	}
	next, err := loadResult(nextPath)
	if err != nil {
		return err
	}
	cmp := judge.Compare(base, next, o.Tolerance.Fraction)
	if cmp.Incomparable != "" {
		return usageErr("%s and %s cannot be compared: %s; compare runs of the same devices and touch mode", basePath, nextPath, cmp.Incomparable)
	}
	if err := emit(stdout, o.Output, o.Format.Format, cmp, o.Wide); err != nil {
		return err
	}
	if cmp.Regressed {
		return &exitError{exitRegression, nil}
	}
	return nil
}
