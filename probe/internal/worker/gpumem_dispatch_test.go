package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/nvml"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

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
