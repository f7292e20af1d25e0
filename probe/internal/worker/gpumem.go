package worker

import (
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/nvml"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// The GPU memory child of `trace`: NVML is a vendor library, so, like an OpenCL runtime, it is loaded in a
// child of the tool and never in the parent; the parent maps the readings to the traced program's devices
// by PCI bus id and picks the program's own processes out of the lists.

// gpuReader reads every GPU's memory and the processes holding it: NVML here, a fake in tests.
type gpuReader interface {
	Name() string
	Read() []wire.GPUMemory
	Close()
}

// defaultGPUInterval is the reading period where the spec names none: trace's own sampling period.
const defaultGPUInterval = 100 * time.Millisecond

// gpuMemory opens the reader and streams one reading every interval until the parent ends this process or
// stops reading; a reader that cannot be opened is the answer, in one line.
func (c *child) gpuMemory() any {
	open := c.openGPU
	if open == nil {
		open = openNVMLReader
	}
	r, why := open()
	if r == nil {
		return wire.GPUMemoryAnswer{Unavailable: why}
	}
	defer r.Close()
	interval := defaultGPUInterval
	if s := c.spec.GPUMemory; s != nil && s.Interval > 0 {
		interval = s.Interval
	}
	c.cell.SetStage(wire.StageRunning)
	streamGPUs(r, interval, c.ev.Send, func(n uint64) { c.cell.SetCount(n) }, c.gpuStop)
	return wire.GPUMemoryAnswer{Unavailable: "the GPU memory child stopped reading"}
}

// streamGPUs sends a reading, then another every interval, counting them in the cell (so the watchdog
// sees it move), until a send fails (the parent is gone) or stop closes (tests; nil never does).
func streamGPUs(r gpuReader, interval time.Duration, send func(wire.Event) error, count func(uint64), stop <-chan struct{}) {
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

var _ gpuReader = nvmlReader{}

// openNVMLReader opens NVML, or says why not as the worker's NVML sampler does.
func openNVMLReader() (gpuReader, string) {
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

// Read reads every device; one that cannot be read is left out of this reading, its processes' failure
// is said beside its memory.
func (r nvmlReader) Read() []wire.GPUMemory {
	mem, _ := r.n.Memory(r.n.Devices)
	out := make([]wire.GPUMemory, 0, len(mem))
	for _, m := range mem {
		d := r.n.Devices[m.Of]
		g := wire.GPUMemory{PCIBusID: d.PCIBusID, UsedBytes: m.Used, TotalBytes: m.Total, FreeBytes: m.Free}
		procs, err := r.n.Processes(d)
		if err != nil {
			g.ProcessesError = err.Error()
		}
		for _, p := range procs {
			g.Processes = append(g.Processes, wire.GPUProcess{PID: p.PID, Bytes: p.UsedBytes, Known: p.UsedKnown})
		}
		out = append(out, g)
	}
	return out
}
