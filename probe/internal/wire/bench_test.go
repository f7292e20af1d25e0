package wire

import (
	"io"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// BenchmarkEventSend is one sample event encoded and written to the parent's pipe.
func BenchmarkEventSend(b *testing.B) {
	ev := NewEncoder(io.Discard)
	s := &result.Sample{Index: 123456, Seconds: 1.5, RSSBytes: 1 << 30, VMSBytes: 1 << 34, HWMBytes: 1 << 30, AvailBytes: 1 << 34,
		Mappings: 512, DeviceSamples: []result.DeviceSample{{Device: 0, UsedBytes: 1 << 35, FreeBytes: 1 << 36}, {Device: 1, UsedBytes: 1 << 35}}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := ev.Send(Event{T: EventSample, Sample: s}); err != nil {
			b.Fatal(err)
		}
	}
}
