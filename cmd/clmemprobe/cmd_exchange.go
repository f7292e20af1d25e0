package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// exchangeOptions are the flags of `exchange`.
type exchangeOptions struct {
	runtimeOptions
	outputOptions
	Cells, Halo, Steps     amount // counts: 1e6 as well as 1000000 (ParseCount)
	VerifyEvery, BenchReps amount
	Sync                   choice // events or none
	BenchBytes             amount
	BufferFlags            bufferFlagsValue
	Hang                   durationValue
	args, commandLine      []string
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
		Flags:        exchangeFlags(&o),
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args, o.commandLine = c.Args().Slice(), os.Args
			return runExchange(c.Context, o, stdout, stderr)
		},
	}
}

// exchangeFlags are exchange's flags, bound to o.
func exchangeFlags(o *exchangeOptions) []cli.Flag {
	return []cli.Flag{
		o.libraryFlag(), o.platformFlag(), o.devicesFlag("two or more device indices within the platform, or all"),
		countFlag(&o.Cells, "cells", "1048576", 1, "cells (32-bit) per device"),
		countFlag(&o.Halo, "halo", "4", 1, "halo width in cells (also the stencil's radius)"),
		countFlag(&o.Steps, "steps", "100", 1, "time steps"),
		choiceFlag(&o.Sync, "sync", probe.SyncEvents, []string{probe.SyncEvents, probe.SyncNone}, func(s string) error {
			return fmt.Errorf("--sync %q: choose events or none", s)
		}, "events (wait on the producers' kernel events) or none"),
		countFlag(&o.VerifyEvery, "verify-every", "0", 0, "also verify every k steps (0: after the last step only)"),
		sizeFlag(&o.BenchBytes, "bench-bytes", "16MiB", "transfer size for the copy-path comparison (the halo size is measured too)"),
		countFlag(&o.BenchReps, "bench-reps", "20", 0, "repetitions per path in the comparison (0: skip it)"),
		valueFlag("buffer-flags", &o.BufferFlags, "read-write", "flags of every buffer: read-write, or read-write,alloc-host-ptr (CL_MEM_ALLOC_HOST_PTR)"),
		o.setupFlag(),
		durationFlag(&o.Hang, "hang-timeout", "60s", "steps without progress for this long are declared hung"),
		formatFlag(&o.Format, "table", strings.Join(report.Names(report.KindExchange), ", "), ofKind(report.KindExchange)),
		o.outputFlag("write to this file instead of stdout"),
	}
}

// validate checks the rules between exchange's flags that their values alone cannot say. It has no side
// effects.
func (o exchangeOptions) validate() error {
	if len(o.args) > 0 {
		return usageErr("exchange takes no arguments, got %q", o.args[0])
	}
	r := o.request()
	if err := r.Validate(); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// request is the exchange the flags ask for, before the runtime says which platform and devices there are.
func (o exchangeOptions) request() probe.ExchangeRequest {
	return probe.ExchangeRequest{Devices: o.Devices.Indices, Cells: o.Cells.N, Halo: o.Halo.N, Steps: o.Steps.N, Sync: o.Sync.Text,
		VerifyEvery: o.VerifyEvery.N, BenchBytes: o.BenchBytes.N, BenchReps: int(o.BenchReps.N), AllocHostPtr: o.BufferFlags.AllocHostPtr}
}

// note says what a --bench-bytes typed in a decimal unit is, or "".
func (o exchangeOptions) note() string {
	return decimalNote("--bench-bytes", o.BenchBytes.Text, o.BenchBytes.N)
}

// bufferFlagsValue is --buffer-flags: read-write, optionally with alloc-host-ptr.
type bufferFlagsValue struct {
	typed
	AllocHostPtr bool
}

func (v *bufferFlagsValue) Set(s string) error {
	return set(&v.typed, &v.AllocHostPtr, s, flagged("--buffer-flags", parseBufferFlags))
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
	if err := o.validate(); err != nil {
		return err
	}
	if note := o.note(); note != "" {
		fmt.Fprintln(stderr, "clmemprobe:", note)
	}
	library, limits := o.library(), probe.Limits{Setup: o.Setup.D, Hang: o.Hang.D}
	ctx, stop, inv, err := beginProbe(ctx, o.Output, library, limits.Setup, stderr)
	defer stop()
	if err != nil {
		return err
	}
	req := o.request()
	if req.Platform, err = selectPlatform(inv, o.Platform); err != nil {
		return err
	}
	if req.Devices, err = selectDevices(inv, req.Platform, o.Devices.Indices); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return usageErr("%v", err)
	}
	header := result.NewHeader(version, result.RedactArgs(o.commandLine), inv, req.Platform) // started before the exchange
	ex, err := probe.Exchange(ctx, library, req, limits)
	if ex == nil {
		return err
	}
	res := result.NewExchangeRun(header, *ex)
	res.Environment = probe.Environment(library)
	for _, i := range req.Devices {
		res.DeviceInfo = append(res.DeviceInfo, inv[req.Platform].Devices[i])
	}
	res.BufferFlags = o.BufferFlags.Text
	if err := emit(stdout, o.Output, o.Format.Format, judge.Exchange(res), false); err != nil {
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
