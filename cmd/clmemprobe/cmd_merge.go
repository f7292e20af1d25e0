package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/urfave/cli/v2"
)

// mergeOptions are the flags of `merge`.
type mergeOptions struct {
	Format, Output, Tolerance string
	Wide                      bool
	args                      []string
}

type mergeRequest struct {
	paths     []string
	format    *report.Format
	output    string
	tolerance float64
	wide      bool
}

func mergeCommand(stdout, stderr io.Writer) *cli.Command {
	var o mergeOptions
	return &cli.Command{
		Name:      "merge",
		Usage:     "merge the results of many nodes into one fleet view; exit 1 when a node is an outlier",
		ArgsUsage: "DIR|RUN.json...",
		Description: `Reads run.json files (every file named run.json under each DIR, symlinks not followed) and shows one row
per node, strategy, size and variant, grouped by device model and driver version, with each job's median
threshold (buffers reached) and spread. Only comparable runs share a group: same platform, devices,
driver, touch mode and budget. A node is an outlier when its threshold, its host cost per buffer or its
device cost per buffer differs from its job's median by more than --tolerance (costs also by more than 1%
of the buffer size), or when its outcome is not the job's most common one. A file that cannot be used is
named on stderr, one line each, and the others are still merged.

` + exitCodesOne("a node is an outlier", exitOK, exitRegression, exitUsage, exitOutput),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "table", Destination: &o.Format, Usage: strings.Join(report.Names(report.KindFleet), ", ")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Destination: &o.Output, Usage: "write to this file instead of stdout (png needs it, or a redirected stdout)"},
			&cli.StringFlag{Name: "tolerance", Value: "10%", Destination: &o.Tolerance, Usage: "how far from its job's median a node may be before it is an outlier, as a percentage"},
			&cli.BoolFlag{Name: "wide", Destination: &o.Wide, Usage: "show every column of a table, however wide the terminal"},
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			return runMerge(c.Context, o, stdout, stderr)
		},
	}
}

func (o mergeOptions) validate() (*mergeRequest, error) {
	if len(o.args) == 0 {
		return nil, usageErr("merge needs at least one folder or run.json (see clmemprobe merge --help)")
	}
	tol, err := ParsePercent(o.Tolerance)
	if err != nil {
		return nil, usageErr("--tolerance: %v", err)
	}
	f, err := report.Lookup(o.Format, report.KindFleet)
	if err != nil {
		return nil, usageErr("--format: %v", err)
	}
	return &mergeRequest{paths: o.args, format: f, output: o.Output, tolerance: tol, wide: o.Wide}, nil
}

func runMerge(_ context.Context, o mergeOptions, stdout, stderr io.Writer) error {
	req, err := o.validate()
	if err != nil {
		return err
	}
	inputs, read, bad := loadFleet(req.paths)
	if req.output != "" {
		// Every file named or found, not only those that loaded: a broken input is still someone's file.
		if err := checkOutput("--output", req.output, append(append([]string{}, req.paths...), read...)...); err != nil {
			return err
		}
	}
	if len(inputs) == 0 && len(bad) == 1 {
		return usageErr("%s", oneLine(bad[0].Error()))
	}
	for _, b := range bad {
		fmt.Fprintln(stderr, "clmemprobe:", oneLine(b.Error()))
	}
	if len(inputs) == 0 {
		return usageErr("none of the %d inputs named above holds a result to merge", len(bad))
	}
	fleet := report.Merge(inputs, req.tolerance)
	if err := emit(stdout, req.output, req.format, fleet, req.wide); err != nil {
		return err
	}
	switch {
	case len(bad) > 0:
		return usageErr("%d %s could not be used (named above); the merge shows the %d %s that could", len(bad),
			report.Plural(len(bad), "input", "inputs"), len(inputs), report.Plural(len(inputs), "result", "results"))
	case fleet.Outliers > 0:
		return &exitError{exitRegression, nil}
	}
	return nil
}

// loadFleet reads every result the paths name: files as given, folders searched for run.json without
// following symlinks. What cannot be read is returned as one error per file, and the rest still loads.
func loadFleet(paths []string) (inputs []report.FleetInput, read []string, bad []error) {
	seen := map[[2]uint64]bool{} // device and inode: a file named twice (a folder and a file in it, a link) counts once
	load := func(path string) {
		read = append(read, path)
		if fi, err := os.Stat(path); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				id := [2]uint64{uint64(st.Dev), st.Ino}
				if seen[id] {
					return
				}
				seen[id] = true
			}
		}
		r, err := result.Load(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				err = fmt.Errorf("%s: %w", path, err)
			}
			bad = append(bad, err)
			return
		}
		inputs = append(inputs, report.FleetInput{Source: path, Run: r})
	}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			bad = append(bad, fmt.Errorf("%s: %v", p, reason(err)))
			continue
		}
		if !fi.IsDir() {
			load(p)
			continue
		}
		found := 0
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				bad = append(bad, fmt.Errorf("%s: %v", path, reason(err)))
				return nil
			}
			if d.Type().IsRegular() && d.Name() == runFile {
				found++
				load(path)
			}
			return nil
		})
		if err != nil {
			bad = append(bad, err)
		} else if found == 0 {
			bad = append(bad, fmt.Errorf("%s: no %s under this folder", p, runFile))
		}
	}
	return inputs, read, bad
}

// reason is what went wrong with a file, without the path the caller names itself.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
