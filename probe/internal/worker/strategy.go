package worker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clmemprobe/clmemprobe/kernels"
	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// worker holds one strategy's state in the worker process.
type worker struct {
	*child
	spec     *wire.StrategySpec
	targets  []target // one per selected device, in order; buffer i goes to targets[i%n]
	platform string   // the devices' platform, whose runtime says whether batches need events
	host     *sample.Host
	devSamp  sample.DeviceSampler
	guard    *hostGuard
	cgroup   *sample.Cgroup // the worker's memory cgroup; nil where there is none
	tally    tally
	// diagnostics is true when the runtime's driver diagnostics are on for the contexts.
	diagnostics bool

	sampleMu  sync.Mutex
	loopStart time.Time
	// Counting the mappings reads /proc/self/maps, which holds the process's memory-map lock that the
	// runtime's allocator needs: it is read once every mapsEvery while far from vm.max_map_count, at every
	// sample when within a mapsNear-th of it, and at the end.
	maxMapCount  uint64
	lastMappings uint64
	mapsReadAt   time.Time
	// reserve is the room the worker reports in once the loop ends at vm.max_map_count (mapreserve.go).
	reserve *mapReserve
}

// tally is how far the loop got. The cell counts the buffers made (in batched mode, enqueued); done counts
// the buffers whose commands the device has finished: what memory samples are placed at, since the
// device's memory may not show the buffers in flight yet. A loop without queues has nothing in flight:
// there the cell's count is the same figure, and finished reads it, which spares the create loop an atomic
// store (a locked exchange on amd64) per buffer.
type tally struct {
	cell     wire.Cell
	done     atomic.Uint64
	noQueues bool
}

// finish records that the device has finished n buffers, for the guard and, through the cell, for the
// parent, which reads it where the worker dies with a batch in flight.
func (t *tally) finish(n uint64) {
	t.done.Store(n)
	t.cell.SetConfirmed(n)
}

// finished is how many buffers the device has finished.
func (t *tally) finished() uint64 {
	if t.noQueues {
		return t.cell.Count()
	}
	return t.done.Load()
}

// progress is how many buffers are finished and how many are made, read in that order: where the two are
// equal, no buffer counted as made was in flight between the reads (one being made is not counted yet).
func (t *tally) progress() (finished, made uint64) {
	finished = t.finished()
	return finished, t.cell.Count()
}

// failureOf describes a failed call: its code, name and call where it is an OpenCL error.
func failureOf(err error, stage result.Stage) *result.FirstFailure {
	ff := &result.FirstFailure{Stage: stage, Call: err.Error()}
	var ce *cl.CallError
	if errors.As(err, &ce) {
		ff.Code, ff.Name, ff.Call = int32(ce.Status), ce.Status.Name(), ce.Call
	}
	return ff
}

func failedSetup(err error) *wire.StrategyAnswer {
	return &wire.StrategyAnswer{Outcome: result.OutcomeFailed, Reason: err.Error(), FirstFailure: failureOf(err, result.StageSetup)}
}

// cpuProfileEnv names a folder each worker writes its CPU profile to, for performance work.
const cpuProfileEnv = "CLMEMPROBE_CPUPROFILE_DIR"

func (c *child) runStrategy() *wire.StrategyAnswer {
	if c.spec.Strategy == nil {
		return failedSetup(errors.New("no strategy in the spec"))
	}
	w := &worker{child: c, spec: c.spec.Strategy, host: sample.NewHost(c.root)}
	w.tally.cell = c.cell
	if dir := os.Getenv(cpuProfileEnv); dir != "" {
		if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%s-%d.pprof", w.spec.Strategy, os.Getpid()))); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	return w.run()
}

func (w *worker) run() *wire.StrategyAnswer {
	cl.OnNotice(func(n cl.Notice) { _ = w.ev.Send(wire.Event{T: wire.EventNotice, Notice: n.Message}) })
	info, failed := w.prepare()
	if failed != nil {
		return failed
	}
	_ = w.ev.Send(wire.Event{T: wire.EventInfo, Info: info})
	return w.measure()
}

// prepare opens the devices, makes the contexts, finds the device sampler, the memory cgroup and the
// guard, and takes the first sample: what the info event says. A non-nil answer ends the job at set-up.
func (w *worker) prepare() (*wire.StrategyInfo, *wire.StrategyAnswer) {
	devs, err := w.openDevices()
	if err != nil {
		return nil, failedSetup(err)
	}
	if w.spec.Strategy == result.DeviceList {
		if reason := deviceListUnsupported(w.lib, devs); reason != "" {
			return nil, &wire.StrategyAnswer{Outcome: result.OutcomeUnsupported, Reason: reason}
		}
	}
	if w.spec.Strategy == result.Pool {
		if reason := poolUnsupported(w.lib, w.spec.Flags); reason != "" {
			return nil, &wire.StrategyAnswer{Outcome: result.OutcomeUnsupported, Reason: reason}
		}
	}
	// The device sampler (NVML, sysfs, the runtime's own query) is found while the contexts are made: both
	// can take a while on a GPU, and neither needs the other.
	type found struct {
		ds  sample.DeviceSampler
		why error // why none applies (sample.Unavailable)
	}
	samplerc := make(chan found, 1)
	targets := sample.TargetsFor(devs, w.spec.Devices)
	go func() {
		ds, err := sample.DeviceSamplerFor(targets, w.root)
		samplerc <- found{ds, err}
	}()
	if err := w.setUp(devs); err != nil {
		return nil, failedSetup(err)
	}
	info := &wire.StrategyInfo{DeviceSampler: result.NoDeviceSource("no sampler for these devices")}
	for i, d := range devs {
		info.DeviceSizes = append(info.DeviceSizes, result.DeviceSize{Device: w.spec.Devices[i], GlobalMemBytes: d.GlobalMem, MaxAllocBytes: d.MaxAlloc})
	}
	if f := <-samplerc; f.ds != nil {
		w.devSamp, info.DeviceSampler = f.ds, result.DeviceSource(f.ds.Name())
	} else if f.why != nil {
		info.DeviceSampler = result.NoDeviceSource(f.why.Error())
	}
	info.MaxMapCount, _ = w.root.MaxMapCount()
	w.maxMapCount = info.MaxMapCount
	if w.maxMapCount > 0 {
		w.reserve = holdMappings(mapReservePages)
	}
	if w.diagnostics {
		info.Diagnostics = "cl_intel_driver_diagnostics, every level: its messages are among the notices"
	}
	info.AddressSpace = addressSpace()
	w.cgroup, _ = sample.FindCgroup(w.root)
	w.host.Cgroup = w.cgroup
	w.guard = newHostGuard(w.root, w.spec.HostReserve, w.spec.Size, w.cgroup, guardedAddressSpace(w.spec.Limits))
	w.loopStart = time.Now()
	info.LoopStarted = w.loopStart
	info.Resources = w.ledgerAtStart(w.takeSample(0))
	return info, nil
}

// measure runs the loop with the sampler and the guard beside it, then sends what the devices' processes
// hold and takes the last sample.
func (w *worker) measure() *wire.StrategyAnswer {
	stop := make(chan struct{})
	var done sync.WaitGroup
	done.Add(2)
	go func() { defer done.Done(); w.sampleLoop(stop) }()
	go func() { defer done.Done(); w.guard.watch(stop, w.tally.progress) }()
	l := newLoop(w.spec, w.targets, w.platform, &w.tally, w.guard, func(i uint64) { w.takeSample(i) })
	res := l.run()
	w.sampleMu.Lock()
	w.reserve.giveBack()
	w.sampleMu.Unlock()
	close(stop)
	done.Wait()
	if procs := w.deviceProcesses(); procs != nil {
		_ = w.ev.Send(wire.Event{T: wire.EventEnd, Ledger: procs})
	}
	res.LoopSeconds = time.Since(w.loopStart).Seconds()
	s := w.takeSample(res.AllocationsOK)
	if res.FirstFailure != nil {
		res.FirstFailure.HostRSSBytes, res.FirstFailure.HostAvail = s.RSSBytes, s.AvailBytes
	}
	return res
}

// openDevices loads the library and picks the spec's devices of its platform.
func (w *worker) openDevices() ([]*cl.Device, error) {
	if err := w.open(); err != nil {
		return nil, err
	}
	plats, err := w.lib.Platforms()
	if err != nil {
		return nil, err
	}
	if w.spec.Platform >= len(plats) {
		return nil, fmt.Errorf("platform %d is gone", w.spec.Platform)
	}
	all, err := plats[w.spec.Platform].Devices()
	if err != nil {
		return nil, err
	}
	var devs []*cl.Device
	for _, i := range w.spec.Devices {
		if i >= len(all) {
			return nil, fmt.Errorf("device %d is gone", i)
		}
		devs = append(devs, all[i])
	}
	w.platform = plats[w.spec.Platform].Name
	return devs, nil
}

// deviceListUnsupported says why CL_MEM_DEVICE_HANDLE_LIST_KHR cannot be used, or "" when it can.
func deviceListUnsupported(lib *cl.Library, devs []*cl.Device) string {
	if !lib.HasCreateBufferWithProperties() {
		return "the OpenCL library has no clCreateBufferWithProperties (OpenCL 3.0)"
	}
	for _, d := range devs {
		if !d.HasExtension("cl_khr_external_memory") {
			return fmt.Sprintf("device %q does not report cl_khr_external_memory, which defines CL_MEM_DEVICE_HANDLE_LIST_KHR", d.Name)
		}
	}
	return ""
}

// setUp creates the contexts, queues and kernels the strategy needs. Queues are made only when the loop
// uses them, so touch=none runs exactly the user's loop.
func (w *worker) setUp(devs []*cl.Device) error {
	w.tally.noQueues = w.spec.Touch == result.TouchNone && w.spec.Strategy != result.MigrateFirst
	if w.spec.Strategy == result.PerDevice || w.spec.Strategy == result.Pool {
		for i, d := range devs {
			ctx, err := w.lib.CreateContext([]*cl.Device{d}, i)
			if err != nil {
				return err
			}
			w.diagnostics = w.diagnostics || ctx.Diagnostics
			if err := w.addTargets(ctx, []*cl.Device{d}, w.spec.Devices[i:i+1]); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, err := w.lib.CreateContext(devs, 0)
	if err != nil {
		return err
	}
	w.diagnostics = ctx.Diagnostics
	return w.addTargets(ctx, devs, w.spec.Devices)
}

// addTargets adds a target for each device of ctx: its queue where the loop needs one, the touch kernel
// (one for the context), the device-list properties.
func (w *worker) addTargets(ctx *cl.Context, ds []*cl.Device, idx []int) error {
	var kern *cl.Kernel
	if w.spec.Touch == result.TouchKernel {
		prog, err := ctx.BuildProgram(kernels.Touch, "")
		if err != nil {
			return err
		}
		if kern, err = prog.Kernel(kernels.TouchKernel); err != nil {
			return err
		}
	}
	for i, d := range ds {
		t := target{device: idx[i], buffers: ctx}
		if kern != nil {
			t.kernel, t.args = kern, kern
		}
		if !w.tally.noQueues {
			q, err := ctx.CreateQueue(d, false)
			if err != nil {
				return err
			}
			q.SetFillPattern(kernels.FillPattern(w.spec.Size))
			t.queue = q
		}
		if w.spec.Strategy == result.DeviceList {
			t.props = ctx.DeviceListProperties(d)
		}
		if w.spec.Strategy == result.Pool {
			pool, err := newPoolBuffers(ctx, d, w.spec.Size, w.spec.PoolSize, w.poolBound(len(w.spec.Devices)))
			if err != nil {
				return err
			}
			t.buffers, t.pool = pool, pool
		}
		w.targets = append(w.targets, t)
	}
	return nil
}

// userSpace is the address space a 64-bit Linux process has without a limit (47 bits on x86-64 and on
// arm64 with 4-level tables).
const userSpace = 1 << 47

// guardedAddressSpace is the address-space limit the host guard keeps within: the worker's limit, the
// user's ulimit -v that every process of the tool inherits, unless the job's variant set one (limits) other
// than the hard limit: that limit is the variant's question, and the runtime's answer at it is the
// result. 0: none to keep.
func guardedAddressSpace(limits map[string]uint64) uint64 {
	if v, set := limits["RLIMIT_AS"]; set && v != result.HardLimit {
		return 0
	}
	if as := addressSpace(); as < userSpace {
		return as
	}
	return 0
}

// poolBound is the most a pool buffer of the default size (the device's maximum allocation) may take, for
// one of n devices, where the host guard keeps within an address-space limit (0: no bound): an eighth of
// their share of what the limit leaves above the worker's mapping now and the guard's addressReserve. One
// pool buffer maps its whole size at once, before any sub-buffer the guard could stop, and PoCL aborts
// where that is over the limit; pools of an eighth fill all but the last eighth (less what the loop maps
// besides: malloc arenas, commands), where pools of half had stopped at half of what shared reached.
func (w *worker) poolBound(n int) uint64 {
	as := guardedAddressSpace(w.spec.Limits)
	if as == 0 || w.spec.HostReserve == 0 || n == 0 {
		return 0
	}
	m, err := w.root.SelfMemory()
	if err != nil {
		return 0
	}
	return (as - min(as, m.VMS+addressReserve)) / uint64(8*n)
}

// addressSpace is the process's address-space limit: RLIMIT_AS, or the architecture's user space.
func addressSpace() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur < userSpace {
		return rl.Cur
	}
	return userSpace
}
