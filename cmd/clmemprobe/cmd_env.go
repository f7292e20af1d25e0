package main

import (
	"context"
	"errors"
	"io"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/urfave/cli/v2"
)

func envCommand(stdout, stderr io.Writer) *cli.Command {
	return listing{
		name:  "env",
		usage: "print the environment block that goes into bug reports",
		description: "OS and kernel, CPU, RAM and swap, overcommit and vm.max_map_count, the ICD loader's vendor files,\n" +
			"the OpenCL platforms, /dev/dri nodes and their drivers, and the environment variables that change what\n" +
			"vendor runtimes do. Works without OpenCL (the platforms are then left out); a runtime that crashes or\n" +
			"hangs while listing its platforms is named on stderr after the block, with exit code 3.",
		kind: report.KindEnvironment,
		list: listEnvironment,
	}.command(stdout, stderr)
}

// listEnvironment prints the environment block, with the platforms the runtime lists where it lists them.
func listEnvironment(ctx context.Context, o *listingOptions, stdout io.Writer) error {
	e := probe.Environment(o.library())
	inv, listErr := probe.Describe(ctx, o.library(), o.Setup.D)
	for _, p := range inv {
		e.Platforms = append(e.Platforms, p.Platform)
	}
	_, e.ICDStatus = probe.DiagnoseICDs(ctx, o.library(), o.Setup.D)
	if err := o.emit(stdout, e); err != nil {
		return err
	}
	if errors.Is(listErr, probe.ErrChildFault) || errors.Is(listErr, context.Canceled) {
		// The block is printed; a runtime that crashed or hung is said after it, and is the exit code. A
		// machine without OpenCL is not an error here: the block just lists no platform.
		return listErr
	}
	return nil
}
