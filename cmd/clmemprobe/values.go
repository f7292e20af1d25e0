package main

// Typed flag values (restic's typed flag values): a flag is parsed when it is set, into the type its command
// uses (a size, a count, a duration, a device list, an enum), so an options struct holds values, not
// strings that are parsed again later. A value's Set error is the whole line the user sees, worded as the
// commands worded it before their flags were typed; setErrorLine takes it back out of the flag package's
// wrapping, in one place.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

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

// repeatableFlag is a flag of a typed value that may be given many times, each value added to the last:
// its help shows it as a string slice flag's does.
type repeatableFlag struct{ *cli.GenericFlag }

// IsSliceFlag says, for help, that the flag may be given many times.
func (repeatableFlag) IsSliceFlag() bool { return true }

// String is the flag's line in help, as a slice flag's.
func (f repeatableFlag) String() string { return cli.FlagStringer(f) }

// repeatable binds a flag that may be given many times to v.
func repeatable(v cli.Generic, name, usage string) cli.Flag {
	return repeatableFlag{&cli.GenericFlag{Name: name, Value: v, Usage: usage}}
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

// set parses s into dest and keeps s as typed; what does not parse leaves both as they were and says the
// flag's own line.
func set[T any](t *typed, dest *T, s string, parse func(string) (T, error)) error {
	v, err := parse(s)
	if err != nil {
		return err
	}
	t.Text, *dest = s, v
	return nil
}

// flagged is parse with the flag's name before what it says of a value that does not parse.
func flagged[T any](flag string, parse func(string) (T, error)) func(string) (T, error) {
	return func(s string) (T, error) {
		v, err := parse(s)
		if err != nil {
			return v, fmt.Errorf("%s: %v", flag, err)
		}
		return v, nil
	}
}

// amount is a size in bytes or a count, as the flag that binds it reads it (sizeFlag, countFlag); Off is
// set where the flag also takes a word that turns what it sizes off (run --host-reserve, trace
// --ledger-sample).
type amount struct {
	typed
	N     uint64
	Off   bool
	parse func(string) (n uint64, off bool, err error)
}

func (v *amount) Set(s string) error {
	n, off, err := v.parse(s)
	if err != nil {
		return err
	}
	v.Text, v.N, v.Off = s, n, off
	return nil
}

// sizeFlag binds a size flag to v; a flag without a default may be given "", as if not given.
func sizeFlag(v *amount, name, def, usage string) cli.Flag {
	v.flag = "--" + name
	v.parse = func(s string) (uint64, bool, error) {
		if s == "" && def == "" {
			return 0, false, nil
		}
		n, err := flagged(v.flag, units.ParseSize)(s)
		return n, false, err
	}
	return valueFlag(name, v, def, usage)
}

// sizeList is a comma-separated list of sizes (run --sizes); "" is none given.
type sizeList struct {
	typed
	Bytes []uint64
}

// Texts are the sizes as typed, for the note on a decimal unit.
func (v *sizeList) Texts() []string { return strings.Split(v.Text, ",") }

func (v *sizeList) Set(s string) error {
	return set(&v.typed, &v.Bytes, s, flagged(v.flag, func(s string) (out []uint64, err error) {
		if s == "" {
			return nil, nil
		}
		for _, t := range strings.Split(s, ",") {
			b, err := units.ParseSize(t)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		return out, nil
	}))
}

// countFlag binds a count flag to v, which must be at least least.
func countFlag(v *amount, name, def string, least uint64, usage string) cli.Flag {
	v.flag = "--" + name
	v.parse = func(s string) (uint64, bool, error) {
		n, err := ParseCount(s)
		switch {
		case err != nil:
			return 0, false, fmt.Errorf("%s: %v", v.flag, err)
		case n < least && least == 1:
			return 0, false, fmt.Errorf("%s must be positive, got %s", v.flag, strings.TrimSpace(s))
		case n < least:
			return 0, false, fmt.Errorf("%s must be at least %d, got %s", v.flag, least, strings.TrimSpace(s))
		}
		return n, false, nil
	}
	return valueFlag(name, v, def, usage)
}

// durationValue is a positive duration (ParseDuration); with zeroIsNone, "0" is none (trace --timeout).
type durationValue struct {
	typed
	D          time.Duration
	zeroIsNone bool
}

func (v *durationValue) Set(s string) error {
	return set(&v.typed, &v.D, s, func(s string) (time.Duration, error) {
		if !v.zeroIsNone {
			return flagged(v.flag, ParseDuration)(s)
		}
		if s == "0" {
			return 0, nil
		}
		d, err := ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%s: %v (or 0 for no limit)", v.flag, err)
		}
		return d, nil
	})
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
	return set(&v.typed, &v.Fraction, s, flagged(v.flag, ParsePercent))
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
	return set(&v.typed, &v.Indices, s, flagged("--devices", ParseDeviceList))
}

// strategyList is --strategies, bound to where the strategies go.
type strategyList struct {
	typed
	dest *[]result.Strategy
}

func (v *strategyList) Set(s string) error {
	return set(&v.typed, v.dest, s, flagged("--strategies", ParseStrategies))
}

// touchValue is --touch, bound to the touch mode of the plan: the flag's value is the engine's enum.
type touchValue struct {
	typed
	dest *result.Touch
}

func (v *touchValue) Set(s string) error {
	return set(&v.typed, v.dest, s, flagged("--touch", ParseTouch))
}

// memFlagsValue is one set of cl_mem_flags (largest --flags, report --flags); "" is none given.
type memFlagsValue struct {
	typed
	Flags result.MemFlags
}

func (v *memFlagsValue) Set(s string) error {
	return set(&v.typed, &v.Flags, s, flagged(v.flag, func(s string) (result.MemFlags, error) {
		if s == "" {
			return 0, nil
		}
		return result.ParseMemFlags(s)
	}))
}

// formatValue is --format: a format name its command takes, with the format it names where the command
// renders one kind of document.
type formatValue struct {
	typed
	Format *report.Format
	lookup func(name string) (*report.Format, error)
}

func (v *formatValue) Set(s string) error { return set(&v.typed, &v.Format, s, v.lookup) }

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

// choice is a flag's value that is one of a few words.
type choice struct {
	typed
	words  []string
	refuse func(s string) error // the line for a word not among them
}

func (v *choice) Set(s string) error {
	if !slices.Contains(v.words, s) {
		return v.refuse(s)
	}
	v.Text = s
	return nil
}

// choiceFlag binds a flag of one of words to v; refuse says the line for any other.
func choiceFlag(v *choice, name, def string, words []string, refuse func(string) error, usage string) cli.Flag {
	v.words, v.refuse = words, refuse
	return valueFlag(name, v, def, usage)
}
