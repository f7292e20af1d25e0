package worker

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/nvml"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// fakeGPUs is a reader of fixed GPUs that ends the stream at its last reading.
type fakeGPUs struct {
	gpus   []wire.GPUMemory
	reads  int
	last   int
	stop   chan struct{}
	closed bool
}

func (f *fakeGPUs) Name() string { return "fake" }
func (f *fakeGPUs) Close()       { f.closed = true }
func (f *fakeGPUs) Read() []wire.GPUMemory {
	f.reads++
	if f.reads == f.last {
		close(f.stop)
	}
	return f.gpus
}

// The child streams one reading per interval, each with every GPU the reader saw, and counts them in the
// progress cell; a reader that cannot be opened is the answer, in its own words.
func TestGPUMemoryChildStreams(t *testing.T) {
	gpus := []wire.GPUMemory{{PCIBusID: "0000:17:00.0", UsedBytes: 3 << 30, TotalBytes: 80 << 30, FreeBytes: 77 << 30,
		Processes: []wire.GPUProcess{{PID: 42, Bytes: 1 << 30, Known: true}, {PID: 43}}}}
	fake := &fakeGPUs{gpus: gpus, last: 3, stop: make(chan struct{})}
	c := newTestChild(t, wire.Spec{Kind: wire.KindGPUMemory, GPUMemory: &wire.GPUMemorySpec{Interval: time.Millisecond}})
	c.openGPU = func() (gpuReader, string) { return fake, "" }
	c.gpuStop = fake.stop
	c.gpuMemory()
	evs := c.events(t)[wire.EventGPU]
	if len(evs) != fake.last || c.cell.Count() != uint64(fake.last) || !fake.closed {
		t.Fatalf("%d readings, count %d, closed %v; want %d, %d, closed", len(evs), c.cell.Count(), fake.closed, fake.last, fake.last)
	}
	for _, ev := range evs {
		if ev.GPU.Sampler != "fake" || !reflect.DeepEqual(ev.GPU.GPUs, gpus) {
			t.Errorf("reading %+v, want %+v from fake", ev.GPU, gpus)
		}
	}
	const why = "NVML: " + nvml.Library + " not found"
	c = newTestChild(t, wire.Spec{Kind: wire.KindGPUMemory})
	c.openGPU = func() (gpuReader, string) { return nil, why }
	if a, ok := c.gpuMemory().(wire.GPUMemoryAnswer); !ok || a.Unavailable != why || len(c.events(t)[wire.EventGPU]) != 0 {
		t.Errorf("answer %+v, %d readings; want %q and none", a, len(c.events(t)[wire.EventGPU]), why)
	}
}

// Started by the supervisor as `__child gpu-memory`, the child loads NVML itself: where the library is
// absent (a machine without an NVIDIA driver) it answers why in one line, as the worker's NVML sampler
// says it; where it is present it streams readings until it is ended with its group.
func TestGPUMemoryChildUnderTheSupervisor(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan *wire.GPUReading, 16)
	e, err := supervise.Run(ctx, supervise.Child{Spec: wire.Spec{Kind: wire.KindGPUMemory, GPUMemory: &wire.GPUMemorySpec{Interval: 10 * time.Millisecond}},
		Limits: supervise.Limits{Setup: time.Minute}, OnEvent: func(ev wire.Event) {
			if ev.T == wire.EventGPU {
				select {
				case got <- ev.GPU:
					cancel() // one reading is enough: end it as trace does
				default:
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	n, absent := nvml.Open()
	if n != nil {
		n.Close()
	}
	switch {
	case errors.Is(absent, nvml.ErrorLibraryNotFound):
		if a, err := supervise.Answer[wire.GPUMemoryAnswer](e); err != nil || a.Unavailable != "NVML: "+nvml.Library+" not found" {
			t.Fatalf("without NVML: answer %s (%v), want %q", e.Answer, err, "NVML: "+nvml.Library+" not found")
		}
	case absent != nil:
		t.Skipf("NVML is present but does not open (%v): the answer is its error", absent)
	default:
		if len(got) == 0 || e.Stop != supervise.Interrupted {
			t.Fatalf("with NVML: %d readings, stopped %v (%s)", len(got), e.Stop, e.How())
		}
	}
}

// TestNVMLReaderLive reads NVML as trace's GPU memory child does: one entry per device, at its bus id, with
// figures that add up; it skips where NVML is absent.
func TestNVMLReaderLive(t *testing.T) {
	r, why := openNVMLReader()
	if r == nil {
		t.Skipf("no NVML here: %s", why)
	}
	defer r.Close()
	n := r.(nvmlReader).n
	got := r.Read()
	if len(got) != len(n.Devices) {
		t.Fatalf("%d readings for %d devices", len(got), len(n.Devices))
	}
	for i, g := range got {
		if g.PCIBusID != n.Devices[i].PCIBusID || g.TotalBytes == 0 || g.FreeBytes+g.UsedBytes > g.TotalBytes {
			t.Errorf("device %d (%s): %+v", i, n.Devices[i].PCIBusID, g)
		}
	}
}
