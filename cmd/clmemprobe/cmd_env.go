package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/urfave/cli/v2"
)

// envOptions are the flags of `env`.
type envOptions struct {
	OpenCLLib    string
	SetupTimeout string
	JSON         bool
	args         []string
}

type envRequest struct {
	library string
	setup   time.Duration
	format  string
}

func envCommand(stdout, stderr io.Writer) *cli.Command {
	var o envOptions
	return &cli.Command{
		Name:  "env",
		Usage: "print the environment block that goes into bug reports",
		Description: "OS and kernel, CPU, RAM and swap, overcommit and vm.max_map_count, the ICD loader's vendor files,\n" +
			"the OpenCL platforms, /dev/dri nodes and their drivers, and the environment variables that change what\n" +
			"vendor runtimes do. Works without OpenCL (the platforms are then left out); a runtime that crashes or\n" +
			"hangs while listing its platforms is named on stderr after the block, with exit code 3.\n\n" + exitCodes(exitOK, exitUsage, exitNoOpenCL, exitOutput, exitInterrupted),
		Flags: []cli.Flag{openclLibFlag(&o.OpenCLLib), setupTimeoutFlag(&o.SetupTimeout),
			&cli.BoolFlag{Name: "json", Destination: &o.JSON, Usage: "print JSON"}},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			return runEnv(c.Context, o, stdout, stderr)
		},
	}
}

func (o envOptions) validate() (*envRequest, error) {
	if len(o.args) > 0 {
		return nil, usageErr("env takes no arguments, got %q", o.args[0])
	}
	setup, err := ParseDuration(o.SetupTimeout)
	if err != nil {
		return nil, usageErr("--setup-timeout: %v", err)
	}
	r := &envRequest{library: probe.LibraryPath(o.OpenCLLib), setup: setup, format: "table"}
	if o.JSON {
		r.format = "json"
	}
	return r, nil
}

func runEnv(ctx context.Context, o envOptions, stdout, stderr io.Writer) error {
	req, err := o.validate()
	if err != nil {
		return err
	}
	ctx, stop := withInterrupt(ctx, stderr)
	defer stop()
	e := probe.Environment(req.library)
	inv, listErr := probe.Describe(ctx, req.library, req.setup)
	for _, p := range inv {
		e.Platforms = append(e.Platforms, p.Platform)
	}
	if err := render(stdout, req.format, e); err != nil {
		return err
	}
	if errors.Is(listErr, probe.ErrChildFault) || errors.Is(listErr, context.Canceled) {
		// The block is printed; a runtime that crashed or hung is said after it, and is the exit code. A
		// machine without OpenCL is not an error here: the block just lists no platform.
		return listErr
	}
	return nil
}
