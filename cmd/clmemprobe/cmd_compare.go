package main

import (
	"os"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/urfave/cli/v2"
)

type compareOptions struct {
	base, next, tolerance, format string
}

func compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare two results; exit 1 when a threshold regressed beyond the tolerance",
		ArgsUsage: "BASE.json NEW.json",
		Description: `For each strategy and buffer size: buffers reached, outcome and host cost per buffer, old against new.
A strategy regressed when it reached fewer buffers by more than --tolerance, when it now crashes or hangs,
when its host cost per buffer grew by more than the tolerance (and by more than 1% of the buffer size), or
when it is missing from the new run. For pipelines: exit 0 no regression, 1 regression, 2 unusable input
(a file that is not a result, or another schema version).

` + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tolerance", Value: "10%", Usage: "allowed change before it counts, as a percentage"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "table or json"},
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			if err := flagsAfterArgs(c, "compare --tolerance 5% BASE.json NEW.json"); err != nil {
				return err
			}
			if c.NArg() != 2 {
				return usageErr("compare needs two arguments, BASE.json and NEW.json (see clmemprobe compare --help)")
			}
			return runCompare(compareOptions{base: c.Args().Get(0), next: c.Args().Get(1), tolerance: c.String("tolerance"), format: c.String("format")})
		},
	}
}

func runCompare(o compareOptions) error {
	tol, err := probe.ParsePercent(o.tolerance)
	if err != nil {
		return usageErr("--tolerance: %v", err)
	}
	if o.format != "table" && o.format != "json" {
		return usageErr("--format %q: choose table or json", o.format)
	}
	base, err := loadResult(o.base)
	if err != nil {
		return err
	}
	next, err := loadResult(o.next)
	if err != nil {
		return err
	}
	cmp := report.Compare(base, next, tol)
	if o.format == "json" {
		err = writeIndentedJSON(cmp)
	} else {
		err = report.WriteComparison(os.Stdout, cmp)
	}
	if err != nil {
		return &exitError{exitOutput, err}
	}
	if cmp.Regressed {
		return &exitError{exitRegression, nil}
	}
	return nil
}
