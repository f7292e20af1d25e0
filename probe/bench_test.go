package probe

import (
	"io"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/report/result"
)

// The pieces around the allocation loop, measured one by one (scripts/bench.sh measures the whole loop
// against C). The binding call has its own benchmark in probe/cl.

// BenchmarkHostSample is one host sample: what the sampler goroutine pays every interval.
func BenchmarkHostSample(b *testing.B) {
	h := sample.NewHost(sample.System)
	var s result.Sample
	for i := 0; i < b.N; i++ {
		if err := h.Read(&s, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventSend is one sample event encoded and written to the parent's pipe.
func BenchmarkEventSend(b *testing.B) {
	ev := newEventWriter(io.Discard)
	s := &result.Sample{Index: 123456, Seconds: 1.5, RSSBytes: 1 << 30, VMSBytes: 1 << 34, HWMBytes: 1 << 30, AvailBytes: 1 << 34,
		Mappings: 512, DeviceSamples: []result.DeviceSample{{Device: 0, UsedBytes: 1 << 35, FreeBytes: 1 << 36}, {Device: 1, UsedBytes: 1 << 35}}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := ev.send(event{T: evSample, Sample: s}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFitAdd is one point added to the least-squares fit (the parent does it per sample and device).
func BenchmarkFitAdd(b *testing.B) {
	var f slopeFit
	for i := 0; i < b.N; i++ {
		f.add(float64(i), float64(i)*1048576+4096)
	}
	if _, ok := f.slope(); !ok && b.N > 1 {
		b.Fatal("no slope")
	}
}
