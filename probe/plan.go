// Package probe is clmemprobe's engine. Every call into an OpenCL runtime happens in a supervised child
// process (this binary, re-executed): the allocation loop of each strategy, the listing of platforms and
// devices, the halo exchange. The parent supervises each child (set-up and hang time limits, a total time
// limit, a host-memory backstop, interrupts), collects its events and builds the result. The engine never
// prints and never writes files: it reports through an Observer and returns its result.
//
// The engine is split by process. This package is the API the commands use (Plan, Run, Describe,
// Exchange, the errors) and the parent's own work: the collector that turns a worker's events into its
// result, the fit, the presets. probe/internal/wire is the protocol both processes speak;
// probe/internal/supervise starts, watches and ends a child; probe/internal/worker is the child itself
// (RunChild, the allocation loop, the host guard, the process limits), which links nothing that renders.
package probe

import (
	"fmt"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Plan is a validated request for a probe run, built by the command line from its flags and the runtime's
// inventory; the engine never sees flags.
type Plan struct {
	Library    string
	Platform   int
	Devices    []int // positions within the platform
	Strategies []result.Strategy
	Sizes      []uint64 // one sweep step per size; usually one
	MaxAllocs  uint64
	MaxBytes   uint64 // 0: no byte budget
	Touch      result.Touch
	// Like is the traced program the jobs were taken from (run --like), recorded in the result.
	Like *result.Like
	// FlagSets are the cl_mem_flags each strategy runs with, one sweep step per set; nil is the user's
	// loop's CL_MEM_READ_WRITE alone.
	FlagSets []result.MemFlags
	Limits   Limits
	// HostReserve: a strategy stops before system available memory falls below it.
	HostReserve uint64
	// root is where the host's files are read; the zero value is the real host (sample.System).
	root sample.Root
	// cgroup is the memory cgroup with a limit that the run's processes are in, found when the run starts.
	cgroup *sample.Cgroup
	// startNofile is the soft descriptor limit the command was started with (shellNofile), which every
	// worker sets again; 0 where it could not be read.
	startNofile uint64
	// SampleInterval is the least time between samples; the worker also keeps its sampling under about
	// 5% of the loop's time, so it samples less often when a sample is slow.
	SampleInterval time.Duration
	// Variants are the runtime settings each strategy runs under, each in its own workers; nil is the
	// runtime's defaults alone.
	Variants []result.Variant
	// PerBuffer waits for the device after every buffer instead of once per batch.
	PerBuffer bool
	// RuntimeLog are logging variables set for every worker (run --runtime-log).
	RuntimeLog map[string]string
	// Began is when the command started, for the run's startup time; zero: when Run was called.
	Began time.Time
	// Environment is the environment block, when the caller collected it already (while the runtime was
	// listing its devices); nil: Run collects it, or takes it from EnvironmentLater, where the caller is
	// still collecting it: once the first job has ended (the run's first checkpoint goes without it), so
	// that the package database and /proc, 50-60 ms and more on a loaded machine, do not hold the first
	// worker's start.
	Environment      *result.Environment
	EnvironmentLater <-chan *result.Environment
	// Repeat is how many times each job runs, each time in its own worker (0 and 1: once): the runs after
	// the first are recorded as the job's repeats, so that a report can say how often its failure came back.
	Repeat int
	// PoolSize is the pool strategy's pool buffer size; 0: each device's maximum allocation.
	PoolSize uint64
	// Command is the command line that reproduces the run; ToolVersion the build that ran it.
	Command     []string
	ToolVersion string
}

// Limits bound the time a child may take: Setup bounds loading the runtime, enumerating, creating contexts
// and queues and building kernels; Hang the time a loop may go without progress (no buffer done, no stage
// entered); Total one strategy from start to end (0 is no bound).
type Limits = supervise.Limits

// hostRoot is where the run reads the host: the real one, or the fixture a test set.
func (p *Plan) hostRoot() sample.Root {
	if p.root == (sample.Root{}) {
		return sample.System
	}
	return p.root
}

// Budget returns how many allocations a strategy makes at a given buffer size: the smaller of MaxAllocs
// and MaxBytes divided by the size.
func (p *Plan) Budget(size uint64) uint64 {
	c := result.Config{MaxAllocs: p.MaxAllocs, MaxBytes: p.MaxBytes}
	return c.Budget(size)
}

// Job is one strategy at one buffer size under one variant: what one worker process runs.
type Job struct {
	Strategy result.Strategy
	Size     uint64
	Devices  []int
	Budget   uint64
	Variant  result.Variant // Name "" for the runtime's defaults
	Flags    result.MemFlags
}

// flagSets are the plan's flag sets: the default's alone when none were asked for.
func (p *Plan) flagSets() []result.MemFlags {
	if len(p.FlagSets) == 0 {
		return []result.MemFlags{result.DefaultFlags}
	}
	return p.FlagSets
}

// variants are the plan's variants; the default variant's name is "" in jobs and results.
func (p *Plan) variants() []result.Variant {
	if len(p.Variants) == 0 {
		return []result.Variant{{}}
	}
	out := make([]result.Variant, len(p.Variants))
	for i, v := range p.Variants {
		v.Name = result.JobVariant(v.Name)
		out[i] = v
	}
	return out
}

// jobs lists the plan's jobs in the order they run: at the first size and the first flag set, every
// strategy under the first variant, then under the next; then the next flag set; then the next size.
func (p *Plan) jobs() []Job {
	var out []Job
	for _, size := range p.Sizes {
		for _, f := range p.flagSets() {
			for _, v := range p.variants() {
				for _, st := range p.Strategies {
					out = append(out, Job{Strategy: st, Size: size, Devices: p.Devices, Budget: p.Budget(size), Variant: v, Flags: f})
				}
			}
		}
	}
	return out
}

// env is what a job's worker gets on top of this process's environment: the logging variables, then the
// variant's settings, less its limits (RLIMIT_ keys), which the worker sets itself (limits).
func (p *Plan) env(j Job) []string {
	vars := make(map[string]string, len(j.Variant.Settings))
	for k, v := range j.Variant.Settings {
		if !result.IsLimitSetting(k) {
			vars[k] = v
		}
	}
	return append(result.Assignments(p.RuntimeLog), result.Assignments(vars)...)
}

// limits are the soft limits a job's worker sets before its runtime loads: the descriptor limit this
// command was started with (shellNofile; left out where it could not be read), then the variant's RLIMIT_
// settings over it. nil: none.
func (p *Plan) limits(j Job) (map[string]uint64, error) {
	out := map[string]uint64{}
	if p.startNofile > 0 {
		out["RLIMIT_NOFILE"] = p.startNofile
	}
	for k, v := range j.Variant.Settings {
		if !result.IsLimitSetting(k) {
			continue
		}
		n, err := result.LimitValue(k, v)
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", result.VariantName(j.Variant.Name), err)
		}
		out[k] = n
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// Observer hears about a run while it goes. Calls come from one goroutine at a time.
type Observer interface {
	// RunStarted is called once with the result before any job ran (marked partial): a first checkpoint.
	// The runs an observer gets are snapshots (result.Run.Snapshot): the engine goes on with its own.
	RunStarted(run *result.Run)
	// JobStarted is called before a job's worker starts.
	JobStarted(j Job)
	// Progress is called a few times a second while a job runs.
	Progress(p Progress)
	// Sample is called for every sample the worker takes, as it arrives.
	Sample(j Job, s *result.Sample)
	// JobDone is called when a job has ended, with the run so far (marked partial): a checkpoint.
	JobDone(j Job, run *result.Run)
}

// Progress is a job's state, reported a few times a second.
type Progress struct {
	Job Job
	// Run is which run of the job this is (1-based) of Runs (run --repeat); Runs is 1 without repeats.
	Run, Runs   int
	Allocations uint64
	RSSBytes    uint64
	Elapsed     time.Duration
}

// DryRun describes what the plan would do, with nothing allocated: every job and the most memory it could
// take. On the host, a copy of every buffer (runtimes that stage buffers in host memory, CPU devices); on
// each device, every buffer of a context over several devices (a runtime that replicates), else the buffers
// meant for it, capped at the device's memory.
func (p *Plan) DryRun(inv result.Inventory) *result.DryRun {
	d := &result.DryRun{Touch: p.Touch, Repeat: p.Repeat, SetupSeconds: p.Limits.Setup.Seconds(), HangSeconds: p.Limits.Hang.Seconds(),
		TimeoutSeconds: p.Limits.Total.Seconds(), HostReserve: p.HostReserve}
	if mi, err := p.hostRoot().Meminfo(); err == nil {
		d.HostAvailable = mi.Available
	}
	if cg, _ := sample.FindCgroup(p.hostRoot()); cg != nil {
		if ws, err := cg.WorkingSet(); err == nil && cg.Limit() > 0 { // as the guard: no reading, no cgroup reserve
			limit := cg.Limit()
			d.CgroupLimit, d.CgroupFree = limit, limit-min(limit, ws)
			if p.HostReserve > 0 {
				d.CgroupReserve = wire.CgroupReserve(p.HostReserve, limit)
			}
		}
	}
	// smallest caps the worst case on a device at the least memory of one: a device of its own cannot hold
	// more. A device whose memory is host memory can (rusticl placed 3.61 GiB on a device that reports
	// 2 GiB), so none caps it.
	var smallest uint64
	unified := false
	if p.Platform < len(inv) {
		d.Platform = inv[p.Platform].Platform
		for _, i := range p.Devices {
			if i < len(inv[p.Platform].Devices) {
				dev := inv[p.Platform].Devices[i]
				d.Devices = append(d.Devices, dev)
				unified = unified || dev.HostUnified
				if smallest == 0 || dev.GlobalMemBytes < smallest {
					smallest = dev.GlobalMemBytes
				}
			}
		}
	}
	n := uint64(max(len(p.Devices), 1))
	for _, j := range p.jobs() {
		bytes := j.Budget * j.Size
		perDevice := (j.Budget + n - 1) / n * j.Size
		if j.Strategy.SharesContext() && j.Strategy != result.DeviceList {
			perDevice = bytes
		}
		if smallest > 0 && !unified {
			perDevice = min(perDevice, smallest)
		}
		d.Jobs = append(d.Jobs, result.DryRunJob{Strategy: j.Strategy, Variant: j.Variant.Name, Flags: j.recordedFlags(), SizeBytes: j.Size,
			Buffers: j.Budget, Bytes: bytes, WorstHostBytes: worstHost(j, bytes), WorstDeviceBytes: perDevice})
	}
	return d
}

// recordedFlags is the job's flags as results record them: "" for the default, as results before flags
// were recorded have it, so that a plain run's results are as they were.
func (j Job) recordedFlags() string {
	if j.Flags == result.DefaultFlags || j.Flags == 0 {
		return ""
	}
	return j.Flags.String()
}

// worstHost is the most host memory a job could take: every buffer's bytes (a runtime may back any buffer
// with host memory), and with use-host-ptr the tool's own block per buffer on top; copy-host-ptr's one
// source block besides.
func worstHost(j Job, bytes uint64) uint64 {
	switch j.Flags.HostPtr() {
	case result.HostPtrUse:
		return 2 * bytes
	case result.HostPtrCopy:
		return bytes + j.Size
	}
	return bytes
}
