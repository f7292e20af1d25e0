package probe

import (
	"errors"
	"fmt"
	"math"
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
	"github.com/clmemprobe/clmemprobe/report/result"
)

// strategySpec is one strategy job: what the worker child runs.
type strategySpec struct {
	Platform       int             `json:"platform"`
	Devices        []int           `json:"devices"`
	Strategy       result.Strategy `json:"strategy"`
	Size           uint64          `json:"size"`
	Count          uint64          `json:"count"`
	Touch          result.Touch    `json:"touch"`
	HostReserve    uint64          `json:"host_reserve"`
	SampleInterval time.Duration   `json:"sample_interval"`
	// PerBuffer asks for a wait after every buffer instead of batches (run --attribution per-buffer).
	PerBuffer bool `json:"per_buffer,omitempty"`
	// Limits are the soft limits the worker sets before anything else (setLimits), by name (RLIMIT_NOFILE).
	Limits map[string]uint64 `json:"limits,omitempty"`
}

// strategyInfo is sent once the worker has set up its contexts, before the loop.
type strategyInfo struct {
	DeviceSampler string `json:"device_sampler"`
	MaxMapCount   uint64 `json:"max_map_count"`
	// LoopStarted is the wall clock when the loop began; sample times count from it.
	LoopStarted time.Time `json:"loop_started"`
	// AddressSpace is the worker's address-space limit in bytes.
	AddressSpace uint64 `json:"address_space"`
	// Diagnostics names the driver diagnostics turned on for the contexts, if any.
	Diagnostics string `json:"diagnostics,omitempty"`
	// Resources is the ledger as the loop begins: limits, values at the start, the memory cgroup, the
	// devices' memory and processes.
	Resources *result.Resources `json:"resources,omitempty"`
}

// strategyAnswer is the worker's last word: how the loop ended.
type strategyAnswer struct {
	Outcome       result.Outcome       `json:"outcome"`
	Reason        string               `json:"reason,omitempty"`
	AllocationsOK uint64               `json:"allocations_ok"`
	FirstFailure  *result.FirstFailure `json:"first_failure,omitempty"`
	LoopSeconds   float64              `json:"loop_seconds"`
	// Guard is the reserve the host guard stopped the loop at, when it did.
	Guard result.Guard `json:"guard,omitempty"`
	// Attribution is how failures were pinned to buffers: batched or per-buffer, and why it fell back.
	Attribution     string `json:"attribution,omitempty"`
	AttributionNote string `json:"attribution_note,omitempty"`
}

// worker holds one strategy's state in the worker process.
type worker struct {
	*child
	spec    *strategySpec
	targets []target // one per selected device, in order; buffer i goes to targets[i%n]
	host    *sample.Host
	devSamp sample.DeviceSampler
	guard   *hostGuard
	cgroup  *sample.Cgroup // the worker's memory cgroup; nil where there is none

	sampleMu  sync.Mutex
	loopStart time.Time
	// done counts the buffers whose commands the device has finished: what memory samples are placed at
	// (in batched mode the cell counts buffers enqueued, which the device's memory may not show yet). A loop
	// without queues has nothing in flight: there the cell's count is the same figure, and doneCount reads
	// it, which spares the create loop an atomic store (a locked exchange on amd64) per buffer.
	done        atomic.Uint64
	noQueues    bool
	diagnostics bool // the runtime's driver diagnostics are on for the contexts
	// Counting the mappings reads /proc/self/maps, which holds the process's memory-map lock that the
	// runtime's allocator needs: it is read once a second while far from vm.max_map_count, at every sample
	// when within a quarter of it, and at the end.
	maxMapCount  uint64
	lastMappings uint64
	mapsReadAt   time.Time
}

// target is where one device's buffers are made and touched.
type target struct {
	device int // index within the platform
	ctx    *cl.Context
	queue  *cl.Queue      // nil when the strategy neither touches nor migrates
	kernel *cl.Kernel     // nil unless touch=kernel
	props  *cl.Properties // device-list properties, nil otherwise
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

func failedSetup(err error) *strategyAnswer {
	return &strategyAnswer{Outcome: result.OutcomeFailed, Reason: err.Error(), FirstFailure: failureOf(err, result.StageSetup)}
}

func (c *child) runStrategy() *strategyAnswer {
	if c.spec.Strategy == nil {
		return failedSetup(errors.New("no strategy in the spec"))
	}
	w := &worker{child: c, spec: c.spec.Strategy, host: sample.NewHost(sample.System)}
	// For performance work: CLMEMPROBE_CPUPROFILE_DIR=dir writes each worker's CPU profile there.
	if dir := os.Getenv("CLMEMPROBE_CPUPROFILE_DIR"); dir != "" {
		if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%s-%d.pprof", w.spec.Strategy, os.Getpid()))); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	return w.run()
}

func (w *worker) run() *strategyAnswer {
	cl.OnNotice(func(n cl.Notice) { _ = w.ev.send(event{T: evNotice, Notice: n.Message}) })
	devs, err := w.openDevices()
	if err != nil {
		return failedSetup(err)
	}
	if w.spec.Strategy == result.DeviceList {
		if reason := deviceListUnsupported(w.lib, devs); reason != "" {
			return &strategyAnswer{Outcome: result.OutcomeUnsupported, Reason: reason}
		}
	}
	// The device sampler (NVML, sysfs, the runtime's own query) is found while the contexts are made: both
	// can take a while on a GPU, and neither needs the other.
	type found struct {
		ds     sample.DeviceSampler
		reason string
	}
	samplerc := make(chan found, 1)
	targets := sample.TargetsFor(devs, w.spec.Devices)
	go func() {
		ds, reason := sample.DeviceSamplerFor(targets, sample.System)
		samplerc <- found{ds, reason}
	}()
	if err := w.setUp(devs); err != nil {
		return failedSetup(err)
	}
	info := &strategyInfo{DeviceSampler: "not available: no sampler for these devices"}
	if f := <-samplerc; f.ds != nil {
		w.devSamp, info.DeviceSampler = f.ds, f.ds.Name()
	} else if f.reason != "" {
		info.DeviceSampler = "not available: " + f.reason
	}
	info.MaxMapCount, _ = sample.System.MaxMapCount()
	w.maxMapCount = info.MaxMapCount
	if w.diagnostics {
		info.Diagnostics = "cl_intel_driver_diagnostics, every level: its messages are among the notices"
	}
	info.AddressSpace = addressSpace()
	w.cgroup, _ = sample.FindCgroup(sample.System)
	w.host.Cgroup = w.cgroup
	w.guard = newHostGuard(sample.System, w.spec.HostReserve, w.spec.Size, w.cgroup)
	w.loopStart = time.Now()
	info.LoopStarted = w.loopStart
	info.Resources = w.ledgerAtStart(w.takeSample(0))
	_ = w.ev.send(event{T: evInfo, Info: info})
	stop := make(chan struct{})
	var done sync.WaitGroup
	done.Add(2)
	go func() { defer done.Done(); w.sampleLoop(stop) }()
	go func() { defer done.Done(); w.guard.watch(stop, w.doneCount) }()
	res := w.loop()
	close(stop)
	done.Wait()
	if procs := w.deviceProcesses(); procs != nil {
		_ = w.ev.send(event{T: evEnd, Ledger: procs})
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
	needQueue := w.spec.Touch != result.TouchNone || w.spec.Strategy == result.MigrateFirst
	w.noQueues = !needQueue
	makeTargets := func(ctx *cl.Context, ds []*cl.Device, idx []int) error {
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
			t := target{device: idx[i], ctx: ctx, kernel: kern}
			if needQueue {
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
			w.targets = append(w.targets, t)
		}
		return nil
	}
	if w.spec.Strategy == result.PerDevice {
		for i, d := range devs {
			ctx, err := w.lib.CreateContext([]*cl.Device{d}, i)
			if err != nil {
				return err
			}
			w.diagnostics = w.diagnostics || ctx.Diagnostics
			if err := makeTargets(ctx, []*cl.Device{d}, w.spec.Devices[i:i+1]); err != nil {
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
	return makeTargets(ctx, devs, w.spec.Devices)
}

// sampleLoop samples on a schedule: at least SampleInterval apart, and never more than about 5% of the
// time, so a slow sample (many mappings to count) thins itself out instead of slowing the loop.
func (w *worker) sampleLoop(stop <-chan struct{}) {
	interval := w.spec.SampleInterval
	if interval <= 0 {
		interval = 10 * time.Millisecond
	}
	wait := interval
	for {
		select {
		case <-stop:
			return
		case <-time.After(wait):
		}
		t0 := time.Now()
		w.takeSample(math.MaxUint64)
		wait = max(interval, 19*time.Since(t0))
	}
}

// takeSample reads host and device memory now and sends the sample. index is the buffer count when the loop
// is stopped; math.MaxUint64 means the loop is running, and the sample is placed at the middle of the counts
// seen before and after the reading, so the fitted cost has no bias from the buffers made while the sample
// was read.
func (w *worker) takeSample(index uint64) result.Sample {
	w.sampleMu.Lock()
	defer w.sampleMu.Unlock()
	running := index == math.MaxUint64
	if running {
		index = w.doneCount()
	}
	s := result.Sample{Index: index, Seconds: time.Since(w.loopStart).Seconds()}
	withMappings := !running || w.maxMapCount == 0 || w.lastMappings*4 >= w.maxMapCount || time.Since(w.mapsReadAt) >= time.Second
	_ = w.host.Read(&s, withMappings)
	if withMappings {
		w.lastMappings, w.mapsReadAt = s.Mappings, time.Now()
	}
	if w.devSamp != nil {
		s.DeviceSamples, _ = w.devSamp.Read()
	}
	if running {
		after := w.doneCount()
		// A reading the scheduler held up while the loop ran on (a loaded machine, thousands of fast creates
		// meanwhile) cannot say which count its figures belong to; fitted, one such sample moved a cost by 1%.
		// It is dropped; the samples taken with the loop stopped, at fixed counts, carry the fit.
		if after-index > max(1, after/100) {
			return s
		}
		s.Index = (index + after) / 2
	}
	if err := w.ev.send(event{T: evSample, Sample: &s}); err != nil {
		// The parent is gone: nobody will read the result, so stop at once rather than run on.
		os.Exit(3)
	}
	return s
}

// deviceProcesses lists the processes on the job's devices, where the device sampler can (NVML); nil
// otherwise. A device whose list could not be read is left out.
func (w *worker) deviceProcesses() map[int][]result.DeviceProcess {
	pl, ok := w.devSamp.(sample.ProcessLister)
	if !ok {
		return nil
	}
	procs, _ := pl.Processes()
	return procs
}

// ledgerAtStart is the resource ledger as the loop begins, from its first sample: the worker's limits and
// counts, its memory cgroup, and each device's memory in use with the processes holding it.
func (w *worker) ledgerAtStart(first result.Sample) *result.Resources {
	rs := startLedger(sample.System, first, w.spec.Limits)
	if cg := w.cgroup; cg != nil {
		kills, _ := cg.OOMKills()
		rs.Cgroup = &result.Cgroup{Version: cg.Version, Path: cg.Path, OOMKillsAtStart: kills, OOMKillsAtEnd: kills,
			Memory: result.Resource{AtStart: first.CgroupBytes, AtEnd: first.CgroupBytes, Limit: cg.Limit(), LimitSource: cgroupLimitFile(cg.Version)}}
	}
	procs := w.deviceProcesses()
	for _, d := range first.DeviceSamples {
		rs.Devices = append(rs.Devices, result.DeviceLedger{Device: d.Device, UsedAtStartBytes: d.UsedBytes, ProcessesAtStart: procs[d.Device]})
	}
	return rs
}

// cgroupLimitFile names the file a cgroup's memory limit is read from, for reports.
func cgroupLimitFile(version int) string {
	if version == 1 {
		return "memory.limit_in_bytes"
	}
	return "memory.max"
}

// doneCount is how many buffers the device has finished (see worker.done).
func (w *worker) doneCount() uint64 {
	if w.noQueues {
		return w.cell.Count()
	}
	return w.done.Load()
}

// userSpace is the address space a 64-bit Linux process has without a limit (47 bits on x86-64 and on
// arm64 with 4-level tables).
const userSpace = 1 << 47

// addressSpace is the process's address-space limit: RLIMIT_AS, or the architecture's user space.
func addressSpace() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur < userSpace {
		return rl.Cur
	}
	return userSpace
}
