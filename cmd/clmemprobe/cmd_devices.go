package main

import (
	"context"
	"io"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/urfave/cli/v2"
)

// devicesOptions are the flags of `devices`.
type devicesOptions struct {
	OpenCLLib    string
	SetupTimeout string
	JSON         bool
	args         []string
}

// devicesRequest is what a valid devicesOptions asks for.
type devicesRequest struct {
	library string
	setup   time.Duration
	format  string
}

func devicesCommand(stdout, stderr io.Writer) *cli.Command {
	var o devicesOptions
	return &cli.Command{
		Name:  "devices",
		Usage: "list every OpenCL platform and device with the figures the probe uses",
		Description: "Lists platforms and devices: name, vendor, type, OpenCL and driver version, global memory, maximum\n" +
			"allocation, host-unified memory, PCI bus id. Device numbers are what run --devices takes. The runtime is\n" +
			"loaded in a child process: one that crashes or hangs ends as one line and exit code 3.\n\n" + exitCodes(exitOK, exitUsage, exitNoOpenCL, exitOutput, exitInterrupted),
		Flags: []cli.Flag{openclLibFlag(&o.OpenCLLib), setupTimeoutFlag(&o.SetupTimeout),
			&cli.BoolFlag{Name: "json", Destination: &o.JSON, Usage: "print JSON instead of a table"}},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			return runDevices(c.Context, o, stdout, stderr)
		},
	}
}

func (o devicesOptions) validate() (*devicesRequest, error) {
	if len(o.args) > 0 {
		return nil, usageErr("devices takes no arguments, got %q", o.args[0])
	}
	setup, err := ParseDuration(o.SetupTimeout)
	if err != nil {
		return nil, usageErr("--setup-timeout: %v", err)
	}
	r := &devicesRequest{library: probe.LibraryPath(o.OpenCLLib), setup: setup, format: "table"}
	if o.JSON {
		r.format = "json"
	}
	return r, nil
}

func runDevices(ctx context.Context, o devicesOptions, stdout, stderr io.Writer) error {
	req, err := o.validate()
	if err != nil {
		return err
	}
	ctx, stop := withInterrupt(ctx, stderr)
	defer stop()
	inv, err := probe.Describe(ctx, req.library, req.setup)
	if err != nil {
		return err
	}
	return render(stdout, req.format, &inv)
}
