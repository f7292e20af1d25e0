package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// runOptions are the flags of `run`.
type runOptions struct {
	runtimeOptions
	outputOptions
	jobOptions
	Repeat     amount // how many times each job runs
	Like       string // a trace.json whose sizes and flags the jobs take
	Out, Prom  string // the run's folder, and the Prometheus textfile to replace at the end
	Force      bool
	DryRun     bool
	devicesSet bool
	args       []string
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
		Flags:        jobFlags(&o.runtimeOptions, &o.outputOptions, &o.jobOptions, &o),
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			o.devicesSet = c.IsSet("devices")
			o.jobOptions.given(c)
			return runRun(c.Context, o, stdout, stderr)
		},
	}
}

// jobFlags are run's flags, bound to the groups: remedy takes the same ones but run's own (run nil), to
// start from the job they describe.
func jobFlags(rt *runtimeOptions, out *outputOptions, j *jobOptions, run *runOptions) []cli.Flag {
	p := &j.plan
	j.Strategies.dest, j.Touch.dest, j.Attribution.dest = &p.Strategies, &p.Touch, &p.PerBuffer
	flags := []cli.Flag{
		rt.libraryFlag(), rt.platformFlag(), rt.devicesFlag("device indices within the platform: all, 0,1 or 0-3"),
		valueFlag("strategies", &j.Strategies, "shared,per-device,migrate-first", "comma-separated: shared, per-device, migrate-first, device-list, pool, or all"),
		sizeFlag(&j.PoolSize, "pool-size", "", "the pool strategy's pool buffer size (default: each device's maximum allocation; see clmemprobe largest for what a device really takes)"),
		sizeFlag(&j.Size, "size", "1MiB", "buffer size: KiB, MiB, GiB, TiB are powers of 1024 (K, M, G, T and Ki, Mi, Gi, Ti too: 1M is 1 MiB), KB, MB, GB, TB powers of 1000 (1MB is 10^6 bytes, said on stderr); sums such as 1MiB+4KiB"),
		sizesFlag(&j.Sizes, "a sweep: comma-separated sizes, each run with every strategy (overrides --size)"),
		countFlag(&j.MaxAllocs, "max-allocs", "100000", 1, "buffers per strategy (the user's loop runs 100000); 1e5 is the same"),
	}
	if run != nil {
		flags = append(flags, countFlag(&run.Repeat, "repeat", "1", 1, "run each job this many times, each in its own worker, and record how many runs reproduced its first failure and where (the ticket's reproduction rate); at most "+strconv.Itoa(maxRepeat)))
	}
	flags = append(flags,
		sizeFlag(&j.MaxBytes, "max-bytes", "", "stop each strategy after this many bytes of buffers (default: no byte limit)"),
		flagSetsFlag(&j.Flags, "flags", "the cl_mem_flags of every buffer, comma-separated and combined: "+strings.Join(result.FlagNames(), ", ")+
			"; a C name (CL_MEM_ALLOC_HOST_PTR) or a raw value for vendor flags (0x800000); read-write is implied without read-only or write-only (default: read-write, the user's loop)"),
		flagSetsFlag(&j.FlagSets, "flag-sets", "a sweep: flag sets separated by ';', flags within a set by '+' or ',' (\"read-write;use-host-ptr;alloc-host-ptr\"), each run with every strategy"))
	if run != nil {
		flags = append(flags, &cli.StringFlag{Name: "like", Destination: &run.Like, Usage: "a trace.json of your program (clmemprobe trace --out): run every strategy with its buffer sizes and flag sets (the most created first, up to " +
			fmt.Sprint(likeMax) + " of each) on as many devices as its failing context had, and hold the strategies against where it failed"})
	}
	flags = append(flags,
		valueFlag("touch", &j.Touch, "none", "what to do to each buffer after creating it: none, fill, kernel"),
		durationFlag(&j.Timeout, "timeout", "10m", "time limit per strategy; past it the strategy is stopped"),
		durationFlag(&j.Hang, "hang-timeout", "60s", "a loop without progress for this long is declared hung"),
		rt.setupFlag(),
		hostReserveFlag(&j.HostReserve, "stop a strategy before system available memory falls below this, and in a memory cgroup with a limit before its free memory falls below the smaller of this and a sixteenth of the limit; at least "+units.Size(probe.LeastHostReserve)+" (less cannot protect anything: the kernel acts first), or 0 to turn the guard off, the address space it keeps under ulimit -v included (default: $CLMEMPROBE_HOST_RESERVE, else the larger of 1GiB and 5% of RAM)"),
		durationFlag(&j.SampleInterval, "sample-interval", "10ms", "least time between memory samples (the host guard keeps its own 5 ms cadence)"))
	if run != nil {
		flags = append(flags,
			&cli.StringFlag{Name: "out", Destination: &run.Out, Usage: "folder to write run.json, samples.jsonl (every sample, as it comes), run.png and timeline.json (for Perfetto and chrome://tracing) into (created if missing; one run at a time)"},
			&cli.StringFlag{Name: "prom", Destination: &run.Prom, Usage: "also write the result as Prometheus metrics to this file, replaced atomically (for node_exporter's textfile collector, name it *.prom)"},
			&cli.BoolFlag{Name: "force", Destination: &run.Force, Usage: "replace the result a --out folder already holds"},
			&cli.BoolFlag{Name: "dry-run", Destination: &run.DryRun, Usage: "print the plan (jobs, budgets, the most host and device memory each could take) and allocate nothing"})
	}
	flags = append(flags,
		repeatable(&j.Variants, "variant", "run every strategy also under these runtime settings, in its own workers: NAME:KEY=VALUE[,KEY=VALUE...] (repeatable)"),
		&cli.BoolFlag{Name: "no-default-variant", Destination: &j.NoDefaultVariant, Usage: "leave out the runtime's own settings (the variant named default)"},
		repeatable(&j.Presets, "variant-preset", "add the documented variants of a known runtime switch (repeatable); list shows them"),
		valueFlag("attribution", &j.Attribution, probe.AttributionBatched, "how a failure the runtime reports late is pinned to its buffer: batched (one wait per batch of up to 64 buffers, the failed command found by its event) or per-buffer (a wait after every buffer)"),
		&cli.BoolFlag{Name: "runtime-log", Destination: &j.RuntimeLog, Usage: "turn on the runtime's documented logging in the workers and keep what it prints (bounded)"},
		formatFlag(&out.Format, "table", "output on stdout: table, json or markdown", runFormat),
		out.outputFlag("write the --format output (what stdout would get) to this file instead of stdout; not --out, the folder of run.json, samples.jsonl, run.png and timeline.json"))
	if run != nil {
		flags = append(flags, out.wideFlag())
	}
	return append(flags, out.quietFlag(),
		out.verboseFlag("print the plan (jobs, budgets, worst cases) on stderr before the run, and every finding under the table (not only the "+strconv.Itoa(findings.BriefBullets)+" that matter most)"))
}

// sizeUnit is a unit of size alone: what is left over when a size is written with a space ("1.5 MB").
var sizeUnit = regexp.MustCompile(`^(?i:[KMGT]i?B|B)$`)

// runFormats are the formats run prints on stdout (charts go to --out).
var runFormats = []string{"table", "json", "markdown"}

// runFormat takes a format run prints: run renders several kinds of document in it (the run, a plan, the
// presets), so it names no one format.
func runFormat(name string) (*report.Format, error) {
	if !slices.Contains(runFormats, name) {
		return nil, fmt.Errorf("--format %q%s: choose %s", name, suggestion(name, runFormats), strings.Join(runFormats, ", "))
	}
	return nil, nil
}

// validate checks the rules between run's flags that their values alone cannot say. It has no side effects.
func (o runOptions) validate() error {
	if len(o.args) > 0 {
		if sizeUnit.MatchString(o.args[0]) {
			return usageErr("run takes no arguments, got %q: a size is one argument: write it without a space (--size 1.5MB) or quote it (--size '%s %s')", o.args[0], o.Size.Text, o.args[0])
		}
		return usageErr("run takes no arguments, got %q (see clmemprobe run --help)", o.args[0])
	}
	if err := o.quietOrVerbose(); err != nil {
		return err
	}
	if o.Like != "" && len(o.likeConflicts) > 0 {
		return usageErr("--like takes the sizes and flags from the trace: leave out %s", strings.Join(o.likeConflicts, ", "))
	}
	if o.Repeat.N > maxRepeat {
		return usageErr("--repeat %s: at most %d (each run is a whole job, to its failure)", o.Repeat.Text, maxRepeat)
	}
	return o.jobOptions.validate()
}

// spacedSize refuses a run's size written with a space (--size 1.5 MB) before its flags are parsed: the
// number alone may not parse as a size, and the unit left over as an argument says what was meant.
func spacedSize(app *cli.App, args []string) error {
	if len(args) < 3 || args[1] != "run" {
		return nil
	}
	flags, rest := splitArgs(app.Command("run"), args[2:])
	if len(rest) == 0 || !sizeUnit.MatchString(rest[0]) {
		return nil
	}
	size := "1MiB" // the default
	for i, f := range flags {
		name, value, hasValue := strings.Cut(strings.TrimLeft(f, "-"), "=")
		switch {
		case !strings.HasPrefix(f, "-"): // a value
		case name == "size" && hasValue:
			size = value
		case name == "size" && i+1 < len(flags):
			size = flags[i+1]
		}
	}
	return usageErr("run takes no arguments, got %q: a size is one argument: write it without a space (--size 1.5MB) or quote it (--size '%s %s')", rest[0], size, rest[0])
}

// planned is the plan of the jobs run's flags ask for, before the runtime says which platform and devices
// there are (devices: the indices asked for, nil for all), and the notes to say first. It reads --like's
// trace.
func (o runOptions) planned() (p probe.Plan, devices []int, notes []string, err error) {
	var like *result.Like
	if o.Like != "" {
		if like, err = loadLike(o.Like); err != nil {
			return p, nil, nil, err
		}
	}
	if p, notes, err = o.jobOptions.planned(o.runtimeOptions, like, o.Like); err != nil {
		return p, nil, nil, err
	}
	p.Repeat = int(o.Repeat.N)
	devices = o.Devices.Indices
	if like != nil && like.ContextDevices > 0 && !o.devicesSet {
		devices = nil
		for i := 0; i < like.ContextDevices; i++ {
			devices = append(devices, i) // as many as the program's failing (else largest) context had
		}
	}
	return p, devices, notes, nil
}

// maxRepeat bounds --repeat: a reproduction rate needs a few runs, not a soak test.
const maxRepeat = 100

// likeMax is how many of a traced program's sizes, and of its flag sets, run --like takes.
const likeMax = 4

// loadLike reads the traced program of run --like: its sizes and flag sets, the most created first.
func loadLike(path string) (*result.Like, error) {
	t, err := result.LoadTrace(resultPath(path)) // a trace's folder stands for its trace.json
	switch {
	case err != nil:
		return nil, usageErr("--like %s: %v", path, err)
	case t == nil:
		return nil, usageErr("--like %s is not a trace (clmemprobe trace --out DIR writes trace.json)", path)
	}
	like := result.LikeOf(t, likeMax)
	if len(like.Sizes) == 0 {
		return nil, usageErr("--like %s: the traced program created no buffer, so there is nothing to run like it", path)
	}
	return &like, nil
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

// placed completes a plan with the platform and devices the runtime has.
func placed(p probe.Plan, inv result.Inventory, platform string, devices []int) (probe.Plan, error) {
	var err error
	if p.Platform, err = selectPlatform(inv, platform); err != nil {
		return p, err
	}
	if p.Devices, err = selectDevices(inv, p.Platform, devices); err != nil {
		return p, err
	}
	return p, nil
}

func runRun(ctx context.Context, o runOptions, stdout, stderr io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	plan, devices, notes, err := o.planned()
	if err != nil {
		return err
	}
	if err := o.checkOutputs(); err != nil {
		return err
	}
	if o.Presets.List {
		return o.emit(stdout, "table", report.KindPresets, presetList())
	}
	for _, note := range notes {
		fmt.Fprintln(stderr, "clmemprobe:", note)
	}
	var out *outputDir
	if o.Out != "" && !o.DryRun {
		if out, err = openOutputDir(o.Out, o.Force); err != nil {
			return err
		}
		defer out.close()
	}
	if plan.HostReserve == 0 && !o.DryRun {
		fmt.Fprintln(stderr, "clmemprobe: --host-reserve "+o.HostReserve.Text+": the host guard is off; the kernel's OOM killer (the machine's, or a memory cgroup's) may end the workers, and a run may leave the machine short of memory")
	}
	ctx, stop := withInterrupt(ctx, stderr)
	defer stop()
	// The environment block is collected while the runtime lists its devices and the first job starts: both
	// take a moment.
	envc := make(chan *result.Environment, 1)
	go func() { envc <- probe.Environment(plan.Library) }()
	inv, err := probe.Describe(ctx, plan.Library, plan.Limits.Setup)
	if err != nil {
		return err
	}
	if plan, err = placed(plan, inv, o.Platform, devices); err != nil {
		return err
	}
	for _, note := range sizeNotes(inv, plan.Platform, plan.Devices, plan.Sizes, plan.FlagSets) {
		fmt.Fprintln(stderr, "clmemprobe:", note)
	}
	plan.Began, plan.EnvironmentLater = began, envc
	if o.RuntimeLog {
		name := inv[plan.Platform].Platform.Name
		if plan.RuntimeLog, _ = probe.RuntimeLogFor(result.VendorOf(inv[plan.Platform].Platform)); plan.RuntimeLog == nil {
			fmt.Fprintf(stderr, "clmemprobe: no documented logging for platform %q; what the workers print is kept all the same\n", name)
		}
	}
	if o.DryRun {
		format := o.Format.Name()
		if format == "markdown" {
			format = "table"
		}
		return o.emit(stdout, format, report.KindPlan, plan.DryRun(inv))
	}
	if o.Verbose {
		live := plan.DryRun(inv)
		live.Live = true
		if err := renderWide(stderr, "table", live, o.Wide); err != nil {
			return err
		}
	}
	progress := stderr
	if o.Quiet {
		progress = io.Discard
	}
	obs := newRunObserver(progress, out)
	run, runErr := probe.Run(ctx, plan, inv, obs)
	interrupted := errors.Is(runErr, context.Canceled)
	if runErr != nil && !interrupted {
		return runErr
	}
	return finishRun(judge.Run(run), o, out, interrupted, stdout, stderr)
}

// checkOutputs refuses, before any work, a --prom or --output file the run must not write: one that
// checkOutput refuses, one of the run's own files in --out, or the two flags naming one file.
func (o runOptions) checkOutputs() error {
	for _, f := range []struct{ flag, path string }{{"--prom", o.Prom}, {"--output", o.Output}} {
		// Said first: the name is wrong wherever the folder is, and --out's folder may not be made yet.
		if name := resultFileOf(f.path, o.Out); f.path != "" && name != "" {
			return usageErr("%s %s is the run's own %s in --out; give it another name", f.flag, f.path, name)
		}
		if err := checkOutput(f.flag, f.path); err != nil {
			return err
		}
	}
	if o.Prom != "" && o.Output != "" && (o.Prom == o.Output || same(o.Prom, o.Output)) {
		return usageErr("--prom and --output both name %s: give each its own file", o.Output)
	}
	return nil
}

// emit writes doc in format where the run's output goes: the --output file, else stdout.
func (o *outputOptions) emit(stdout io.Writer, format string, kind report.Kind, doc any) error {
	f, err := lookupFormat(format, kind)
	if err != nil {
		return err
	}
	return emit(stdout, o.Output, f, doc, o.Wide, func(opts *report.Options) {
		opts.AllFindings, opts.MoreHint = o.Verbose, "-v lists them here"
	})
}

// finishRun writes the judged run where it goes (the --out folder, --prom, stdout) and says how it ended,
// in the exit code.
func finishRun(j findings.Judged, o runOptions, out *outputDir, interrupted bool, stdout, stderr io.Writer) error {
	run := j.Run()
	// What could not be written is said after the table, which stdout still gets.
	var writeErr error
	var written []string
	if out != nil {
		if err := joinErrors(out.writeRun(j), out.writeChart(j), out.writeTimeline(j), out.samplesErr()); err != nil {
			writeErr = fmt.Errorf("could not write all of the result in %s: %v (run.json holds the last version that could be written)", o.Out, err)
		}
		written = out.written()
	}
	if o.Prom != "" {
		if err := renderFile(o.Prom, "prom", j); err != nil {
			writeErr = joinErrors(writeErr, err)
		} else {
			written = append(written, o.Prom)
		}
	}
	if err := o.emit(stdout, o.Format.Name(), report.KindRun, j); err != nil {
		if writeErr != nil {
			// Said with what else could not be written, in one line, and not lost behind it.
			return outputErr("%v", joinErrors(writeErr, err))
		}
		return err
	}
	if o.Output != "" {
		written = append(written, o.Output)
	}
	if len(written) > 0 && writeErr == nil && !o.Quiet {
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
