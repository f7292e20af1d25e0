package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/urfave/cli/v2"
)

// jobOptions are the flags that say what a run's jobs are and how each is bounded and watched: run's, which
// remedy takes too, to start from the job they describe. The touch mode, the strategies, the budget in
// buffers, the time limits and the sampling interval are set by their flags straight into the plan.
type jobOptions struct {
	plan             probe.Plan // without platform, devices, sizes, flag sets and variants
	Strategies       strategyList
	Touch            touchValue
	Attribution      attributionValue
	MaxAllocs        amount
	Timeout, Hang    durationValue
	SampleInterval   durationValue
	Size, PoolSize   amount
	MaxBytes         amount
	Sizes            sizeList
	Flags, FlagSets  flagSetsValue
	HostReserve      amount
	Variants         variantList
	Presets          presetsValue
	NoDefaultVariant bool
	RuntimeLog       bool
	likeConflicts    []string // the flags given that --like cannot take with it
	commandLine      []string
}

// given takes from the command line what the flags' values do not say: which flags were given (--like
// takes none of those that name sizes and flags), and the command line itself.
func (j *jobOptions) given(c *cli.Context) {
	j.commandLine = os.Args
	for _, name := range []string{"size", "sizes", "flags", "flag-sets"} {
		if c.IsSet(name) {
			j.likeConflicts = append(j.likeConflicts, "--"+name)
		}
	}
}

// validate checks the rules between the job flags that their values alone cannot say. It has no side
// effects.
func (j jobOptions) validate() error {
	if j.PoolSize.Text != "" && !slices.Contains(j.plan.Strategies, result.Pool) {
		return usageErr("--pool-size is the pool strategy's: add pool to --strategies")
	}
	if j.Flags.Text != "" && j.FlagSets.Text != "" {
		return usageErr("--flags and --flag-sets both name the buffers' flags: give one (--flag-sets for a sweep)")
	}
	return nil
}

// planned is the plan of the jobs the flags ask for, before the runtime says which platform and devices
// there are, and the notes to say first (a decimal size). like is a traced program whose sizes and flag
// sets the jobs take (run --like, read from likePath), or nil.
func (j jobOptions) planned(rt runtimeOptions, like *result.Like, likePath string) (probe.Plan, []string, error) {
	p := j.plan
	p.Library, p.Command, p.ToolVersion = rt.library(), result.RedactArgs(j.commandLine), version
	p.MaxAllocs, p.MaxBytes, p.PoolSize = j.MaxAllocs.N, j.MaxBytes.N, j.PoolSize.N
	p.Limits = probe.Limits{Setup: rt.Setup.D, Total: j.Timeout.D, Hang: j.Hang.D}
	p.SampleInterval = j.SampleInterval.D
	var notes []string
	if like != nil {
		p.Like, p.Sizes = like, like.Sizes
		for _, name := range like.Flags {
			f, err := result.ParseMemFlags(name)
			if err != nil {
				return p, nil, usageErr("--like %s: flags %s: %v", likePath, name, err)
			}
			if f != result.DefaultFlags || len(like.Flags) > 1 {
				p.FlagSets = append(p.FlagSets, f)
			}
		}
	} else {
		p.Sizes, notes = j.sizes()
		p.FlagSets = j.flagSets()
	}
	if err := j.budgets(p); err != nil {
		return p, nil, err
	}
	var err error
	if p.HostReserve, err = j.reserve(); err != nil {
		return p, nil, err
	}
	if j.Presets.List {
		return p, notes, nil // the presets are listed, nothing runs
	}
	p.Variants, err = j.variants()
	return p, notes, err
}

// sizes are the buffer sizes --size (one) or --sizes (a sweep) name, and a note for each typed in a
// decimal unit.
func (j jobOptions) sizes() (sizes []uint64, notes []string) {
	flag, bytes, texts := "--size", []uint64{j.Size.N}, []string{j.Size.Text}
	if j.Sizes.Text != "" {
		flag, bytes, texts = "--sizes", j.Sizes.Bytes, j.Sizes.Texts()
	}
	for i, b := range bytes {
		if note := decimalNote(flag, texts[i], b); note != "" {
			notes = append(notes, note)
		}
	}
	return bytes, notes
}

// flagSets are the flag sets --flags (one set) or --flag-sets (a sweep) ask for; nil: the default alone.
func (j jobOptions) flagSets() []result.MemFlags {
	sets := j.Flags.Sets
	if j.FlagSets.Text != "" {
		sets = j.FlagSets.Sets
	}
	if len(sets) == 1 && sets[0] == result.DefaultFlags {
		return nil // the user's loop: a plain run
	}
	return sets
}

// budgets refuses a pool smaller than a buffer, a size listed twice and a byte budget that makes no buffer.
func (j jobOptions) budgets(p probe.Plan) error {
	for _, size := range p.Sizes {
		if j.PoolSize.Text != "" && p.PoolSize < size {
			return usageErr("--pool-size %s is smaller than one buffer of %s", j.PoolSize.Text, units.Size(size))
		}
	}
	seen := map[uint64]bool{}
	for _, size := range p.Sizes {
		if seen[size] {
			return usageErr("--sizes: %s is listed twice", units.Size(size))
		}
		seen[size] = true
		if p.Budget(size) == 0 {
			return usageErr("--max-bytes %s is less than the buffer size %s: not one buffer would be made", j.MaxBytes.Text, units.Size(size))
		}
	}
	return nil
}

// variants are the variants the flags ask for, in order: the default (unless left out or placed
// explicitly), the presets', then --variant's. Only the default: nil, a plain run.
func (j jobOptions) variants() ([]result.Variant, error) {
	var out []result.Variant
	if !j.NoDefaultVariant && !slices.Contains(j.Variants.Texts, result.DefaultVariant) { // unless placed explicitly
		out = append(out, result.Variant{Name: result.DefaultVariant})
	}
	for _, p := range j.Presets.Presets {
		out = append(out, p.Variants...)
	}
	for _, v := range j.Variants.Variants {
		if j.NoDefaultVariant && v.Name == result.DefaultVariant {
			return nil, usageErr("--variant default and --no-default-variant contradict each other")
		}
		out = append(out, v)
	}
	seen := map[string]bool{}
	for _, v := range out {
		if seen[v.Name] {
			return nil, usageErr("variant %s is given twice (a preset may already name it)", v.Name)
		}
		seen[v.Name] = true
	}
	switch {
	case len(out) == 0:
		return nil, usageErr("--no-default-variant leaves no variant to run: add --variant or --variant-preset")
	case len(out) == 1 && out[0].Name == result.DefaultVariant:
		return nil, nil
	}
	return out, nil
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

// variantList is --variant, which may be given many times: each NAME:KEY=VALUE[,KEY=VALUE...] is read as
// it is given.
type variantList struct {
	Texts    []string // as typed
	Variants []result.Variant
}

func (v *variantList) Set(s string) error {
	x, err := ParseVariant(s)
	if err != nil {
		return fmt.Errorf("--variant %v", err)
	}
	v.Texts, v.Variants = append(v.Texts, s), append(v.Variants, x)
	return nil
}

func (v *variantList) String() string { return strings.Join(v.Texts, ", ") }

// presetsValue is --variant-preset, which may be given many times: a known runtime switch's presets, or
// list (print them).
type presetsValue struct {
	Names   []string
	Presets []probe.Preset
	List    bool
}

func (v *presetsValue) Set(s string) error {
	if s == "list" {
		v.Names, v.List = append(v.Names, s), true
		return nil
	}
	p, ok := probe.PresetNamed(s)
	if !ok {
		return fmt.Errorf("--variant-preset %q%s: no such preset (clmemprobe run --variant-preset list shows them)", s, suggestion(s, presetNames()))
	}
	v.Names, v.Presets = append(v.Names, s), append(v.Presets, p)
	return nil
}

func (v *presetsValue) String() string { return strings.Join(v.Names, ", ") }

// flagSetsValue is run --flags (one set of cl_mem_flags) or --flag-sets (a sweep of sets separated by ';').
type flagSetsValue struct {
	typed
	Sets  []result.MemFlags
	sweep bool
}

func (v *flagSetsValue) Set(s string) error {
	v.Text, v.Sets = s, nil
	if s == "" {
		return nil
	}
	sets := []string{s}
	if v.sweep {
		sets = strings.Split(s, ";")
	}
	for _, set := range sets {
		if strings.TrimSpace(set) == "" && v.sweep {
			return fmt.Errorf("--flag-sets %q has an empty set: separate sets by one ';'", s)
		}
		f, err := result.ParseMemFlags(set)
		if err != nil {
			var unknown *result.UnknownFlagError
			if errors.As(err, &unknown) {
				return fmt.Errorf("%s: unknown flag %q%s: choose %s, a C name (CL_MEM_...) or a raw value such as 0x800000", v.flag, unknown.Name,
					suggestion(unknown.Name, result.FlagNames()), strings.Join(result.FlagNames(), ", "))
			}
			return fmt.Errorf("%s: %v", v.flag, err)
		}
		if slices.Contains(v.Sets, f) {
			return fmt.Errorf("%s: %s is listed twice", v.flag, f)
		}
		v.Sets = append(v.Sets, f)
	}
	return nil
}

// hostReserveFlag is run's --host-reserve: a size of at least probe.LeastHostReserve, 0 or off (the guard
// off), or "" for the default.
func hostReserveFlag(v *amount, usage string) cli.Flag {
	v.parse = func(s string) (uint64, bool, error) {
		switch s {
		case "0", "off":
			return 0, true, nil // the guard is off: runRun says so on stderr
		case "":
			return 0, false, nil
		}
		b, err := units.ParseSize(s)
		if err != nil {
			return 0, false, fmt.Errorf("--host-reserve: %v (or 0 to turn the host guard off)", err)
		}
		if b < probe.LeastHostReserve {
			return 0, false, fmt.Errorf("--host-reserve %s is too small to protect the machine: give at least %s (the kernel keeps tens of MiB free for itself and the OOM killer acts before available memory nears zero, so a smaller reserve would stop nothing), or 0 to turn the guard off",
				s, units.Size(probe.LeastHostReserve))
		}
		return b, false, nil
	}
	return valueFlag("host-reserve", v, "", usage)
}

// reserve is the host guard's reserve: the one given, none when the guard is off, else the default.
func (j jobOptions) reserve() (uint64, error) {
	switch v := j.HostReserve; {
	case v.Off:
		return 0, nil
	case v.Text != "":
		return v.N, nil
	}
	r, err := defaultHostReserve()
	if err != nil {
		return 0, usageErr("%v", err)
	}
	return r, nil
}

// flagSetsFlag binds run's --flags (one set) or --flag-sets (a sweep) to v.
func flagSetsFlag(v *flagSetsValue, name, usage string) cli.Flag {
	v.flag, v.sweep = "--"+name, name == "flag-sets"
	return valueFlag(name, v, "", usage)
}

// sizesFlag binds run's --sizes to v.
func sizesFlag(v *sizeList, usage string) cli.Flag {
	v.flag = "--sizes"
	return valueFlag("sizes", v, "", usage)
}
