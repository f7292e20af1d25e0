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

// largestOptions are the flags of `largest`.
type largestOptions struct {
	runtimeOptions
	outputOptions
	Flags             memFlagsValue
	MaxBytes          amount
	HostReserve       amount
	Patterns          patternList
	args, commandLine []string
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
			o.libraryFlag(), o.platformFlag(), o.devicesFlag("device indices within the platform (0,1 or 0-3), or all"),
			memFlagsFlag(&o.Flags, "flags", "read-write", "the cl_mem_flags of every buffer, as run --flags takes them"),
			sizeFlag(&o.MaxBytes, "max-bytes", "", "search up to this size, even above the device's reported memory (default: the device's memory)"),
			valueFlag("patterns", &o.Patterns, "1,4,128", "fill pattern sizes in bytes, each searched on its own: powers of two from 1 to 128"),
			sizeFlag(&o.HostReserve, "host-reserve", "", "for a device whose memory is the host's, leave this much of the host's available memory (default: $CLMEMPROBE_HOST_RESERVE, else the larger of 1GiB and 5% of RAM)"),
			o.setupFlag(),
			formatFlag(&o.Format, "table", strings.Join(report.Names(report.KindLargest), ", "), ofKind(report.KindLargest)),
			o.outputFlag("write to this file instead of stdout"),
			o.quietFlag(),
			o.verboseFlag("list every try under the table"),
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args, o.commandLine = c.Args().Slice(), os.Args
			return runLargest(c.Context, o, stdout, stderr)
		},
	}
}

// validate checks the rules between largest's flags that their values alone cannot say. It has no side
// effects.
func (o largestOptions) validate() error {
	if len(o.args) > 0 {
		return usageErr("largest takes no arguments, got %q", o.args[0])
	}
	if o.HostReserve.Text == "" {
		if _, err := defaultHostReserve(); err != nil {
			return usageErr("%v", err)
		}
	}
	if o.MaxBytes.Text != "" && o.MaxBytes.N < 1<<20 {
		return usageErr("--max-bytes %s: at least 1MiB (the search's step)", o.MaxBytes.Text)
	}
	return nil
}

// request is the search the flags ask for, on the platform and devices the runtime has.
func (o largestOptions) request(inv result.Inventory) (probe.LargestRequest, error) {
	r := probe.LargestRequest{Library: o.library(), Command: result.RedactArgs(o.commandLine), ToolVersion: version, Flags: uint64(o.Flags.Flags),
		MaxBytes: o.MaxBytes.N, HostReserve: o.HostReserve.N, Patterns: o.Patterns.Sizes, Setup: o.Setup.D}
	if o.HostReserve.Text == "" {
		r.HostReserve, _ = defaultHostReserve() // validated
	}
	var err error
	if r.Platform, err = selectPlatform(inv, o.Platform); err != nil {
		return r, err
	}
	r.Devices, err = selectDevices(inv, r.Platform, o.Devices.Indices)
	return r, err
}

// patternList is --patterns: fill pattern sizes, powers of two from 1 to 128, each once.
type patternList struct {
	typed
	Sizes []int
}

func (v *patternList) Set(s string) error {
	return set(&v.typed, &v.Sizes, s, flagged("--patterns", parsePatterns))
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
	if err := o.validate(); err != nil {
		return err
	}
	ctx, stop, inv, err := beginProbe(ctx, o.Output, o.library(), o.Setup.D, stderr)
	defer stop()
	if err != nil {
		return err
	}
	req, err := o.request(inv)
	if err != nil {
		return err
	}
	if !o.Quiet {
		req.OnTry = func(dev int, t result.LargestTry) {
			fmt.Fprintf(stderr, "clmemprobe: device %d: %s with a %d-byte pattern: %s (%.1f s)\n", dev, units.Size(t.SizeBytes), t.PatternBytes, t.Outcome, t.Seconds)
		}
	}
	l, err := probe.Largest(ctx, req, inv)
	if l != nil {
		if emitErr := emit(stdout, o.Output, o.Format.Format, judge.Largest(l), false, func(opts *report.Options) { opts.AllFindings = o.Verbose }); emitErr != nil {
			return emitErr
		}
	}
	if errors.Is(err, context.Canceled) {
		return &exitError{exitInterrupted, nil} // the document says it: interrupted, and how far it got
	}
	return err
}
