package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/cl"
	"github.com/clmemprobe/clmemprobe/probe/env"
	"github.com/clmemprobe/clmemprobe/probe/sample"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/urfave/cli/v2"
)

// runOptions are the flags of `run`, as given; validate turns them into a probe.Plan.
type runOptions struct {
	lib, platform, devices, strategies string
	size, sizes, maxBytes, hostReserve string
	maxAllocs                          int64
	touch, timeout, hangTimeout        string
	sampleInterval, out, format        string
}

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "run the allocation probe: the clCreateBuffer loop under each strategy, one worker process each",
		Description: `Each strategy creates buffers of --size in a loop, never releasing them, buffer i meant for device i mod n
of the selected devices, until --max-allocs (or --max-bytes) is reached or a call fails:
   shared          one context over all selected devices
   per-device      one context per device
   migrate-first   shared context; each buffer is migrated to its device (clEnqueueMigrateMemObjects) at once
   device-list     shared context; clCreateBufferWithProperties with CL_MEM_DEVICE_HANDLE_LIST_KHR naming
                   the buffer's device (cl_khr_external_memory; reported unsupported where absent)
Touch modes: none (create only: the user's loop), fill (clEnqueueFillBuffer), kernel (a kernel writes it).
Runtimes that allocate at first use fail at the touch, not at create: the first failure is reported with
the exact buffer index and the stage where it surfaced (setup, create, touch, migrate, finish).

Each strategy runs in a child process: a crash, OOM kill or hang of the runtime becomes that strategy's
outcome (crashed, hung) and the others still run. A host guard stops a strategy before system available
memory falls below --host-reserve. Ctrl-C writes a partial result.

` + exitCodesHelp,
		Flags: []cli.Flag{
			openclLibFlag(),
			&cli.StringFlag{Name: "platform", Usage: "platform index or part of its name (default: the first platform with devices)"},
			&cli.StringFlag{Name: "devices", Value: "all", Usage: "device indices within the platform: all, 0,1 or 0-3"},
			&cli.StringFlag{Name: "strategies", Value: "shared,per-device,migrate-first", Usage: "comma-separated: shared, per-device, migrate-first, device-list, or all"},
			&cli.StringFlag{Name: "size", Value: "1MiB", Usage: "buffer size: B, KiB, MiB, GiB (or KB, MB, GB); sums such as 1MiB+4KiB"},
			&cli.StringFlag{Name: "sizes", Usage: "a sweep: comma-separated sizes, each run with every strategy (overrides --size)"},
			&cli.Int64Flag{Name: "max-allocs", Value: 100000, Usage: "buffers per strategy (the user's loop runs 100000)"},
			&cli.StringFlag{Name: "max-bytes", Usage: "stop each strategy after this many bytes of buffers (default: no byte limit)"},
			&cli.StringFlag{Name: "touch", Value: "none", Usage: "what to do to each buffer after creating it: none, fill, kernel"},
			&cli.StringFlag{Name: "timeout", Value: "10m", Usage: "time limit per strategy; past it the strategy is stopped"},
			&cli.StringFlag{Name: "hang-timeout", Value: "60s", Usage: "no progress for this long and the worker is declared hung"},
			&cli.StringFlag{Name: "host-reserve", Usage: "stop a strategy before system available memory falls below this (default: the larger of 1GiB and 5% of RAM)"},
			&cli.StringFlag{Name: "sample-interval", Value: "10ms", Usage: "least time between memory samples"},
			&cli.StringFlag{Name: "out", Usage: "folder to write run.json, samples.jsonl (every sample, as it comes) and run.png into (created if missing)"},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output on stdout: table, json or markdown"},
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("run takes no arguments, got %q (flags go before it? see clmemprobe run --help)", c.Args().First())
			}
			o := runOptions{lib: c.String("opencl-lib"), platform: c.String("platform"), devices: c.String("devices"),
				strategies: c.String("strategies"), size: c.String("size"), sizes: c.String("sizes"), maxAllocs: c.Int64("max-allocs"),
				maxBytes: c.String("max-bytes"), touch: c.String("touch"), timeout: c.String("timeout"), hangTimeout: c.String("hang-timeout"),
				hostReserve: c.String("host-reserve"), sampleInterval: c.String("sample-interval"), out: c.String("out"), format: c.String("format")}
			return runProbe(o)
		},
	}
}

// validate checks every flag that can be checked without OpenCL and builds the plan.
func (o runOptions) validate() (*probe.Plan, []int, error) {
	p := &probe.Plan{Library: cl.ResolveLibraryPath(o.lib), Command: os.Args}
	var err error
	if p.Strategies, err = probe.ParseStrategies(o.strategies); err != nil {
		return nil, nil, usageErr("--strategies: %v", err)
	}
	if o.sizes != "" {
		if p.Sizes, err = probe.ParseSizes(o.sizes); err != nil {
			return nil, nil, usageErr("--sizes: %v", err)
		}
	} else {
		s, err := probe.ParseSize(o.size)
		if err != nil {
			return nil, nil, usageErr("--size: %v", err)
		}
		p.Sizes = []uint64{s}
	}
	if o.maxAllocs <= 0 {
		return nil, nil, usageErr("--max-allocs must be a positive number of buffers, got %d", o.maxAllocs)
	}
	p.MaxAllocs = uint64(o.maxAllocs)
	if o.maxBytes != "" {
		if p.MaxBytes, err = probe.ParseSize(o.maxBytes); err != nil {
			return nil, nil, usageErr("--max-bytes: %v", err)
		}
	}
	if p.Touch, err = probe.ParseTouch(o.touch); err != nil {
		return nil, nil, usageErr("--touch: %v", err)
	}
	if p.Timeout, err = probe.ParseDuration(o.timeout); err != nil {
		return nil, nil, usageErr("--timeout: %v", err)
	}
	if p.HangTimeout, err = probe.ParseDuration(o.hangTimeout); err != nil {
		return nil, nil, usageErr("--hang-timeout: %v", err)
	}
	if p.SampleInterval, err = probe.ParseDuration(o.sampleInterval); err != nil {
		return nil, nil, usageErr("--sample-interval: %v", err)
	}
	if o.hostReserve != "" {
		if p.HostReserve, err = probe.ParseSize(o.hostReserve); err != nil {
			return nil, nil, usageErr("--host-reserve: %v", err)
		}
	} else {
		p.HostReserve = defaultHostReserve()
	}
	switch o.format {
	case "table", "json", "markdown":
	default:
		return nil, nil, usageErr("--format %q: choose table, json or markdown", o.format)
	}
	devs, err := probe.ParseDeviceList(o.devices)
	if err != nil {
		return nil, nil, usageErr("--devices: %v", err)
	}
	if o.out != "" {
		if err := prepareOutDir(o.out); err != nil {
			return nil, nil, usageErr("--out: %v", err)
		}
		p.OutDir = o.out
	}
	return p, devs, nil
}

// defaultHostReserve is the larger of 1 GiB and 5% of RAM.
func defaultHostReserve() uint64 {
	reserve := uint64(1 << 30)
	if vm, err := mem.VirtualMemory(); err == nil && vm.Total/20 > reserve {
		reserve = vm.Total / 20
	}
	return reserve
}

// prepareOutDir makes the folder and proves it is writable before any work starts.
func prepareOutDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %v", dir, err)
	}
	f, err := os.CreateTemp(dir, ".clmemprobe-write-test-*")
	if err != nil {
		return fmt.Errorf("%s is not writable: %v", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

func runProbe(o runOptions) error {
	plan, wantDevs, err := o.validate()
	if err != nil {
		return err
	}
	rt, err := probe.DescribeInChild("", plan.Library, plan.HangTimeout)
	if err != nil {
		return err
	}
	if plan.Platform, err = rt.SelectPlatform(o.platform); err != nil {
		return err
	}
	if plan.Devices, err = rt.SelectDevices(plan.Platform, wantDevs); err != nil {
		return err
	}
	if err := rt.CheckSizes(plan.Platform, plan.Devices, plan.Sizes); err != nil {
		return err
	}
	res := newRunResult(plan, rt)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runner := &probe.Runner{Plan: *plan, Observer: newProgressPrinter(os.Stderr)}
	if plan.OutDir != "" {
		samples, err := os.Create(filepath.Join(plan.OutDir, "samples.jsonl"))
		if err != nil {
			return &exitError{exitOutput, fmt.Errorf("cannot write samples: %v", err)}
		}
		defer samples.Close()
		runner.Samples = samples
		runner.Checkpoint = func(r *report.Run) error {
			r.Verdict = report.Verdicts(r)
			return writeRunJSON(plan.OutDir, r)
		}
		res.Partial = true
		if err := writeRunJSON(plan.OutDir, res); err != nil {
			return err
		}
	}
	runErr := runner.Run(ctx, res)
	interrupted := errors.Is(runErr, context.Canceled)
	if runErr != nil && !interrupted {
		return &exitError{exitOutput, runErr}
	}
	res.Partial = interrupted
	res.Verdict = report.Verdicts(res)
	res.ParentPeakRSSBytes, _ = sample.StatusField("/proc/self/status", "VmHWM")
	if plan.OutDir != "" {
		if err := writeRunJSON(plan.OutDir, res); err != nil {
			return err
		}
		if err := writeChart(filepath.Join(plan.OutDir, "run.png"), res); err != nil {
			return err
		}
	}
	if err := render(os.Stdout, res, o.format); err != nil {
		return &exitError{exitOutput, err}
	}
	if runner.SamplesErr != nil {
		return &exitError{exitOutput, fmt.Errorf("samples.jsonl is incomplete (run.json is whole): %v", runner.SamplesErr)}
	}
	switch {
	case interrupted:
		fmt.Fprintln(os.Stderr, "clmemprobe: interrupted; the result holds the strategies run so far")
		return &exitError{exitInterrupted, nil}
	case anyOutcome(res, report.OutcomeCrashed, report.OutcomeHung):
		return &exitError{exitWorkerFault, nil}
	}
	return nil
}

func anyOutcome(r *report.Run, outcomes ...string) bool {
	for _, s := range r.Strategies {
		for _, o := range outcomes {
			if s.Outcome == o {
				return true
			}
		}
	}
	return false
}

// newRunResult starts the result: what was asked and where.
func newRunResult(p *probe.Plan, rt *probe.Inventory) *report.Run {
	res := &report.Run{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "clmemprobe", Version: version},
		Started: time.Now().UTC().Format(time.RFC3339), Command: p.Command,
		Environment: env.Collect(env.DefaultRoots, p.Library),
		Platform:    rt.Platforms[p.Platform], Strategies: []report.Strategy{}}
	res.Environment.Platforms = rt.Platforms
	for _, i := range p.Devices {
		res.Devices = append(res.Devices, rt.Devices[p.Platform][i])
	}
	var names []string
	for _, s := range p.Strategies {
		names = append(names, string(s))
	}
	res.Config = report.Config{Platform: p.Platform, Devices: p.Devices, Strategies: names, SizeBytes: p.Sizes[0],
		MaxAllocs: p.MaxAllocs, MaxBytes: p.MaxBytes, Touch: string(p.Touch), TimeoutSeconds: p.Timeout.Seconds(),
		HangSeconds: p.HangTimeout.Seconds(), HostReserveByte: p.HostReserve, SampleMillis: float64(p.SampleInterval) / 1e6,
		OpenCLLibrary: p.Library}
	if len(p.Sizes) > 1 {
		res.Config.Sizes = p.Sizes
	}
	return res
}

// writeRunJSON replaces run.json atomically, so a reader (or a crash) never sees half a file.
func writeRunJSON(dir string, r *report.Run) error {
	tmp, err := os.CreateTemp(dir, ".run.json-*")
	if err != nil {
		return &exitError{exitOutput, fmt.Errorf("cannot write run.json: %v", err)}
	}
	if err := report.WriteJSON(tmp, r); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return &exitError{exitOutput, fmt.Errorf("cannot write run.json: %v", err)}
	}
	_ = tmp.Chmod(0o644)
	if err := tmp.Close(); err != nil {
		return &exitError{exitOutput, fmt.Errorf("cannot write run.json: %v", err)}
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, "run.json")); err != nil {
		return &exitError{exitOutput, fmt.Errorf("cannot write run.json: %v", err)}
	}
	return nil
}

// render writes the result in the chosen format.
func render(w *os.File, r *report.Run, format string) error {
	switch strings.ToLower(format) {
	case "json":
		return report.WriteJSON(w, r)
	case "markdown":
		return report.WriteMarkdown(w, r)
	}
	return report.WriteTable(w, r)
}

// writeChart draws the result next to run.json.
func writeChart(path string, r *report.Run) error {
	f, err := os.Create(path)
	if err != nil {
		return &exitError{exitOutput, fmt.Errorf("cannot write the chart: %v", err)}
	}
	if err := report.WriteChart(f, r, "png"); err != nil {
		f.Close()
		return &exitError{exitOutput, fmt.Errorf("cannot draw the chart: %v", err)}
	}
	if err := f.Close(); err != nil {
		return &exitError{exitOutput, fmt.Errorf("cannot write the chart: %v", err)}
	}
	return nil
}
