package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// largestOptions are the flags of `largest`, as given.
type largestOptions struct {
	OpenCLLib, Platform, Devices, Flags, MaxBytes, Patterns string
	SetupTimeout, HostReserve, Format, Output               string
	Quiet, Verbose                                          bool
	args, commandLine                                       []string
}

// largestRequest is what valid largestOptions ask for, before the runtime lists its devices.
type largestRequest struct {
	req      probe.LargestRequest
	platform string
	devices  []int
	format   *report.Format
	output   string
	quiet    bool
	verbose  bool
}

func largestCommand(stdout, stderr io.Writer) *cli.Command {
	var o largestOptions
	return &cli.Command{
		Name:  "largest",
		Usage: "find the largest single buffer each device really takes: created, filled, and its first and last page read back",
		Description: `Searches, per device, for the largest single buffer that is created, placed and proven: filled with
clEnqueueFillBuffer, then its first and last page read back and compared with the fill. It doubles from 64 MiB
to the device's memory, or to --max-bytes where given, even above the device's memory (a device whose memory
is the host's: no further than the host can spare above --host-reserve, what its memory cgroup leaves, and
under ulimit -v what the limit leaves above what a worker maps besides its buffer), trying every step even
past a failure, then bisects below the first failure to 1 MiB or 1%.
Each try runs in its own worker, with a hang limit of four times the fill's time at the bandwidth the
earlier fills measured (at least 5 s). It searches with each pattern size of --patterns on its own: 1 and 4
bytes as programs fill, 128 the largest the specification allows; the element count (size / pattern size)
is what some drivers get wrong. Each try ends verified, refused (an error at create), failed (an error at
the fill, the wait or the read), wrong (every call said success, the read-back does not hold the fill), hung
or crashed.

The headline says the largest buffer that works against the maximum allocation the runtime reports (and
whether the runtime enforces it), and names fills that went wrong where another pattern size placed the
same bytes: a driver bug to report. -v lists every try.

` + exitCodes(exitOK, exitUsage, exitNoOpenCL, exitOutput, exitInterrupted),
		Flags: []cli.Flag{
			openclLibFlag(&o.OpenCLLib),
			&cli.StringFlag{Name: "platform", Destination: &o.Platform, Usage: "platform index or part of its name (default: the first platform with devices)"},
			&cli.StringFlag{Name: "devices", Value: "all", Destination: &o.Devices, Usage: "device indices within the platform (0,1 or 0-3), or all"},
			&cli.StringFlag{Name: "flags", Value: "read-write", Destination: &o.Flags, Usage: "the cl_mem_flags of every buffer, as run --flags takes them"},
			&cli.StringFlag{Name: "max-bytes", Destination: &o.MaxBytes, Usage: "search up to this size, even above the device's reported memory (default: the device's memory)"},
			&cli.StringFlag{Name: "patterns", Value: "1,4,128", Destination: &o.Patterns, Usage: "fill pattern sizes in bytes, each searched on its own: powers of two from 1 to 128"},
			&cli.StringFlag{Name: "host-reserve", Destination: &o.HostReserve, Usage: "for a device whose memory is the host's, leave this much of the host's available memory (default: $CLMEMPROBE_HOST_RESERVE, else the larger of 1GiB and 5% of RAM)"},
			setupTimeoutFlag(&o.SetupTimeout),
			&cli.StringFlag{Name: "format", Value: "table", Destination: &o.Format, Usage: strings.Join(report.Names(report.KindLargest), ", ")},
			outputFlag(&o.Output, "write to this file instead of stdout"),
			quietFlag(&o.Quiet),
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Destination: &o.Verbose, Usage: "list every try under the table"},
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args, o.commandLine = c.Args().Slice(), os.Args
			return runLargest(c.Context, o, stdout, stderr)
		},
	}
}

func (o largestOptions) validate() (*largestRequest, error) {
	if len(o.args) > 0 {
		return nil, usageErr("largest takes no arguments, got %q", o.args[0])
	}
	f, err := lookupFormat(o.Format, report.KindLargest)
	if err != nil {
		return nil, err
	}
	r := &largestRequest{platform: o.Platform, format: f, output: o.Output, quiet: o.Quiet, verbose: o.Verbose}
	r.req = probe.LargestRequest{Library: probe.LibraryPath(o.OpenCLLib), Command: result.RedactArgs(o.commandLine), ToolVersion: version}
	if r.req.HostReserve, err = defaultHostReserve(); err != nil && o.HostReserve == "" {
		return nil, usageErr("%v", err)
	}
	if r.devices, err = ParseDeviceList(o.Devices); err != nil {
		return nil, usageErr("--devices: %v", err)
	}
	flags, err := result.ParseMemFlags(o.Flags)
	if err != nil {
		return nil, usageErr("--flags: %v", err)
	}
	r.req.Flags = uint64(flags)
	if o.MaxBytes != "" {
		if r.req.MaxBytes, err = units.ParseSize(o.MaxBytes); err != nil {
			return nil, usageErr("--max-bytes: %v", err)
		}
		if r.req.MaxBytes < 1<<20 {
			return nil, usageErr("--max-bytes %s: at least 1MiB (the search's step)", o.MaxBytes)
		}
	}
	if o.HostReserve != "" {
		if r.req.HostReserve, err = units.ParseSize(o.HostReserve); err != nil {
			return nil, usageErr("--host-reserve: %v", err)
		}
	}
	if r.req.Patterns, err = parsePatterns(o.Patterns); err != nil {
		return nil, usageErr("--patterns: %v", err)
	}
	if r.req.Setup, err = ParseDuration(o.SetupTimeout); err != nil {
		return nil, usageErr("--setup-timeout: %v", err)
	}
	return r, nil
}

// parsePatterns reads --patterns: powers of two from 1 to 128, each once.
func parsePatterns(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 || n > 128 || n&(n-1) != 0 {
			return nil, fmt.Errorf("%q is not a pattern size: give powers of two from 1 to 128, such as 1,4,128", strings.TrimSpace(part))
		}
		for _, m := range out {
			if m == n {
				return nil, fmt.Errorf("%d is listed twice", n)
			}
		}
		out = append(out, n)
	}
	return out, nil
}

func runLargest(ctx context.Context, o largestOptions, stdout, stderr io.Writer) error {
	r, err := o.validate()
	if err != nil {
		return err
	}
	ctx, stop, inv, err := beginProbe(ctx, r.output, r.req.Library, r.req.Setup, stderr)
	defer stop()
	if err != nil {
		return err
	}
	if r.req.Platform, err = selectPlatform(inv, r.platform); err != nil {
		return err
	}
	if r.req.Devices, err = selectDevices(inv, r.req.Platform, r.devices); err != nil {
		return err
	}
	if !r.quiet {
		r.req.OnTry = func(dev int, t result.LargestTry) {
			fmt.Fprintf(stderr, "clmemprobe: device %d: %s with a %d-byte pattern: %s (%.1f s)\n", dev, units.Size(t.SizeBytes), t.PatternBytes, t.Outcome, t.Seconds)
		}
	}
	l, err := probe.Largest(ctx, r.req, inv)
	if l != nil {
		if emitErr := emit(stdout, r.output, r.format, judge.Largest(l), false, func(opts *report.Options) { opts.AllFindings = r.verbose }); emitErr != nil {
			return emitErr
		}
	}
	if errors.Is(err, context.Canceled) {
		return &exitError{exitInterrupted, nil} // the document says it: interrupted, and how far it got
	}
	return err
}
