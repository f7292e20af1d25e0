package gpumem

import (
	"reflect"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/nvml"
	"github.com/clmemprobe/clmemprobe/probe/internal/progress"
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

// testJob is a job of spec whose events are kept in order, with a progress cell of its own.
func testJob(t *testing.T, spec *wire.GPUMemorySpec) (*Job, *[]wire.Event) {
	t.Helper()
	cell, f, err := progress.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(); cell.Close() })
	var sent []wire.Event
	return &Job{Spec: spec, Cell: wire.Cell{Cell: cell}, Send: func(ev wire.Event) error { sent = append(sent, ev); return nil }}, &sent
}

// The child streams one reading per interval, each with every GPU the reader saw, and counts them in the
// progress cell; a reader that cannot be opened is the answer, in its own words.
func TestGPUMemoryChildStreams(t *testing.T) {
	gpus := []wire.GPUMemory{{PCIBusID: "0000:17:00.0", UsedBytes: 3 << 30, TotalBytes: 80 << 30, FreeBytes: 77 << 30,
		Processes: []wire.GPUProcess{{PID: 42, Bytes: 1 << 30, Known: true}, {PID: 43}}}}
	fake := &fakeGPUs{gpus: gpus, last: 3, stop: make(chan struct{})}
	j, sent := testJob(t, &wire.GPUMemorySpec{Interval: time.Millisecond})
	j.Open = func() (Reader, string) { return fake, "" }
	j.Stop = fake.stop
	Run(*j)
	if len(*sent) != fake.last || j.Cell.Count() != uint64(fake.last) || !fake.closed {
		t.Fatalf("%d readings, count %d, closed %v; want %d, %d, closed", len(*sent), j.Cell.Count(), fake.closed, fake.last, fake.last)
	}
	for _, ev := range *sent {
		if ev.T != wire.EventGPU || ev.GPU.Sampler != "fake" || !reflect.DeepEqual(ev.GPU.GPUs, gpus) {
			t.Errorf("event %v, reading %+v, want %+v from fake", ev.T, ev.GPU, gpus)
		}
	}
	const why = "NVML: " + nvml.Library + " not found"
	j, sent = testJob(t, nil)
	j.Open = func() (Reader, string) { return nil, why }
	if a := Run(*j); a.Unavailable != why || len(*sent) != 0 {
		t.Errorf("answer %+v, %d readings; want %q and none", a, len(*sent), why)
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
