package main

import (
	"os"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/cl"
	"github.com/clmemprobe/clmemprobe/probe/env"
	"github.com/clmemprobe/clmemprobe/probe/exchange"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/urfave/cli/v2"
)

type exchangeOptions struct {
	lib, platform, devices string
	cells, halo, steps     int64
	verifyEvery, benchReps int64
	sync, benchBytes       string
	bufferFlags            string
	format                 string
}

func exchangeCommand() *cli.Command {
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
clEnqueueCopyBuffer, to show what each path costs.

` + exitCodesHelp,
		Flags: []cli.Flag{
			openclLibFlag(),
			&cli.StringFlag{Name: "platform", Usage: "platform index or part of its name (default: the first platform with devices)"},
			&cli.StringFlag{Name: "devices", Value: "all", Usage: "two or more device indices within the platform, or all"},
			&cli.Int64Flag{Name: "cells", Value: 1 << 20, Usage: "cells (32-bit) per device"},
			&cli.Int64Flag{Name: "halo", Value: 4, Usage: "halo width in cells (also the stencil's radius)"},
			&cli.Int64Flag{Name: "steps", Value: 100, Usage: "time steps"},
			&cli.StringFlag{Name: "sync", Value: "events", Usage: "events (wait on the producers' kernel events) or none"},
			&cli.Int64Flag{Name: "verify-every", Value: 0, Usage: "also verify every k steps (0: after the last step only)"},
			&cli.StringFlag{Name: "bench-bytes", Value: "16MiB", Usage: "transfer size for the copy-path comparison (the halo size is measured too)"},
			&cli.Int64Flag{Name: "bench-reps", Value: 20, Usage: "repetitions per path in the comparison (0: skip it)"},
			&cli.StringFlag{Name: "buffer-flags", Value: "read-write", Usage: "flags of every buffer: read-write, or read-write,alloc-host-ptr (CL_MEM_ALLOC_HOST_PTR)"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "table, json or markdown"},
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("exchange takes no arguments, got %q", c.Args().First())
			}
			return runExchange(exchangeOptions{lib: c.String("opencl-lib"), platform: c.String("platform"), devices: c.String("devices"),
				cells: c.Int64("cells"), halo: c.Int64("halo"), steps: c.Int64("steps"), sync: c.String("sync"),
				verifyEvery: c.Int64("verify-every"), benchBytes: c.String("bench-bytes"), benchReps: c.Int64("bench-reps"), format: c.String("format"),
				bufferFlags: c.String("buffer-flags")})
		},
	}
}

func runExchange(o exchangeOptions) error {
	for name, v := range map[string]int64{"--cells": o.cells, "--halo": o.halo, "--steps": o.steps} {
		if v <= 0 {
			return usageErr("%s must be positive, got %d", name, v)
		}
	}
	if o.verifyEvery < 0 || o.benchReps < 0 {
		return usageErr("--verify-every and --bench-reps cannot be negative")
	}
	if o.format != "table" && o.format != "json" && o.format != "markdown" {
		return usageErr("--format %q: choose table, json or markdown", o.format)
	}
	benchBytes, err := probe.ParseSize(o.benchBytes)
	if err != nil {
		return usageErr("--bench-bytes: %v", err)
	}
	flags, err := exchange.ParseBufferFlags(o.bufferFlags)
	if err != nil {
		return usageErr("--buffer-flags: %v", err)
	}
	want, err := probe.ParseDeviceList(o.devices)
	if err != nil {
		return usageErr("--devices: %v", err)
	}
	cfg := exchange.Config{Cells: uint64(o.cells), Halo: uint64(o.halo), Steps: uint64(o.steps), Sync: o.sync,
		VerifyEvery: uint64(o.verifyEvery), BenchBytes: benchBytes, BenchReps: int(o.benchReps), BufferFlags: flags}
	if want != nil && len(want) < 2 {
		return usageErr("the exchange needs at least two devices, got --devices %s", o.devices)
	}
	// Checks that do not need the runtime come first, with a stand-in device count.
	check := cfg
	check.Devices = make([]*cl.Device, 2)
	if err := check.Validate(); err != nil {
		return usageErr("%v", err)
	}
	libPath := cl.ResolveLibraryPath(o.lib)
	rt, err := probe.OpenRuntime(libPath)
	if err != nil {
		return err
	}
	plat, err := rt.SelectPlatform(o.platform)
	if err != nil {
		return err
	}
	if cfg.Indices, err = rt.SelectDevices(plat, want); err != nil {
		return err
	}
	for _, i := range cfg.Indices {
		cfg.Devices = append(cfg.Devices, rt.CLDevices[plat][i])
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", err)
	}
	res := &report.ExchangeRun{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "clmemprobe", Version: version},
		Started: time.Now().UTC().Format(time.RFC3339), Command: os.Args, Environment: env.Collect(env.DefaultRoots, libPath),
		Platform: rt.Platforms[plat]}
	for _, i := range cfg.Indices {
		res.DeviceInfo = append(res.DeviceInfo, rt.Devices[plat][i])
	}
	ex, err := exchange.Run(rt.Lib, cfg)
	if err != nil {
		return &exitError{exitOutput, err}
	}
	res.Exchange = *ex
	res.BufferFlags = o.bufferFlags
	switch o.format {
	case "json":
		err = writeIndentedJSON(res)
	default:
		err = report.WriteExchangeTable(os.Stdout, res, o.format == "markdown")
	}
	if err != nil {
		return &exitError{exitOutput, err}
	}
	if !res.Correct {
		return &exitError{exitRegression, nil}
	}
	return nil
}
