package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/clmemprobe/clmemprobe/report"
	"github.com/urfave/cli/v2"
)

type reportOptions struct {
	path, format, output string
}

var reportFormats = []string{"table", "json", "markdown", "csv"}

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:        "report",
		Usage:       "render a saved run.json again: table, json, markdown or csv (samples)",
		ArgsUsage:   "RUN.json",
		Description: "Renders a result written by run --out. markdown is the report for a bug ticket; csv lists every kept\nsample, one row per strategy and sample.\n\n" + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "table", Usage: "table, json, markdown or csv"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to this file instead of stdout"},
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("report needs exactly one RUN.json argument (see clmemprobe report --help)")
			}
			return runReport(reportOptions{path: c.Args().First(), format: c.String("format"), output: c.String("output")})
		},
	}
}

func (o reportOptions) validate() error {
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
	if o.format == "csv" {
		werr = report.WriteCSV(out, r)
	} else {
		werr = render(out, r, o.format)
	}
	if werr != nil {
		return &exitError{exitOutput, werr}
	}
	return nil
}
