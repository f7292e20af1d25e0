package main

// Typed flag values (restic's typed flag values): a flag is parsed when it is set, into the type its command
// uses (a size, a count, a duration, a device list, an enum), so an options struct holds values, not
// strings that are parsed again later. A value's Set error is the whole line the user sees, worded as the
// commands worded it before their flags were typed; setErrorLine takes it back out of the flag package's
// wrapping, in one place.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/urfave/cli/v2"
)

// valueFlag is a flag of a typed value, with its default set through the value (so it is parsed as any
// value is) and shown as a string flag shows its default, quoted.
func valueFlag(name string, v cli.Generic, def, usage string, aliases ...string) *cli.GenericFlag {
	f := &cli.GenericFlag{Name: name, Aliases: aliases, Value: v, Usage: usage}
	if def != "" {
		if err := v.Set(def); err != nil {
			panic(fmt.Sprintf("--%s: the default %q does not parse: %v", name, def, err))
		}
		f.DefaultText = strconv.Quote(def)
	}
	return f
}

// setErrorLine is the line a typed value's Set said, taken out of the flag package's wrapping of it
// (invalid value "X" for flag -NAME: LINE); ok is false for any other error.
func setErrorLine(err error) (line string, ok bool) {
	const head, mid = "invalid value ", " for flag -"
	msg := err.Error()
	if !strings.HasPrefix(msg, head) {
		return "", false
	}
	q, qerr := strconv.QuotedPrefix(msg[len(head):])
	if qerr != nil {
		return "", false
	}
	rest, found := strings.CutPrefix(msg[len(head)+len(q):], mid)
	if !found {
		return "", false
	}
	_, line, ok = strings.Cut(rest, ": ")
	return line, ok
}

// typed is what a flag was given, as typed, for the messages that quote it.
type typed struct {
	flag string // --name, as messages say it
	Text string
}

func (t *typed) String() string { return t.Text }

// sizeValue is a size in bytes (1MiB, 1.5GB, 1MiB+4KiB); with emptyIsNone, "" is none given, 0 bytes.
type sizeValue struct {
	typed
	Bytes       uint64
	emptyIsNone bool
}

func (v *sizeValue) Set(s string) error {
	v.Text, v.Bytes = s, 0
	if s == "" && v.emptyIsNone {
		return nil
	}
	b, err := units.ParseSize(s)
	if err != nil {
		return fmt.Errorf("%s: %v", v.flag, err)
	}
	v.Bytes = b
	return nil
}

// sizeFlag binds a size flag to v; a flag without a default may be given "", as if not given.
func sizeFlag(v *sizeValue, name, def, usage string) cli.Flag {
	v.flag, v.emptyIsNone = "--"+name, def == ""
	return valueFlag(name, v, def, usage)
}

// sizeList is a comma-separated list of sizes (run --sizes); "" is none given.
type sizeList struct {
	typed
	Bytes []uint64
	Texts []string // each as typed, for the note on a decimal unit
}

func (v *sizeList) Set(s string) error {
	v.Text, v.Bytes, v.Texts = s, nil, nil
	if s == "" {
		return nil
	}
	for _, t := range strings.Split(s, ",") {
		b, err := units.ParseSize(t)
		if err != nil {
			return fmt.Errorf("%s: %v", v.flag, err)
		}
		v.Bytes, v.Texts = append(v.Bytes, b), append(v.Texts, t)
	}
	return nil
}

// countValue is a count as users type it (ParseCount), at least least.
type countValue struct {
	typed
	N     uint64
	least uint64
}

func (v *countValue) Set(s string) error {
	n, err := ParseCount(s)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %v", v.flag, err)
	case n < v.least && v.least == 1:
		return fmt.Errorf("%s must be positive, got %s", v.flag, strings.TrimSpace(s))
	case n < v.least:
		return fmt.Errorf("%s must be at least %d, got %s", v.flag, v.least, strings.TrimSpace(s))
	}
	v.Text, v.N = s, n
	return nil
}

// countFlag binds a count flag to v, which must be at least least.
func countFlag(v *countValue, name, def string, least uint64, usage string) cli.Flag {
	v.flag, v.least = "--"+name, least
	return valueFlag(name, v, def, usage)
}

// durationValue is a positive duration (ParseDuration); with zeroIsNone, "0" is none (trace --timeout).
type durationValue struct {
	typed
	D          time.Duration
	zeroIsNone bool
}

func (v *durationValue) Set(s string) error {
	if v.zeroIsNone && s == "0" {
		v.Text, v.D = s, 0
		return nil
	}
	d, err := ParseDuration(s)
	if err != nil {
		if v.zeroIsNone {
			return fmt.Errorf("%s: %v (or 0 for no limit)", v.flag, err)
		}
		return fmt.Errorf("%s: %v", v.flag, err)
	}
	v.Text, v.D = s, d
	return nil
}

// durationFlag binds a duration flag to v.
func durationFlag(v *durationValue, name, def, usage string, aliases ...string) cli.Flag {
	v.flag = "--" + name
	return valueFlag(name, v, def, usage, aliases...)
}

// percentValue is a tolerance, typed as a percentage and held as a fraction.
type percentValue struct {
	typed
	Fraction float64
}

func (v *percentValue) Set(s string) error {
	f, err := ParsePercent(s)
	if err != nil {
		return fmt.Errorf("%s: %v", v.flag, err)
	}
	v.Text, v.Fraction = s, f
	return nil
}

// toleranceFlag is --tolerance of compare, merge and check.
func toleranceFlag(v *percentValue, usage string) cli.Flag {
	v.flag = "--tolerance"
	return valueFlag("tolerance", v, comparison.TolerancePercent, usage)
}

// deviceList is --devices: the indices within the platform; nil is all of them.
type deviceList struct {
	typed
	Indices []int
}

func (v *deviceList) Set(s string) error {
	d, err := ParseDeviceList(s)
	if err != nil {
		return fmt.Errorf("--devices: %v", err)
	}
	v.Text, v.Indices = s, d
	return nil
}

// strategyList is --strategies, bound to where the strategies go.
type strategyList struct {
	typed
	dest *[]result.Strategy
}

func (v *strategyList) Set(s string) error {
	st, err := ParseStrategies(s)
	if err != nil {
		return fmt.Errorf("--strategies: %v", err)
	}
	v.Text, *v.dest = s, st
	return nil
}

// touchValue is --touch, bound to the touch mode of the plan: the flag's value is the engine's enum.
type touchValue struct {
	typed
	dest *result.Touch
}

func (v *touchValue) Set(s string) error {
	t, err := ParseTouch(s)
	if err != nil {
		return fmt.Errorf("--touch: %v", err)
	}
	v.Text, *v.dest = s, t
	return nil
}

// attributionValue is --attribution, bound to the plan's choice of a wait after every buffer.
type attributionValue struct {
	typed
	dest *bool
}

func (v *attributionValue) Set(s string) error {
	switch s {
	case probe.AttributionBatched, probe.AttributionPerBuffer:
		v.Text, *v.dest = s, s == probe.AttributionPerBuffer
		return nil
	}
	return fmt.Errorf("--attribution %q%s: choose %s or %s", s, suggestion(s, []string{probe.AttributionBatched, probe.AttributionPerBuffer}),
		probe.AttributionBatched, probe.AttributionPerBuffer)
}

// memFlagsValue is one set of cl_mem_flags (largest --flags, report --flags); "" is none given.
type memFlagsValue struct {
	typed
	Flags result.MemFlags
}

func (v *memFlagsValue) Set(s string) error {
	v.Text, v.Flags = s, 0
	if s == "" {
		return nil
	}
	f, err := result.ParseMemFlags(s)
	if err != nil {
		return fmt.Errorf("%s: %v", v.flag, err)
	}
	v.Flags = f
	return nil
}

// formatValue is --format: a format name its command takes, with the format it names where the command
// renders one kind of document.
type formatValue struct {
	typed
	Format *report.Format
	lookup func(name string) (*report.Format, error)
}

func (v *formatValue) Set(s string) error {
	f, err := v.lookup(s)
	if err != nil {
		return err
	}
	v.Text, v.Format = s, f
	return nil
}

// Name is the format's name, as given.
func (v *formatValue) Name() string { return v.Text }

// ofKind looks a format up among those of one kind of document.
func ofKind(k report.Kind) func(string) (*report.Format, error) {
	return func(name string) (*report.Format, error) { return lookupFormat(name, k) }
}

// formatFlag binds --format to v, taking the names lookup finds.
func formatFlag(v *formatValue, def, usage string, lookup func(string) (*report.Format, error)) cli.Flag {
	v.flag, v.lookup = "--format", lookup
	return valueFlag("format", v, def, usage)
}

// memFlagsFlag binds a flag of one set of cl_mem_flags to v.
func memFlagsFlag(v *memFlagsValue, name, def, usage string) cli.Flag {
	v.flag = "--" + name
	return valueFlag(name, v, def, usage)
}
