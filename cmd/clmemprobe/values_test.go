package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/urfave/cli/v2"
)

// parseFlags sets flags from args as the command line does, through the flag package.
func parseFlags(flags []cli.Flag, args ...string) error {
	set := flag.NewFlagSet("test", flag.ContinueOnError)
	set.SetOutput(io.Discard)
	for _, f := range flags {
		if err := f.Apply(set); err != nil {
			return err
		}
	}
	return set.Parse(args)
}

// run's job flags set the plan as they are parsed: the touch mode the flag names is the plan's enum, with
// no string between them; the defaults are set the same way.
func TestJobFlagsSetThePlan(t *testing.T) {
	var o runOptions
	flags := jobFlags(&o.runtimeOptions, &o.outputOptions, &o.jobOptions, &o)
	if o.plan.Touch != result.TouchNone || len(o.plan.Strategies) != 3 || o.MaxAllocs.N != 100000 || o.Size.N != 1<<20 || o.Timeout.D != 10*time.Minute {
		t.Fatalf("defaults: touch %q, strategies %v, max-allocs %d, size %d, timeout %v", o.plan.Touch, o.plan.Strategies, o.MaxAllocs.N, o.Size.N, o.Timeout.D)
	}
	err := parseFlags(flags, "--touch", "FILL", "--strategies", "pool", "--attribution", "per-buffer", "--max-allocs", "1e3", "--devices", "0-2", "--host-reserve", "off")
	if err != nil || o.plan.Touch != result.TouchFill || len(o.plan.Strategies) != 1 || o.plan.Strategies[0] != result.Pool || !o.plan.PerBuffer ||
		o.MaxAllocs.N != 1000 || len(o.Devices.Indices) != 3 || !o.HostReserve.Off {
		t.Errorf("parsed: %v; touch %q, strategies %v, per-buffer %v, max-allocs %d, devices %v, reserve off %v", err, o.plan.Touch,
			o.plan.Strategies, o.plan.PerBuffer, o.MaxAllocs.N, o.Devices.Indices, o.HostReserve.Off)
	}
}

// A value that does not parse says the command's own line, which setErrorLine takes back out of the flag
// package's wrapping; any other flag error is not one of a value's.
func TestSetErrorLine(t *testing.T) {
	var o runOptions
	flags := jobFlags(&o.runtimeOptions, &o.outputOptions, &o.jobOptions, &o)
	for _, c := range []struct {
		args []string
		line string
	}{
		{[]string{"--touch", "write"}, `--touch: unknown touch mode "write" (choose from none, fill, kernel)`},
		{[]string{"--max-allocs", "0"}, "--max-allocs must be positive, got 0"},
		{[]string{"--repeat", `a" for flag -x: y`}, `--repeat: "a\" for flag -x: y" is not a count: give a number such as 1000 or 1e3`},
		{[]string{"--timeout", "soon"}, `--timeout: duration "soon" does not parse (examples: 90s, 5m, 1h30m)`},
	} {
		err := parseFlags(flags, c.args...)
		if line, ok := setErrorLine(err); !ok || line != c.line {
			t.Errorf("%v: %v: line %q, %v; want %q", c.args, err, line, ok, c.line)
		}
	}
	if _, ok := setErrorLine(parseFlags(flags, "--tuch", "fill")); ok {
		t.Errorf("an undefined flag was taken for a value's error")
	}
}
