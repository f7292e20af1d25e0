package probe

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/env"
	"github.com/clmemprobe/clmemprobe/probe/internal/kernlog"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/trace"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/internal/worker"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// ChildCommand is the hidden command under which the binary re-executes itself as a child. main hands it to
// RunChild before any command-line parsing.
const ChildCommand = wire.ChildCommand

// RunChild is the child process: it reads its spec, runs the job and streams events to the parent. It
// returns the process exit code. Whatever the runtime does to this process (crash, hang, OOM kill), the
// parent learns how far it got from the progress cell.
func RunChild(stdin io.Reader) int { return worker.RunChild(stdin) }

// Attribution modes: how a failure that a runtime reports after the call that caused it is pinned to its
// buffer.
const (
	// AttributionBatched enqueues each buffer's commands with an event and waits for the device once per
	// batch; a failed batch names its first failed command by the events' status.
	AttributionBatched = wire.AttributionBatched
	// AttributionPerBuffer waits for the device after every buffer.
	AttributionPerBuffer = wire.AttributionPerBuffer
)

// sessions are the engine's calls in flight (Run, Describe, Exchange), each with the process groups of its
// children, so that Abort can end them all.
var sessions struct {
	mu   sync.Mutex
	live map[*supervise.Groups]bool
}

// DecoyBytes is what the tool's OOM decoy holds besides its own runtime (supervise.Decoy says why).
const DecoyBytes = wire.DecoyBytes

// decoy is the OOM killer's second choice, ahead of the tool, for every session whose children allocate.
var decoy supervise.Decoy

// session starts one call of the engine: the process groups its children run in, which Abort reaches until
// end is called. A session whose children allocate (allocates) runs beside the OOM decoy.
func session(allocates bool) (groups *supervise.Groups, end func()) {
	groups = &supervise.Groups{}
	if allocates {
		groups.Decoy = &decoy
	}
	sessions.mu.Lock()
	defer sessions.mu.Unlock()
	if sessions.live == nil {
		sessions.live = map[*supervise.Groups]bool{}
	}
	sessions.live[groups] = true
	return groups, func() {
		sessions.mu.Lock()
		defer sessions.mu.Unlock()
		delete(sessions.live, groups)
	}
}

// Abort kills every child process group the engine is running. It is for a second Ctrl-C: the command
// exits at once after it, without waiting for the engine to return.
func Abort() {
	sessions.mu.Lock()
	defer sessions.mu.Unlock()
	for g := range sessions.live {
		g.Kill()
	}
}

// ErrNoOpenCL is matched by every reason the tool cannot reach an OpenCL device: no library, no platform,
// no device, or a runtime that failed, crashed or hung while it was loaded and set up.
var ErrNoOpenCL = errors.New("no OpenCL")

// ErrChildFault is matched by the errors of a runtime that crashed or hung in a child process.
var ErrChildFault = errors.New("the OpenCL runtime crashed or hung")

// childFault is a child that crashed or hung; in set-up it is also an ErrNoOpenCL.
type childFault struct {
	msg   string
	setup bool
}

func (e *childFault) Error() string { return e.msg }

// Is makes errors.Is(err, ErrChildFault) true, and errors.Is(err, ErrNoOpenCL) too for a set-up fault.
func (e *childFault) Is(target error) bool {
	return target == ErrChildFault || (e.setup && target == ErrNoOpenCL)
}

// Run runs every strategy of the plan at every size, one worker process each, one after the other, and
// returns the result. A cancelled ctx (Ctrl-C) stops the worker in flight, records it as stopped and
// returns the result so far, marked partial, with ctx's error. inv is the runtime's inventory, from Describe.
func Run(ctx context.Context, p Plan, inv result.Inventory, obs Observer) (*result.Run, error) {
	if obs == nil {
		obs = nopObserver{}
	}
	if p.Began.IsZero() {
		p.Began = time.Now()
	}
	// The shell that reads the descriptor limit the command was started with runs while the result starts.
	nofile := make(chan uint64, 1)
	go func() {
		n, _ := shellNofile(ctx) // none read: the workers keep the limit the Go runtime gave them
		nofile <- n
	}()
	root := p.hostRoot()
	run := newRun(&p, root, inv)
	// The workers run in this process's memory cgroup: the parent watches it too.
	if cg, _ := sample.FindCgroup(root); cg != nil && cg.Limit() > 0 {
		p.cgroup = cg
	}
	obs.RunStarted(run.Snapshot())
	p.startNofile = <-nofile
	groups, end := session(true)
	defer end()
	klog := kernlog.Start(root)
	defer func() { run.KernelLog = klog.End(workerPIDs(run), []string{workerComm()}) }()
	defer p.takeEnvironment(run) // on an error return too: the run written so far gets its environment

	for _, j := range p.jobs() {
		if ctx.Err() != nil {
			break
		}
		obs.JobStarted(j)
		sr, err := runJob(ctx, &p, j, 1, obs, groups)
		if err != nil {
			return run, err
		}
		for n := 1; n < p.Repeat && ctx.Err() == nil; n++ {
			again, err := runJob(ctx, &p, j, n+1, obs, groups)
			if err != nil {
				return run, err
			}
			sr.Repeats = append(sr.Repeats, result.AttemptOf(again))
		}
		run.Jobs = append(run.Jobs, *sr)
		p.takeEnvironment(run)
		if run.StartupSeconds == 0 {
			if t, err := time.Parse(time.RFC3339Nano, sr.LoopStarted); err == nil {
				run.StartupSeconds = t.Sub(p.Began).Seconds()
			}
		}
		obs.JobDone(j, run.Snapshot())
	}
	run.Partial = ctx.Err() != nil
	run.Ended = time.Now().UTC().Format(time.RFC3339)
	run.ParentPeakRSSBytes = parentPeakRSS(root)
	return run, ctx.Err()
}

// takeEnvironment puts the environment block the caller was still collecting into the run, once: it waits
// for it. The platforms newRun listed in it are kept.
func (p *Plan) takeEnvironment(run *result.Run) {
	if p.Environment != nil || p.EnvironmentLater == nil {
		return
	}
	later, ok := <-p.EnvironmentLater
	p.EnvironmentLater = nil
	if !ok || later == nil {
		later = environment(p.hostRoot(), p.Library)
	}
	e := *later
	e.Platforms = run.Environment.Platforms
	run.Environment = &e
}

// newRun starts the result: what was asked, where, on which devices. It is partial until Run returns.
func newRun(p *Plan, root sample.Root, inv result.Inventory) *result.Run {
	var env *result.Environment
	switch {
	case p.Environment == nil && p.EnvironmentLater != nil:
		env = &result.Environment{} // takeEnvironment fills it
	case p.Environment != nil:
		// The caller's environment is copied, not added to: the engine never writes into its inputs.
		e := *p.Environment
		e.Platforms = slices.Clone(e.Platforms)
		env = &e
	default:
		env = environment(root, p.Library)
	}
	r := result.NewRun(result.NewHeader(p.ToolVersion, p.Command, inv, p.Platform))
	r.Environment = env
	for _, pl := range inv {
		r.Environment.Platforms = append(r.Environment.Platforms, pl.Platform)
	}
	if p.Platform < len(inv) {
		for _, i := range p.Devices {
			if i < len(inv[p.Platform].Devices) {
				r.Devices = append(r.Devices, inv[p.Platform].Devices[i])
			}
		}
	}
	r.Config = result.Config{Platform: p.Platform, Devices: p.Devices, Strategies: p.Strategies, SizeBytes: p.Sizes[0],
		MaxAllocs: p.MaxAllocs, MaxBytes: p.MaxBytes, Touch: p.Touch, TimeoutSeconds: p.Limits.Total.Seconds(),
		HangSeconds: p.Limits.Hang.Seconds(), HostReserveByte: p.HostReserve, SampleMillis: float64(p.SampleInterval) / 1e6,
		OpenCLLibrary: p.Library}
	if len(p.Sizes) > 1 {
		r.Config.Sizes = p.Sizes
	}
	if len(p.Variants) > 0 {
		r.Config.Variants = p.Variants
	}
	for _, f := range p.FlagSets {
		r.Config.FlagSets = append(r.Config.FlagSets, f.String())
	}
	r.Config.Like = p.Like
	r.Config.RuntimeLog = p.RuntimeLog
	if p.Repeat > 1 {
		r.Config.Repeat = p.Repeat
	}
	r.Config.PoolSize = p.PoolSize
	r.Config.Attribution = AttributionBatched
	if p.PerBuffer {
		r.Config.Attribution = AttributionPerBuffer
	}
	return r
}

// progressEvery is how often at most the observer hears a job's progress.
const progressEvery = 200 * time.Millisecond

// runJob runs one strategy in a worker (its n-th run, 1-based) and turns how it ended into its result.
func runJob(ctx context.Context, p *Plan, j Job, n int, obs Observer, groups *supervise.Groups) (*result.JobResult, error) {
	jobStart := time.Now()
	col := newCollector(j, func(s *result.Sample) { obs.Sample(j, s) })
	limits, err := p.limits(j)
	if err != nil {
		return nil, err
	}
	spec := wire.Spec{Kind: wire.KindStrategy, Library: p.Library, Strategy: &wire.StrategySpec{Platform: p.Platform, Devices: j.Devices,
		Strategy: j.Strategy, Size: j.Size, Flags: j.Flags, Count: j.Budget, Touch: p.Touch, HostReserve: p.HostReserve, SampleInterval: p.SampleInterval,
		PerBuffer: p.PerBuffer, Limits: limits, PoolSize: p.PoolSize}}
	lastReport := time.Time{}
	e, err := supervise.Run(ctx, supervise.Child{Spec: spec, Env: append(p.env(j), noAsyncPreemption()), Limits: p.Limits,
		HostReserve: p.HostReserve, Root: p.hostRoot(), Cgroup: p.cgroup, OnEvent: col.handle, Groups: groups,
		OnTick: func(count uint64, elapsed time.Duration) {
			if time.Since(lastReport) < progressEvery {
				return
			}
			lastReport = time.Now()
			obs.Progress(Progress{Job: j, Run: n, Runs: max(p.Repeat, 1), Allocations: count, RSSBytes: col.lastRSS(), Elapsed: elapsed})
		}})
	if err != nil {
		return nil, err
	}
	sr := col.finish(e)
	if cg := sr.Resources.CgroupOf(); cg != nil && p.cgroup != nil && p.cgroup.Path == cg.Path {
		// The worker's last word cannot say that the cgroup's OOM killer ended it: the count does, read
		// again once the worker is gone.
		if n, ok := p.cgroup.OOMKills(); ok {
			cg.OOMKillsAtEnd = n
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, sr.LoopStarted); err == nil {
		sr.SetupSeconds = t.Sub(jobStart).Seconds()
	}
	return sr, nil
}

// workerPIDs are the process ids of every worker of the run, repeats included.
func workerPIDs(r *result.Run) []int {
	var pids []int
	for i := range r.Jobs {
		for _, a := range r.Jobs[i].Attempts() {
			if a.WorkerPID > 0 {
				pids = append(pids, a.WorkerPID)
			}
		}
	}
	return pids
}

// workerComm is the name the kernel gives the workers: this executable's, as it re-executes itself.
func workerComm() string {
	exe, err := os.Executable()
	if err != nil {
		return "clmemprobe"
	}
	return filepath.Base(exe)
}

// Environment collects the environment block of a report: the machine, the kernel's memory policy, the ICD
// loader's configuration and the variables that change what runtimes do. It loads no runtime.
func Environment(library string) *result.Environment { return environment(sample.System, library) }

// environment is Environment of the host under root.
func environment(root sample.Root, library string) *result.Environment {
	e := env.Collect(root, library, keepDir(root))
	e.FDLimit, _ = shellNofile(context.Background())
	if cg, _ := sample.FindCgroup(root); cg != nil {
		e.MemoryCgroup = &result.CgroupInfo{Version: cg.Version, Path: cg.Path, LimitBytes: cg.Limit()}
	}
	return e
}

// keepDir is the user's cache folder for answers kept between runs (the trace layer's), made where missing,
// or "" where it cannot be used safely (see trace.Safe) or root is not this machine (a test's fixture).
func keepDir(root sample.Root) string {
	if root != sample.System {
		return ""
	}
	dir, err := trace.CacheDir()
	if err != nil || os.MkdirAll(dir, 0o700) != nil || trace.Safe(dir) != nil {
		return ""
	}
	return dir
}

// The default host reserve: the larger of defaultReserveFloor and one hostReserveShare-th of RAM (5%).
const (
	defaultReserveFloor = 1 << 30
	hostReserveShare    = 20
)

// LeastHostReserve is the least reserve the host guard takes. The parent kills a stuck worker at half the
// reserve, and the kernel keeps its own watermark free (vm.min_free_kbytes: up to 64 MiB by default) with
// reclaim and the OOM killer starting near it: below 64 MiB the guard's stop and the parent's kill would
// come after the kernel has acted, protecting nothing. A guard stop within 5 ms of reading (a fill loop
// moves a few MiB in that time) also needs room.
const LeastHostReserve = 64 << 20

// DefaultHostReserve is the larger of 1 GiB and 5% of RAM. (A site's own default, CLMEMPROBE_HOST_RESERVE,
// is the command line's to read: it is a setting of the command, as --host-reserve is.)
func DefaultHostReserve() uint64 { return defaultHostReserve(sample.System) }

// defaultHostReserve is DefaultHostReserve of the host under root.
func defaultHostReserve(root sample.Root) uint64 {
	reserve := uint64(defaultReserveFloor)
	if mi, err := root.Meminfo(); err == nil {
		reserve = max(reserve, mi.Total/hostReserveShare)
	}
	return reserve
}

// parentPeakRSS is this process's peak resident memory, 0 where it cannot be read.
func parentPeakRSS(root sample.Root) uint64 {
	pm, _ := root.SelfMemory()
	return pm.HWM
}

type nopObserver struct{}

func (nopObserver) RunStarted(*result.Run)     {}
func (nopObserver) JobStarted(Job)             {}
func (nopObserver) Progress(Progress)          {}
func (nopObserver) Sample(Job, *result.Sample) {}
func (nopObserver) JobDone(Job, *result.Run)   {}

// LibraryPath picks the OpenCL library to open: the flag's value, else $CLMEMPROBE_OPENCL_LIB, else the ICD
// loader (libOpenCL.so.1).
func LibraryPath(flag string) string { return cl.ResolveLibraryPath(flag) }

// noAsyncPreemption turns off the Go runtime's asynchronous preemption in a worker. Its loop spends nearly
// all its time inside the runtime's calls, where a preemption signal only interrupts the driver, and the
// fill loop was slower with it (see docs/performance.md#what-changed-and-what-each-change-was-worth).
func noAsyncPreemption() string {
	if g := os.Getenv("GODEBUG"); g != "" {
		return "GODEBUG=" + g + ",asyncpreemptoff=1"
	}
	return "GODEBUG=asyncpreemptoff=1"
}
