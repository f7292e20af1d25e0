package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// runOptions are the flags of `run`, as given.
type runOptions struct {
	OpenCLLib, Platform, Devices, Strategies string
	Size, Sizes, MaxBytes, HostReserve       string
	MaxAllocs                                string // a count: 1e5 as well as 100000
	Repeat                                   string // a count: how many times each job runs
	PoolSize                                 string
	Touch                                    string
	Flags, FlagSets                          string
	Like                                     string // a trace.json whose sizes and flags the jobs take
	likeConflicts                            []string
	devicesSet                               bool
	Timeout, HangTimeout, SetupTimeout       string
	SampleInterval, Out, Format, Prom        string
	Output                                   string // -o: the --format output, not --out's folder
	Attribution                              string
	Force, Wide, DryRun                      bool
	Variants, Presets                        []string
	NoDefaultVariant, RuntimeLog             bool
	Quiet, Verbose                           bool
	args, commandLine                        []string
}

// runRequest is what valid runOptions ask for, before the runtime says which devices exist.
type runRequest struct {
	plan       probe.Plan // without platform and devices
	platform   string
	devices    []int // nil: all
	out        string
	prom       string // the Prometheus textfile to replace at the end
	force      bool
	format     string
	output     string // the file the --format output goes to instead of stdout; empty: stdout
	wide       bool
	dryRun     bool
	runtimeLog bool
	// reserveTyped is --host-reserve as typed ("off" or "0"), for the warning that the guard is off.
	reserveTyped string
	presets      bool     // --variant-preset list: print the presets
	notes        []string // said once on stderr before anything runs (a decimal size)
	quiet        bool     // no progress line and no "wrote" line on stderr; errors still are
	verbose      bool     // the plan on stderr before the run
}

func runCommand(stdout, stderr io.Writer) *cli.Command {
	var o runOptions
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
   pool            one context per device; each buffer a sub-buffer (clCreateSubBuffer) of a pool buffer of
                   --pool-size (default: the device's maximum allocation), a new pool when one is full
Touch modes: none (create only: the user's loop), fill (clEnqueueFillBuffer), kernel (a kernel writes it).
Runtimes that allocate at first use fail at the touch, not at create: the first failure is reported with
the exact buffer index and the stage where it surfaced (setup, create, touch, migrate, finish).

Each strategy runs in a child process: a crash, OOM kill or hang of the runtime becomes that strategy's
outcome (crashed, hung) and the others still run. --setup-timeout bounds loading the runtime and creating
contexts and kernels; --hang-timeout bounds a loop that stops moving. A host guard reads available memory
every 5 ms, and before each buffer that could cross --host-reserve at the measured cost per buffer, and
stops the strategy before it does; under an address-space limit the workers inherit (ulimit -v) it also
keeps 64 MiB of that limit free. Ctrl-C writes a partial result; a second Ctrl-C exits at once.

` + withOutFolder(exitCodesWith(map[int]string{exitOK: "the run did what was asked; " + runExitOK,
			exitInterrupted: "interrupted with Ctrl-C: " + runInterrupted + " (what was written so far stays)"},
			exitOK, exitUsage, exitNoOpenCL, exitOutput, exitWorkerFault, exitInterrupted), "an "),
		Flags:        runFlags(&o),
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args, o.commandLine = c.Args().Slice(), os.Args
			for _, name := range []string{"size", "sizes", "flags", "flag-sets"} {
				if c.IsSet(name) {
					o.likeConflicts = append(o.likeConflicts, "--"+name)
				}
			}
			o.devicesSet = c.IsSet("devices")
			o.Variants, o.Presets = c.StringSlice("variant"), c.StringSlice("variant-preset")
			return runRun(c.Context, o, stdout, stderr)
		},
	}
}

// runFlags are run's flags, bound to o: remedy takes the same ones, to start from the job they describe.
func runFlags(o *runOptions) []cli.Flag {
	return []cli.Flag{
		openclLibFlag(&o.OpenCLLib),
		&cli.StringFlag{Name: "platform", Destination: &o.Platform, Usage: "platform index or part of its name (default: the first platform with devices)"},
		&cli.StringFlag{Name: "devices", Value: "all", Destination: &o.Devices, Usage: "device indices within the platform: all, 0,1 or 0-3"},
		&cli.StringFlag{Name: "strategies", Value: "shared,per-device,migrate-first", Destination: &o.Strategies, Usage: "comma-separated: shared, per-device, migrate-first, device-list, pool, or all"},
		&cli.StringFlag{Name: "pool-size", Destination: &o.PoolSize, Usage: "the pool strategy's pool buffer size (default: each device's maximum allocation; see clmemprobe largest for what a device really takes)"},
		&cli.StringFlag{Name: "size", Value: "1MiB", Destination: &o.Size, Usage: "buffer size: KiB, MiB, GiB, TiB are powers of 1024 (K, M, G, T and Ki, Mi, Gi, Ti too: 1M is 1 MiB), KB, MB, GB, TB powers of 1000 (1MB is 10^6 bytes, said on stderr); sums such as 1MiB+4KiB"},
		&cli.StringFlag{Name: "sizes", Destination: &o.Sizes, Usage: "a sweep: comma-separated sizes, each run with every strategy (overrides --size)"},
		&cli.StringFlag{Name: "max-allocs", Value: "100000", Destination: &o.MaxAllocs, Usage: "buffers per strategy (the user's loop runs 100000); 1e5 is the same"},
		&cli.StringFlag{Name: "repeat", Value: "1", Destination: &o.Repeat, Usage: "run each job this many times, each in its own worker, and record how many runs reproduced its first failure and where (the ticket's reproduction rate); at most " + strconv.Itoa(maxRepeat)},
		&cli.StringFlag{Name: "max-bytes", Destination: &o.MaxBytes, Usage: "stop each strategy after this many bytes of buffers (default: no byte limit)"},
		&cli.StringFlag{Name: "flags", Destination: &o.Flags, Usage: "the cl_mem_flags of every buffer, comma-separated and combined: " + strings.Join(result.FlagNames(), ", ") +
			"; a C name (CL_MEM_ALLOC_HOST_PTR) or a raw value for vendor flags (0x800000); read-write is implied without read-only or write-only (default: read-write, the user's loop)"},
		&cli.StringFlag{Name: "flag-sets", Destination: &o.FlagSets, Usage: "a sweep: flag sets separated by ';', flags within a set by '+' or ',' (\"read-write;use-host-ptr;alloc-host-ptr\"), each run with every strategy"},
		&cli.StringFlag{Name: "like", Destination: &o.Like, Usage: "a trace.json of your program (clmemprobe trace --out): run every strategy with its buffer sizes and flag sets (the most created first, up to " +
			fmt.Sprint(likeMax) + " of each) on as many devices as its failing context had, and hold the strategies against where it failed"},
		&cli.StringFlag{Name: "touch", Value: "none", Destination: &o.Touch, Usage: "what to do to each buffer after creating it: none, fill, kernel"},
		&cli.StringFlag{Name: "timeout", Value: "10m", Destination: &o.Timeout, Usage: "time limit per strategy; past it the strategy is stopped"},
		&cli.StringFlag{Name: "hang-timeout", Value: "60s", Destination: &o.HangTimeout, Usage: "a loop without progress for this long is declared hung"},
		setupTimeoutFlag(&o.SetupTimeout),
		&cli.StringFlag{Name: "host-reserve", Destination: &o.HostReserve, Usage: "stop a strategy before system available memory falls below this, and in a memory cgroup with a limit before its free memory falls below the smaller of this and a sixteenth of the limit; at least " + units.Size(probe.LeastHostReserve) + " (less cannot protect anything: the kernel acts first), or 0 to turn the guard off, the address space it keeps under ulimit -v included (default: $CLMEMPROBE_HOST_RESERVE, else the larger of 1GiB and 5% of RAM)"},
		&cli.StringFlag{Name: "sample-interval", Value: "10ms", Destination: &o.SampleInterval, Usage: "least time between memory samples (the host guard keeps its own 5 ms cadence)"},
		&cli.StringFlag{Name: "out", Destination: &o.Out, Usage: "folder to write run.json, samples.jsonl (every sample, as it comes), run.png and timeline.json (for Perfetto and chrome://tracing) into (created if missing; one run at a time)"},
		&cli.StringFlag{Name: "prom", Destination: &o.Prom, Usage: "also write the result as Prometheus metrics to this file, replaced atomically (for node_exporter's textfile collector, name it *.prom)"},
		&cli.BoolFlag{Name: "force", Destination: &o.Force, Usage: "replace the result a --out folder already holds"},
		&cli.BoolFlag{Name: "dry-run", Destination: &o.DryRun, Usage: "print the plan (jobs, budgets, the most host and device memory each could take) and allocate nothing"},
		&cli.StringSliceFlag{Name: "variant", Usage: "run every strategy also under these runtime settings, in its own workers: NAME:KEY=VALUE[,KEY=VALUE...] (repeatable)"},
		&cli.BoolFlag{Name: "no-default-variant", Destination: &o.NoDefaultVariant, Usage: "leave out the runtime's own settings (the variant named default)"},
		&cli.StringSliceFlag{Name: "variant-preset", Usage: "add the documented variants of a known runtime switch (repeatable); list shows them"},
		&cli.StringFlag{Name: "attribution", Value: probe.AttributionBatched, Destination: &o.Attribution, Usage: "how a failure the runtime reports late is pinned to its buffer: batched (one wait per batch of up to 64 buffers, the failed command found by its event) or per-buffer (a wait after every buffer)"},
		&cli.BoolFlag{Name: "runtime-log", Destination: &o.RuntimeLog, Usage: "turn on the runtime's documented logging in the workers and keep what it prints (bounded)"},
		&cli.StringFlag{Name: "format", Value: "table", Destination: &o.Format, Usage: "output on stdout: table, json or markdown"},
		outputFlag(&o.Output, "write the --format output (what stdout would get) to this file instead of stdout; not --out, the folder of run.json, samples.jsonl, run.png and timeline.json"),
		&cli.BoolFlag{Name: "wide", Destination: &o.Wide, Usage: "show every column of a table, however wide the terminal"},
		quietFlag(&o.Quiet),
		&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Destination: &o.Verbose, Usage: "print the plan (jobs, budgets, worst cases) on stderr before the run, and every finding under the table (not only the " + strconv.Itoa(findings.BriefBullets) + " that matter most)"},
	}
}

// sizeUnit is a unit of size alone: what is left over when a size is written with a space ("1.5 MB").
var sizeUnit = regexp.MustCompile(`^(?i:[KMGT]i?B|B)$`)

// runFormats are the formats run prints on stdout (charts go to --out).
var runFormats = []string{"table", "json", "markdown"}

// validate checks every flag that can be checked without OpenCL. It has no side effects.
func (o runOptions) validate() (*runRequest, error) {
	if len(o.args) > 0 {
		if sizeUnit.MatchString(o.args[0]) {
			return nil, usageErr("run takes no arguments, got %q: a size is one argument: write it without a space (--size 1.5MB) or quote it (--size '%s %s')", o.args[0], o.Size, o.args[0])
		}
		return nil, usageErr("run takes no arguments, got %q (see clmemprobe run --help)", o.args[0])
	}
	if o.Quiet && o.Verbose {
		return nil, usageErr("--quiet and --verbose contradict each other: give one")
	}
	r := &runRequest{platform: o.Platform, out: o.Out, prom: o.Prom, force: o.Force, format: o.Format, output: o.Output, wide: o.Wide, dryRun: o.DryRun,
		quiet: o.Quiet, verbose: o.Verbose, reserveTyped: o.HostReserve}
	p := &r.plan
	p.Library, p.Command, p.ToolVersion = probe.LibraryPath(o.OpenCLLib), result.RedactArgs(o.commandLine), version
	if err := o.parseJobs(p, &r.notes); err != nil {
		return nil, err
	}
	if err := o.parseLimits(p); err != nil {
		return nil, err
	}
	var err error
	if !slices.Contains(runFormats, o.Format) {
		return nil, usageErr("--format %q%s: choose %s", o.Format, suggestion(o.Format, runFormats), strings.Join(runFormats, ", "))
	}
	if r.devices, err = ParseDeviceList(o.Devices); err != nil {
		return nil, usageErr("--devices: %v", err)
	}
	if l := p.Like; l != nil && l.ContextDevices > 0 && !o.devicesSet {
		r.devices = nil
		for i := 0; i < l.ContextDevices; i++ {
			r.devices = append(r.devices, i) // as many as the program's failing (else largest) context had
		}
	}
	switch o.Attribution {
	case probe.AttributionBatched:
	case probe.AttributionPerBuffer:
		p.PerBuffer = true
	default:
		return nil, usageErr("--attribution %q%s: choose %s or %s", o.Attribution, suggestion(o.Attribution, []string{probe.AttributionBatched, probe.AttributionPerBuffer}),
			probe.AttributionBatched, probe.AttributionPerBuffer)
	}
	if slices.Contains(o.Presets, "list") {
		r.presets = true
		return r, nil
	}
	if p.Variants, err = o.variants(); err != nil {
		return nil, err
	}
	r.runtimeLog = o.RuntimeLog
	return r, nil
}

// parseJobs puts into the plan what its jobs are: the strategies, the sizes and each job's budget.
func (o runOptions) parseJobs(p *probe.Plan, notes *[]string) error {
	var err error
	if p.Strategies, err = ParseStrategies(o.Strategies); err != nil {
		return usageErr("--strategies: %v", err)
	}
	if o.Like != "" {
		if err := o.parseLike(p); err != nil {
			return err
		}
	} else if err := o.parseSizesAndFlags(p, notes); err != nil {
		return err
	}
	var repeat uint64
	if err := parseCounts(countFlag{"max-allocs", o.MaxAllocs, &p.MaxAllocs, 1}, countFlag{"repeat", o.Repeat, &repeat, 1}); err != nil {
		return err
	}
	if repeat > maxRepeat {
		return usageErr("--repeat %s: at most %d (each run is a whole job, to its failure)", o.Repeat, maxRepeat)
	}
	p.Repeat = int(repeat)
	if o.PoolSize != "" {
		if p.PoolSize, err = units.ParseSize(o.PoolSize); err != nil {
			return usageErr("--pool-size: %v", err)
		}
		if !slices.Contains(p.Strategies, result.Pool) {
			return usageErr("--pool-size is the pool strategy's: add pool to --strategies")
		}
		for _, size := range p.Sizes {
			if p.PoolSize < size {
				return usageErr("--pool-size %s is smaller than one buffer of %s", o.PoolSize, units.Size(size))
			}
		}
	}
	if o.MaxBytes != "" {
		if p.MaxBytes, err = units.ParseSize(o.MaxBytes); err != nil {
			return usageErr("--max-bytes: %v", err)
		}
	}
	seen := map[uint64]bool{}
	for _, size := range p.Sizes {
		if seen[size] {
			return usageErr("--sizes: %s is listed twice", units.Size(size))
		}
		seen[size] = true
		if p.Budget(size) == 0 {
			return usageErr("--max-bytes %s is less than the buffer size %s: not one buffer would be made", o.MaxBytes, units.Size(size))
		}
	}
	return nil
}

// maxRepeat bounds --repeat: a reproduction rate needs a few runs, not a soak test.
const maxRepeat = 100

// likeMax is how many of a traced program's sizes, and of its flag sets, run --like takes.
const likeMax = 4

// parseLike puts into the plan the jobs of run --like: the traced program's sizes and flag sets, and the
// budgets as for any run.
func (o runOptions) parseLike(p *probe.Plan) error {
	if len(o.likeConflicts) > 0 {
		return usageErr("--like takes the sizes and flags from the trace: leave out %s", strings.Join(o.likeConflicts, ", "))
	}
	t, err := result.LoadTrace(resultPath(o.Like)) // a trace's folder stands for its trace.json
	switch {
	case err != nil:
		return usageErr("--like %s: %v", o.Like, err)
	case t == nil:
		return usageErr("--like %s is not a trace (clmemprobe trace --out DIR writes trace.json)", o.Like)
	}
	like := result.LikeOf(t, likeMax)
	if len(like.Sizes) == 0 {
		return usageErr("--like %s: the traced program created no buffer, so there is nothing to run like it", o.Like)
	}
	p.Like, p.Sizes = &like, like.Sizes
	for _, name := range like.Flags {
		f, err := result.ParseMemFlags(name)
		if err != nil {
			return usageErr("--like %s: flags %s: %v", o.Like, name, err)
		}
		if f != result.DefaultFlags || len(like.Flags) > 1 {
			p.FlagSets = append(p.FlagSets, f)
		}
	}
	return nil
}

// parseSizesAndFlags puts into the plan the sizes and flag sets the flags name.
func (o runOptions) parseSizesAndFlags(p *probe.Plan, notes *[]string) error {
	flag, sizes := "--size", []string{o.Size}
	if o.Sizes != "" {
		flag, sizes = "--sizes", strings.Split(o.Sizes, ",")
	}
	for _, typed := range sizes {
		s, err := units.ParseSize(typed)
		if err != nil {
			return usageErr("%s: %v", flag, err)
		}
		p.Sizes = append(p.Sizes, s)
		if note := decimalNote(flag, typed, s); note != "" {
			*notes = append(*notes, note)
		}
	}
	var err error
	p.FlagSets, err = o.flagSets()
	return err
}

// flagSets are the flag sets --flags (one set) or --flag-sets (a sweep) ask for; nil: the default alone.
func (o runOptions) flagSets() ([]result.MemFlags, error) {
	flag, sets := "--flags", []string{o.Flags}
	switch {
	case o.Flags != "" && o.FlagSets != "":
		return nil, usageErr("--flags and --flag-sets both name the buffers' flags: give one (--flag-sets for a sweep)")
	case o.FlagSets != "":
		flag, sets = "--flag-sets", strings.Split(o.FlagSets, ";")
	case o.Flags == "":
		return nil, nil
	}
	var out []result.MemFlags
	for _, s := range sets {
		if strings.TrimSpace(s) == "" && flag == "--flag-sets" {
			return nil, usageErr("--flag-sets %q has an empty set: separate sets by one ';'", o.FlagSets)
		}
		f, err := result.ParseMemFlags(s)
		if err != nil {
			var unknown *result.UnknownFlagError
			if errors.As(err, &unknown) {
				return nil, usageErr("%s: unknown flag %q%s: choose %s, a C name (CL_MEM_...) or a raw value such as 0x800000", flag, unknown.Name,
					suggestion(unknown.Name, result.FlagNames()), strings.Join(result.FlagNames(), ", "))
			}
			return nil, usageErr("%s: %v", flag, err)
		}
		if slices.Contains(out, f) {
			return nil, usageErr("%s: %s is listed twice", flag, f)
		}
		out = append(out, f)
	}
	if len(out) == 1 && out[0] == result.DefaultFlags {
		return nil, nil // the user's loop: a plain run
	}
	return out, nil
}

// parseLimits puts into the plan how each job is bounded and watched: the touch mode, the time limits, the
// sampling interval and the host guard's reserve.
func (o runOptions) parseLimits(p *probe.Plan) error {
	var err error
	if p.Touch, err = ParseTouch(o.Touch); err != nil {
		return usageErr("--touch: %v", err)
	}
	for _, d := range []struct {
		flag, value string
		dest        *time.Duration
	}{{"--timeout", o.Timeout, &p.Limits.Total}, {"--hang-timeout", o.HangTimeout, &p.Limits.Hang},
		{"--setup-timeout", o.SetupTimeout, &p.Limits.Setup}, {"--sample-interval", o.SampleInterval, &p.SampleInterval}} {
		if *d.dest, err = ParseDuration(d.value); err != nil {
			return usageErr("%s: %v", d.flag, err)
		}
	}
	switch o.HostReserve {
	case "0", "off":
		p.HostReserve = 0 // the guard is off: runRun says so on stderr
	case "":
		if p.HostReserve, err = defaultHostReserve(); err != nil {
			return usageErr("%v", err)
		}
	default:
		if p.HostReserve, err = units.ParseSize(o.HostReserve); err != nil {
			return usageErr("--host-reserve: %v (or 0 to turn the host guard off)", err)
		}
		if p.HostReserve < probe.LeastHostReserve {
			return usageErr("--host-reserve %s is too small to protect the machine: give at least %s (the kernel keeps tens of MiB free for itself and the OOM killer acts before available memory nears zero, so a smaller reserve would stop nothing), or 0 to turn the guard off",
				o.HostReserve, units.Size(probe.LeastHostReserve))
		}
	}
	return nil
}

// decimalNote says what a size typed in a decimal unit is, once: in OpenCL work a decimal unit is almost
// always a slip for the binary one, but it may be meant, so it is said and not refused.
func decimalNote(flag, typed string, bytes uint64) string {
	binary, ok := units.BinaryReading(typed)
	if !ok {
		return ""
	}
	used := fmt.Sprintf("%s %s is %s bytes (decimal)", flag, strings.TrimSpace(typed), units.Grouped(bytes))
	meant, err := units.ParseSize(binary)
	if err != nil {
		// The binary reading is no whole number of bytes (1.1MiB): the size used is still worth saying.
		return fmt.Sprintf("%s; %s would not be a whole number of bytes", used, binary)
	}
	return fmt.Sprintf("%s; %s is %s", used, binary, units.Grouped(meant))
}

// variants are the variants the flags ask for, in order: the default (unless left out or placed
// explicitly), the presets', then --variant's. Only the default: nil, a plain run.
func (o runOptions) variants() ([]result.Variant, error) {
	var out []result.Variant
	explicitDefault := false
	for _, s := range o.Variants {
		explicitDefault = explicitDefault || s == result.DefaultVariant
	}
	if !o.NoDefaultVariant && !explicitDefault {
		out = append(out, result.Variant{Name: result.DefaultVariant})
	}
	for _, name := range o.Presets {
		p, ok := probe.PresetNamed(name)
		if !ok {
			return nil, usageErr("--variant-preset %q%s: no such preset (clmemprobe run --variant-preset list shows them)", name, suggestion(name, presetNames()))
		}
		out = append(out, p.Variants...)
	}
	for _, s := range o.Variants {
		v, err := ParseVariant(s)
		if err != nil {
			return nil, usageErr("--variant %v", err)
		}
		if o.NoDefaultVariant && v.Name == result.DefaultVariant {
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

// planFor completes the plan with the platform and devices the runtime has.
func (r *runRequest) planFor(inv result.Inventory) (probe.Plan, error) {
	p := r.plan
	var err error
	if p.Platform, err = selectPlatform(inv, r.platform); err != nil {
		return p, err
	}
	if p.Devices, err = selectDevices(inv, p.Platform, r.devices); err != nil {
		return p, err
	}
	return p, nil
}

func runRun(ctx context.Context, o runOptions, stdout, stderr io.Writer) error {
	req, err := o.validate()
	if err != nil {
		return err
	}
	if err := req.checkOutputs(); err != nil {
		return err
	}
	if req.presets {
		return req.emit(stdout, "table", report.KindPresets, presetList())
	}
	for _, note := range req.notes {
		fmt.Fprintln(stderr, "clmemprobe:", note)
	}
	var out *outputDir
	if req.out != "" && !req.dryRun {
		if out, err = openOutputDir(req.out, req.force); err != nil {
			return err
		}
		defer out.close()
	}
	if req.plan.HostReserve == 0 && !req.dryRun {
		fmt.Fprintln(stderr, "clmemprobe: --host-reserve "+req.reserveTyped+": the host guard is off; the kernel's OOM killer (the machine's, or a memory cgroup's) may end the workers, and a run may leave the machine short of memory")
	}
	ctx, stop := withInterrupt(ctx, stderr)
	defer stop()
	// The environment block is collected while the runtime lists its devices and the first job starts: both
	// take a moment.
	envc := make(chan *result.Environment, 1)
	go func() { envc <- probe.Environment(req.plan.Library) }()
	inv, err := probe.Describe(ctx, req.plan.Library, req.plan.Limits.Setup)
	if err != nil {
		return err
	}
	plan, err := req.planFor(inv)
	if err != nil {
		return err
	}
	for _, note := range sizeNotes(inv, plan.Platform, plan.Devices, plan.Sizes, plan.FlagSets) {
		fmt.Fprintln(stderr, "clmemprobe:", note)
	}
	plan.Began, plan.EnvironmentLater = began, envc
	if req.runtimeLog {
		name := inv[plan.Platform].Platform.Name
		if plan.RuntimeLog, _ = probe.RuntimeLogFor(result.VendorOf(inv[plan.Platform].Platform)); plan.RuntimeLog == nil {
			fmt.Fprintf(stderr, "clmemprobe: no documented logging for platform %q; what the workers print is kept all the same\n", name)
		}
	}
	if req.dryRun {
		format := req.format
		if format == "markdown" {
			format = "table"
		}
		return req.emit(stdout, format, report.KindPlan, plan.DryRun(inv))
	}
	if req.verbose {
		live := plan.DryRun(inv)
		live.Live = true
		if err := renderWide(stderr, "table", live, req.wide); err != nil {
			return err
		}
	}
	progress := stderr
	if req.quiet {
		progress = io.Discard
	}
	obs := newRunObserver(progress, out)
	run, runErr := probe.Run(ctx, plan, inv, obs)
	interrupted := errors.Is(runErr, context.Canceled)
	if runErr != nil && !interrupted {
		return runErr
	}
	return finishRun(judge.Run(run), req, out, interrupted, stdout, stderr)
}

// checkOutputs refuses, before any work, a --prom or --output file the run must not write: one that
// checkOutput refuses, one of the run's own files in --out, or the two flags naming one file.
func (r *runRequest) checkOutputs() error {
	for _, f := range []struct{ flag, path string }{{"--prom", r.prom}, {"--output", r.output}} {
		// Said first: the name is wrong wherever the folder is, and --out's folder may not be made yet.
		if name := resultFileOf(f.path, r.out); f.path != "" && name != "" {
			return usageErr("%s %s is the run's own %s in --out; give it another name", f.flag, f.path, name)
		}
		if err := checkOutput(f.flag, f.path); err != nil {
			return err
		}
	}
	if r.prom != "" && r.output != "" && (r.prom == r.output || same(r.prom, r.output)) {
		return usageErr("--prom and --output both name %s: give each its own file", r.output)
	}
	return nil
}

// emit writes doc in format where the run's output goes: the --output file, else stdout.
func (r *runRequest) emit(stdout io.Writer, format string, kind report.Kind, doc any) error {
	f, err := lookupFormat(format, kind)
	if err != nil {
		return err
	}
	return emit(stdout, r.output, f, doc, r.wide, func(o *report.Options) {
		o.AllFindings, o.MoreHint = r.verbose, "-v lists them here"
	})
}

// finishRun writes the judged run where it goes (the --out folder, --prom, stdout) and says how it ended,
// in the exit code.
func finishRun(j findings.Judged, req *runRequest, out *outputDir, interrupted bool, stdout, stderr io.Writer) error {
	run := j.Run()
	// What could not be written is said after the table, which stdout still gets.
	var writeErr error
	var written []string
	if out != nil {
		if err := joinErrors(out.writeRun(j), out.writeChart(j), out.writeTimeline(j), out.samplesErr()); err != nil {
			writeErr = fmt.Errorf("could not write all of the result in %s: %v (run.json holds the last version that could be written)", req.out, err)
		}
		written = out.written()
	}
	if req.prom != "" {
		if err := renderFile(req.prom, "prom", j); err != nil {
			writeErr = joinErrors(writeErr, err)
		} else {
			written = append(written, req.prom)
		}
	}
	if err := req.emit(stdout, req.format, report.KindRun, j); err != nil {
		if writeErr != nil {
			// Said with what else could not be written, in one line, and not lost behind it.
			return outputErr("%v", joinErrors(writeErr, err))
		}
		return err
	}
	if req.output != "" {
		written = append(written, req.output)
	}
	if len(written) > 0 && writeErr == nil && !req.quiet {
		fmt.Fprintf(stderr, "clmemprobe: wrote %s\n", strings.Join(written, ", "))
	}
	switch {
	case writeErr != nil:
		return &exitError{exitOutput, writeErr}
	case interrupted:
		fmt.Fprintln(stderr, "clmemprobe: interrupted; the result holds the strategies run so far")
		return &exitError{exitInterrupted, nil}
	case anyOutcome(run, result.OutcomeCrashed, result.OutcomeHung, result.OutcomeWrong):
		return &exitError{exitWorkerFault, nil}
	}
	return nil
}

func anyOutcome(r *result.Run, outcomes ...result.Outcome) bool {
	for _, s := range r.Jobs {
		if slices.Contains(outcomes, s.Outcome) {
			return true
		}
	}
	return false
}

// presetList is the list run --variant-preset list prints.
func presetList() *report.PresetList {
	l := &report.PresetList{}
	for _, p := range probe.Presets {
		l.Presets = append(l.Presets, report.PresetEntry{Name: p.Name, Runtime: p.Runtime, Purpose: p.Purpose, Variants: p.Variants, Source: p.Source})
	}
	return l
}
