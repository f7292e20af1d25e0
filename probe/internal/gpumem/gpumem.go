// Package gpumem is the child's side of trace's GPU memory child (`__child gpu-memory`): NVML is a vendor
// library, so, like an OpenCL runtime, it is loaded in a child of the tool and never in the parent; the
// parent (probe's gpuChild, trace's device-memory chain) maps the readings to the traced program's devices by
// PCI bus id and picks the program's own processes out of the lists. The worker's dispatch runs it.
package gpumem

import (
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/nvml"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// Reader reads every GPU's memory and the processes holding it: NVML here, a fake in tests.
type Reader interface {
	Name() string
	Read() []wire.GPUMemory
	Close()
}

// defaultInterval is the reading period where the spec names none: trace's own sampling period.
const defaultInterval = 100 * time.Millisecond

// Job is the child's job and what it needs of the process it runs in: the spec, the progress cell, the
// event stream, and for tests the reader to open (nil: NVML) and a channel that ends the stream.
type Job struct {
	Spec *wire.GPUMemorySpec
	Cell wire.Cell
	Send func(wire.Event) error
	Open func() (Reader, string)
	Stop <-chan struct{}
}

// Run opens the reader and streams one reading every interval until the parent ends this process or stops
// reading; a reader that cannot be opened is the answer, in one line.
func Run(j Job) wire.GPUMemoryAnswer {
	open := j.Open
	if open == nil {
		open = openNVMLReader
	}
	r, why := open()
	if r == nil {
		return wire.GPUMemoryAnswer{Unavailable: why}
	}
	defer r.Close()
	interval := defaultInterval
	if s := j.Spec; s != nil && s.Interval > 0 {
		interval = s.Interval
	}
	j.Cell.SetStage(wire.StageRunning)
	stream(r, interval, j.Send, func(n uint64) { j.Cell.SetCount(n) }, j.Stop)
	return wire.GPUMemoryAnswer{Unavailable: "the GPU memory child stopped reading"}
}

// stream sends a reading, then another every interval, counting them in the cell (so the watchdog sees it
// move), until a send fails (the parent is gone) or stop closes (tests; nil never does).
func stream(r Reader, interval time.Duration, send func(wire.Event) error, count func(uint64), stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for n := uint64(1); ; n++ {
		reading := wire.GPUReading{Sampler: r.Name(), GPUs: r.Read()}
		if send(wire.Event{T: wire.EventGPU, GPU: &reading}) != nil {
			return
		}
		count(n)
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// nvmlReader reads NVML's devices: memory (nvmlDeviceGetMemoryInfo) and the compute and graphics processes.
type nvmlReader struct{ n *nvml.NVML }

var _ Reader = nvmlReader{}

// openNVMLReader opens NVML, or says why not as the worker's NVML sampler does.
func openNVMLReader() (Reader, string) {
	n, err := sample.OpenNVML()
	if err != nil {
		return nil, err.Error()
	}
	return nvmlReader{n}, ""
}

// Name is the source as a run's DeviceSampler names NVML, with the per-process lists it adds.
func (r nvmlReader) Name() string {
	return "NVML (nvmlDeviceGetMemoryInfo, device-wide; the program's own from its running processes)"
}

func (r nvmlReader) Close() { r.n.Close() }

// Read reads every device, as the run's NVML sampler reads its own (sample.ReadNVML); one that cannot be
// read is left out of this reading, its processes' failure is said beside its memory.
func (r nvmlReader) Read() []wire.GPUMemory {
	got, _ := sample.ReadNVML(r.n, r.n.Devices, true)
	out := make([]wire.GPUMemory, 0, len(got))
	for _, g := range got {
		out = append(out, g.GPUMemory)
	}
	return out
}
