package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clmemprobe/clmemprobe/kernels"
	"github.com/clmemprobe/clmemprobe/probe/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/progress"
	"github.com/clmemprobe/clmemprobe/probe/sample"
	"github.com/clmemprobe/clmemprobe/report"
)

// WorkerCommand is the hidden command name under which the binary re-executes itself as a worker.
const WorkerCommand = "__worker"

// Worker file descriptors, as set by the parent (ExtraFiles start at 3).
const (
	workerEventsFD = 3
	workerCellFD   = 4
)

// Stages as stored in the progress cell; stageNames maps them to the result's names.
const (
	cellSetup uint64 = iota
	cellCreate
	cellTouch
	cellMigrate
	cellFinish
	cellDone
)

var stageNames = []string{report.StageSetup, report.StageCreate, report.StageTouch, report.StageMigrate, report.StageFinish, "done"}

// RunWorker is the worker process: it reads its spec from stdin, runs one strategy's loop and streams events
// to the parent. It returns the process exit code. Whatever the runtime does to this process (crash, hang,
// OOM kill), the parent learns how far it got from the progress cell.
func RunWorker(stdin io.Reader) int {
	events := os.NewFile(workerEventsFD, "events")
	cellFile := os.NewFile(workerCellFD, "progress")
	if events == nil || cellFile == nil {
		fmt.Fprintln(os.Stderr, "clmemprobe: the worker command is started by clmemprobe run, not by hand")
		return 2
	}
	var spec workerSpec
	if err := json.NewDecoder(stdin).Decode(&spec); err != nil {
		fmt.Fprintln(os.Stderr, "clmemprobe worker: bad spec:", err)
		return 2
	}
	cell, err := progress.Map(cellFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clmemprobe worker:", err)
		return 2
	}
	// If memory runs out, the kernel's OOM killer should pick this process, not the parent holding the data.
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	w := &worker{spec: spec, cell: cell, ev: newEventWriter(events)}
	// For performance work: CLMEMPROBE_CPUPROFILE_DIR=dir writes each worker's CPU profile there.
	if dir := os.Getenv("CLMEMPROBE_CPUPROFILE_DIR"); dir != "" {
		if f, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%s-%d.pprof", spec.Strategy, os.Getpid()))); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	res := w.run()
	if err := w.ev.send(event{T: evResult, Result: res}); err != nil {
		return 3
	}
	return 0
}

// worker holds one strategy's state in the worker process.
type worker struct {
	spec    workerSpec
	cell    *progress.Cell
	ev      *eventWriter
	lib     *cl.Library
	targets []target // one per selected device, in order; buffer i goes to targets[i%n]
	host    *sample.Host
	devSamp sample.DeviceSampler

	sampleMu  sync.Mutex
	loopStart time.Time
	guardHit  atomic.Bool
	lastAvail atomic.Uint64
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
func failureOf(err error, stage string) *report.FirstFailure {
	ff := &report.FirstFailure{Stage: stage, Call: err.Error()}
	var ce *cl.CallError
	if errors.As(err, &ce) {
		ff.Code, ff.Name, ff.Call = int32(ce.Status), ce.Status.Name(), ce.Call
	}
	return ff
}

func failedSetup(err error) *workerResult {
	return &workerResult{Outcome: report.OutcomeFailed, Reason: err.Error(), FirstFailure: failureOf(err, report.StageSetup)}
}

func (w *worker) run() *workerResult {
	w.cell.SetStage(cellSetup)
	cl.OnNotice(func(n cl.Notice) { _ = w.ev.send(event{T: evNotice, Notice: n.Message}) })
	devs, err := w.openDevices()
	if err != nil {
		return failedSetup(err)
	}
	if w.spec.Strategy == DeviceList {
		if reason := deviceListUnsupported(w.lib, devs); reason != "" {
			return &workerResult{Outcome: report.OutcomeUnsupported, Reason: reason}
		}
	}
	if err := w.setUp(devs); err != nil {
		return failedSetup(err)
	}
	if w.host, err = sample.NewHost(""); err != nil {
		return failedSetup(err)
	}
	info := &workerInfo{DeviceSampler: "not available: no sampler for these devices"}
	if ds, reason := sample.DeviceSamplerFor(sample.TargetsFor(devs, w.spec.Devices), sample.DefaultRoots); ds != nil {
		w.devSamp, info.DeviceSampler = ds, ds.Name()
	} else if reason != "" {
		info.DeviceSampler = "not available: " + reason
	}
	info.MaxMapCount, _ = sample.MaxMapCount("")
	w.loopStart = time.Now()
	info.LoopStarted = w.loopStart
	_ = w.ev.send(event{T: evInfo, Info: info})
	w.takeSample(0)
	stop := make(chan struct{})
	done := make(chan struct{})
	go w.sampleLoop(stop, done)
	res := w.loop()
	close(stop)
	<-done
	res.LoopSeconds = time.Since(w.loopStart).Seconds()
	if res.FirstFailure != nil {
		s := w.takeSample(res.AllocationsOK)
		res.FirstFailure.HostRSSBytes, res.FirstFailure.HostAvail = s.RSSBytes, s.AvailBytes
	} else {
		w.takeSample(res.AllocationsOK)
	}
	return res
}

// openDevices loads the library and picks the spec's devices of its platform.
func (w *worker) openDevices() ([]*cl.Device, error) {
	lib, err := cl.Open(w.spec.Library)
	if err != nil {
		return nil, err
	}
	w.lib = lib
	plats, err := lib.Platforms()
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
	needQueue := w.spec.Touch != TouchNone || w.spec.Strategy == MigrateFirst
	makeTargets := func(ctx *cl.Context, ds []*cl.Device, idx []int) error {
		var kern *cl.Kernel
		if w.spec.Touch == TouchKernel {
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
				q.SetFillPattern(fillPattern(w.spec.Size))
				t.queue = q
			}
			if w.spec.Strategy == DeviceList {
				t.props = ctx.DeviceListProperties(d)
			}
			w.targets = append(w.targets, t)
		}
		return nil
	}
	if w.spec.Strategy == PerDevice {
		for i, d := range devs {
			ctx, err := w.lib.CreateContext([]*cl.Device{d}, i)
			if err != nil {
				return err
			}
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
	return makeTargets(ctx, devs, w.spec.Devices)
}

// fillPattern is the largest power-of-two pattern (up to 4 bytes) that divides the size, since
// clEnqueueFillBuffer needs the size to be a multiple of the pattern.
func fillPattern(size uint64) []byte {
	switch {
	case size%4 == 0:
		return []byte{0xA5, 0x5A, 0xC3, 0x3C}
	case size%2 == 0:
		return []byte{0xA5, 0x5A}
	}
	return []byte{0xA5}
}

// loop is the allocation loop. It keeps no per-buffer state (buffers are never released, as in the user's
// loop; the process exit frees them) and stores its progress in the shared cell after each buffer.
func (w *worker) loop() *workerResult {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	size, count, touch := w.spec.Size, w.spec.Count, w.spec.Touch
	migrate := w.spec.Strategy == MigrateFirst
	n := uint64(len(w.targets))
	fail := func(i uint64, stage uint64, err error, t *target) *workerResult {
		ff := failureOf(err, stageNames[stage])
		ff.Index, ff.Device, ff.BytesBefore = i, t.device, i*size
		return &workerResult{Outcome: report.OutcomeFailed, AllocationsOK: i, FirstFailure: ff}
	}
	for i := uint64(0); i < count; i++ {
		if w.guardHit.Load() {
			return &workerResult{Outcome: report.OutcomeStopped, AllocationsOK: i,
				Reason: fmt.Sprintf("host guard: system available memory %s fell below the reserve %s",
					report.FormatBytes(w.lastAvail.Load()), report.FormatBytes(w.spec.HostReserve))}
		}
		t := &w.targets[i%n]
		w.cell.SetStage(cellCreate)
		var m cl.Mem
		var err error
		if t.props != nil {
			m, err = t.ctx.CreateBufferWithProperties(t.props, cl.MEM_READ_WRITE, size)
			if err != nil && i == 0 && (errors.Is(err, cl.InvalidProperty) || errors.Is(err, cl.InvalidValue)) {
				return &workerResult{Outcome: report.OutcomeUnsupported, Reason: "the runtime rejected CL_MEM_DEVICE_HANDLE_LIST_KHR: " + err.Error()}
			}
		} else {
			m, err = t.ctx.CreateBuffer(cl.MEM_READ_WRITE, size)
		}
		if err != nil {
			return fail(i, cellCreate, err, t)
		}
		if migrate {
			w.cell.SetStage(cellMigrate)
			if _, err := t.queue.MigrateBuffer(m, false); err != nil {
				return fail(i, cellMigrate, err, t)
			}
		}
		if touch != TouchNone {
			w.cell.SetStage(cellTouch)
			if touch == TouchFill {
				_, err = t.queue.FillBuffer(m, size, false)
			} else {
				_, err = t.queue.RunKernelOn(t.kernel, m, uint32(i), size, false)
			}
			if err != nil {
				return fail(i, cellTouch, err, t)
			}
		}
		if t.queue != nil {
			// Waiting after each buffer is what makes the index exact on runtimes that allocate at first
			// use and report the failure only when the command runs.
			w.cell.SetStage(cellFinish)
			if err := t.queue.Finish(); err != nil {
				return fail(i, cellFinish, err, t)
			}
		}
		w.cell.SetCount(i + 1)
	}
	w.cell.SetStage(cellDone)
	return &workerResult{Outcome: report.OutcomeCompleted, AllocationsOK: count}
}

// sampleLoop samples on a schedule: at least SampleInterval apart, and never more than about 5% of the
// time, so a slow sample (many mappings to count) thins itself out instead of slowing the loop.
func (w *worker) sampleLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
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

// takeSample reads host and device memory now, sends the sample and checks the host guard. index is the
// buffer count when the loop is stopped; math.MaxUint64 means the loop is running, and the sample is placed
// at the middle of the counts seen before and after the reading, so the fitted cost has no bias from the
// buffers made while the sample was read.
func (w *worker) takeSample(index uint64) report.Sample {
	w.sampleMu.Lock()
	defer w.sampleMu.Unlock()
	running := index == math.MaxUint64
	if running {
		index = w.cell.Count()
	}
	s := report.Sample{Index: index, Seconds: time.Since(w.loopStart).Seconds()}
	_ = w.host.Read(&s, true)
	if w.devSamp != nil {
		s.DeviceSamples, _ = w.devSamp.Read()
	}
	if running {
		s.Index = (index + w.cell.Count()) / 2
	}
	if s.AvailBytes > 0 {
		w.lastAvail.Store(s.AvailBytes)
		if s.AvailBytes < w.spec.HostReserve {
			w.guardHit.Store(true)
		}
	}
	if err := w.ev.send(event{T: evSample, Sample: &s}); err != nil {
		// The parent is gone: nobody will read the result, so stop at once rather than run on.
		os.Exit(3)
	}
	return s
}
