package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/urfave/cli/v2"
)

// listingOptions are the flags of the commands that list what the runtime and the machine have: devices
// and env.
type listingOptions struct {
	runtimeOptions // --opencl-lib and --setup-timeout
	outputOptions
	JSON   bool // the old spelling of --format json, still taken
	args   []string
	stderr io.Writer
}

// emit writes doc where the listing's output goes: --output, else stdout, in the format validate chose.
func (o *listingOptions) emit(stdout io.Writer, doc any) error {
	return emit(stdout, o.Output, o.Format.Format, doc, o.Wide)
}

// listing is one listing command: what its help says, and what it lists once its flags are checked.
type listing struct {
	name, usage, description string
	kind                     report.Kind // what it prints, for the formats it takes
	// wide: its table leaves out columns on a narrow terminal, so it takes --wide, as every such command does.
	wide bool
	list func(ctx context.Context, o *listingOptions, stdout io.Writer) error
}

// listingExitCodes are the exit codes of devices and env: an interrupt comes while the runtime lists its
// devices, before anything is written.
var listingExitCodes = exitCodesWith(map[int]string{exitInterrupted: "interrupted with Ctrl-C while the runtime was asked for its devices; nothing is written"},
	exitOK, exitUsage, exitNoOpenCL, exitOutput, exitInterrupted)

// command binds the listing's flags and runs it under Ctrl-C's interrupt.
func (l listing) command(stdout, stderr io.Writer) *cli.Command {
	var o listingOptions
	flags := []cli.Flag{o.libraryFlag(), o.setupFlag(),
		formatFlag(&o.Format, "", strings.Join(report.Names(l.kind), ", ")+" (default: table)", func(name string) (*report.Format, error) {
			if name == "" {
				return nil, nil // table, unless --json
			}
			return lookupFormat(name, l.kind)
		}),
		&cli.BoolFlag{Name: "json", Destination: &o.JSON, Usage: "the same as --format json"}, o.outputFlag("write to this file instead of stdout")}
	if l.wide {
		flags = append(flags, o.wideFlag())
	}
	return &cli.Command{
		Name:         l.name,
		Usage:        l.usage,
		Description:  l.description + "\n\n" + listingExitCodes,
		Flags:        flags,
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args, o.stderr = c.Args().Slice(), stderr
			if err := o.validate(l.name); err != nil {
				return err
			}
			var err error
			if o.Format.Format, err = lookupFormat(o.format(), l.kind); err != nil {
				return err
			}
			if err := checkOutput("--output", o.Output); err != nil {
				return err
			}
			ctx, stop := withInterrupt(c.Context, stderr)
			defer stop()
			return l.list(ctx, &o, stdout)
		},
	}
}

// validate checks the flags of the listing command; it has no side effects.
func (o listingOptions) validate(command string) error {
	if len(o.args) > 0 {
		return usageErr("%s takes no arguments, got %q", command, o.args[0])
	}
	if f := o.Format.Name(); o.JSON && f != "" && f != "json" {
		return usageErr("--json and --format %s contradict each other: give one", f)
	}
	return nil
}

// format is the format the listing is printed in: --format, or json with --json, else table.
func (o listingOptions) format() string {
	switch {
	case o.JSON:
		return "json"
	case o.Format.Name() == "":
		return "table"
	}
	return o.Format.Name()
}

func devicesCommand(stdout, stderr io.Writer) *cli.Command {
	return listing{
		name:  "devices",
		usage: "list every OpenCL platform and device with the figures the probe uses",
		description: "Lists platforms and devices: name, vendor, type, OpenCL and driver version, global memory, maximum\n" +
			"allocation, host-unified memory, PCI bus id. Device numbers are what run --devices takes. The runtime is\n" +
			"loaded in a child process: one that crashes or hangs ends as one line and exit code 3.",
		kind: report.KindInventory,
		wide: true,
		list: listDevices,
	}.command(stdout, stderr)
}

// listDevices prints every platform and device the runtime reports, listed in a child process, and says on
// stderr, one line each, why a registered runtime gave none (where no runtime gave one, the error says it).
func listDevices(ctx context.Context, o *listingOptions, stdout io.Writer) error {
	// Where the listing cannot tell what each registered runtime gave, each is loaded on its own beside the
	// listing, not after it: the command takes the longer of the two, not both (on an H100 the listing and
	// the one runtime's own load took 250 ms each).
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var beside chan []result.ICDStatus
	if !probe.OneRuntimeRegistered(o.library()) {
		beside = make(chan []result.ICDStatus, 1)
		go func() {
			_, st := probe.DiagnoseICDs(dctx, o.library(), o.Setup.D)
			beside <- st
		}()
	}
	inv, err := probe.Describe(ctx, o.library(), o.Setup.D)
	if err == nil {
		err = o.emit(stdout, &inv)
	}
	if err != nil {
		cancel()
		if beside != nil {
			<-beside
		}
		return err
	}
	var st []result.ICDStatus
	switch {
	case beside != nil:
		if st = <-beside; ctx.Err() != nil {
			return ctx.Err() // interrupted: what the runtimes gave was not found out
		}
	case probe.RegisteredRuntimeGave(o.library(), inv):
		return nil
	default:
		_, st = probe.DiagnoseICDs(ctx, o.library(), o.Setup.D)
	}
	for _, s := range st {
		if !s.Gave() {
			fmt.Fprintf(o.stderr, "clmemprobe: a registered runtime gave no device: %s\n", s.Line())
		}
	}
	return nil
}
