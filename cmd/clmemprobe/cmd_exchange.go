package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// exchangeOptions are the flags of `exchange`.
type exchangeOptions struct {
	OpenCLLib, Platform, Devices  string
	Cells, Halo, Steps            string // counts: 1e6 as well as 1000000 (ParseCount)
	VerifyEvery, BenchReps        string
	Sync, BenchBytes, BufferFlags string
	SetupTimeout, HangTimeout     string
	Format, Output                string
	args, commandLine             []string
}

type exchangeRequest struct {
	library  string
	platform string
	devices  []int
	ex       probe.ExchangeRequest
	limits   probe.Limits
	format   *report.Format
	output   string // the file to write instead of stdout; empty: stdout
	flags    string
	command  []string
	note     string // said on stderr before anything runs (a decimal --bench-bytes)
}

func exchangeCommand(stdout, stderr io.Writer) *cli.Command {
	var o exchangeOptions
	return &cli.Command{
		Name:  "exchange",
		Usage: "check and measure halo exchange between devices with clEnqueueMigrateMemObjects",
		Description: `A 1-D domain split into one slab per device of one shared context, one queue per device. Each step a
kernel updates every slab from its cells and the halo cells of its neighbours; then each device's queue
migrates all the halo buffers it needs in ONE clEnqueueMigrateMemObjects call whose wait list holds the
producers' kernel events (commands in different queues are not ordered otherwise). The result is read back
and compared with an exact host reference after the last step (and every --verify-every steps): any wrong
cell is a failure, exit code 1. --sync none drops the wait lists to show what goes wrong without them.
Finally the same bytes are moved from device 0 to device 1 by migration, through the host, and with
clEnqueueCopyBuffer, to show what each path costs. It runs in a child process: a runtime that crashes or
hangs while setting up ends with exit code 3, during the steps with exit code 5.

` + exitCodesOne("wrong cells: the exchanged halos did not match the host reference", exitOK, exitRegression, exitUsage, exitNoOpenCL, exitOutput, exitWorkerFault, exitInterrupted),
		Flags: []cli.Flag{
			openclLibFlag(&o.OpenCLLib),
			&cli.StringFlag{Name: "platform", Destination: &o.Platform, Usage: "platform index or part of its name (default: the first platform with devices)"},
			&cli.StringFlag{Name: "devices", Value: "all", Destination: &o.Devices, Usage: "two or more device indices within the platform, or all"},
			&cli.StringFlag{Name: "cells", Value: "1048576", Destination: &o.Cells, Usage: "cells (32-bit) per device"},
			&cli.StringFlag{Name: "halo", Value: "4", Destination: &o.Halo, Usage: "halo width in cells (also the stencil's radius)"},
			&cli.StringFlag{Name: "steps", Value: "100", Destination: &o.Steps, Usage: "time steps"},
			&cli.StringFlag{Name: "sync", Value: "events", Destination: &o.Sync, Usage: "events (wait on the producers' kernel events) or none"},
			&cli.StringFlag{Name: "verify-every", Value: "0", Destination: &o.VerifyEvery, Usage: "also verify every k steps (0: after the last step only)"},
			&cli.StringFlag{Name: "bench-bytes", Value: "16MiB", Destination: &o.BenchBytes, Usage: "transfer size for the copy-path comparison (the halo size is measured too)"},
			&cli.StringFlag{Name: "bench-reps", Value: "20", Destination: &o.BenchReps, Usage: "repetitions per path in the comparison (0: skip it)"},
			&cli.StringFlag{Name: "buffer-flags", Value: "read-write", Destination: &o.BufferFlags, Usage: "flags of every buffer: read-write, or read-write,alloc-host-ptr (CL_MEM_ALLOC_HOST_PTR)"},
			setupTimeoutFlag(&o.SetupTimeout),
			&cli.StringFlag{Name: "hang-timeout", Value: "60s", Destination: &o.HangTimeout, Usage: "steps without progress for this long are declared hung"},
			&cli.StringFlag{Name: "format", Value: "table", Destination: &o.Format, Usage: strings.Join(report.Names(report.KindExchange), ", ")},
			outputFlag(&o.Output, "write to this file instead of stdout"),
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args, o.commandLine = c.Args().Slice(), os.Args
			return runExchange(c.Context, o, stdout, stderr)
		},
	}
}

func (o exchangeOptions) validate() (*exchangeRequest, error) {
	if len(o.args) > 0 {
		return nil, usageErr("exchange takes no arguments, got %q", o.args[0])
	}
	var cells, halo, steps, verify, reps uint64
	if err := parseCounts(countFlag{"cells", o.Cells, &cells, 1}, countFlag{"halo", o.Halo, &halo, 1}, countFlag{"steps", o.Steps, &steps, 1},
		countFlag{"verify-every", o.VerifyEvery, &verify, 0}, countFlag{"bench-reps", o.BenchReps, &reps, 0}); err != nil {
		return nil, err
	}
	f, err := lookupFormat(o.Format, report.KindExchange)
	if err != nil {
		return nil, err
	}
	r := &exchangeRequest{library: probe.LibraryPath(o.OpenCLLib), platform: o.Platform, format: f, output: o.Output, flags: o.BufferFlags, command: result.RedactArgs(o.commandLine)}
	if r.ex.BenchBytes, err = units.ParseSize(o.BenchBytes); err != nil {
		return nil, usageErr("--bench-bytes: %v", err)
	}
	r.note = decimalNote("--bench-bytes", o.BenchBytes, r.ex.BenchBytes)
	if r.ex.AllocHostPtr, err = parseBufferFlags(o.BufferFlags); err != nil {
		return nil, usageErr("--buffer-flags: %v", err)
	}
	if r.devices, err = ParseDeviceList(o.Devices); err != nil {
		return nil, usageErr("--devices: %v", err)
	}
	if r.limits.Setup, err = ParseDuration(o.SetupTimeout); err != nil {
		return nil, usageErr("--setup-timeout: %v", err)
	}
	if r.limits.Hang, err = ParseDuration(o.HangTimeout); err != nil {
		return nil, usageErr("--hang-timeout: %v", err)
	}
	r.ex.Devices, r.ex.Cells, r.ex.Halo, r.ex.Steps = r.devices, cells, halo, steps
	r.ex.Sync, r.ex.VerifyEvery, r.ex.BenchReps = o.Sync, verify, int(reps)
	if err := r.ex.Validate(); err != nil {
		return nil, usageErr("%v", err)
	}
	return r, nil
}

// parseBufferFlags reads --buffer-flags: read-write, optionally with alloc-host-ptr.
func parseBufferFlags(s string) (allocHostPtr bool, err error) {
	readWrite := false
	for _, part := range strings.Split(s, ",") {
		switch strings.TrimSpace(part) {
		case "read-write":
			readWrite = true
		case "alloc-host-ptr":
			allocHostPtr = true
		default:
			return false, fmt.Errorf("unknown buffer flag %q%s (choose read-write or alloc-host-ptr)", part,
				suggestion(strings.TrimSpace(part), []string{"read-write", "alloc-host-ptr"}))
		}
	}
	if !readWrite {
		return false, fmt.Errorf("buffer flags must include read-write")
	}
	return allocHostPtr, nil
}

func runExchange(ctx context.Context, o exchangeOptions, stdout, stderr io.Writer) error {
	req, err := o.validate()
	if err != nil {
		return err
	}
	if req.note != "" {
		fmt.Fprintln(stderr, "clmemprobe:", req.note)
	}
	ctx, stop, inv, err := beginProbe(ctx, req.output, req.library, req.limits.Setup, stderr)
	defer stop()
	if err != nil {
		return err
	}
	plat, err := selectPlatform(inv, req.platform)
	if err != nil {
		return err
	}
	if req.ex.Devices, err = selectDevices(inv, plat, req.devices); err != nil {
		return err
	}
	req.ex.Platform = plat
	if err := req.ex.Validate(); err != nil {
		return usageErr("%v", err)
	}
	header := result.NewHeader(version, req.command, inv, plat) // started before the exchange
	ex, err := probe.Exchange(ctx, req.library, req.ex, req.limits)
	if ex == nil {
		return err
	}
	res := result.NewExchangeRun(header, *ex)
	res.Environment = probe.Environment(req.library)
	for _, i := range req.ex.Devices {
		res.DeviceInfo = append(res.DeviceInfo, inv[plat].Devices[i])
	}
	res.BufferFlags = req.flags
	if err := emit(stdout, req.output, req.format, judge.Exchange(res), false); err != nil {
		return err
	}
	if ex.Interrupted {
		return &exitError{exitInterrupted, nil}
	}
	if !res.Correct {
		return &exitError{exitRegression, nil}
	}
	return nil
}
