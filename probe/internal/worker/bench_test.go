package worker

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The pieces around the allocation loop, measured one by one (scripts/bench.sh measures the whole loop
// against C). The binding call has its own benchmark in probe/internal/cl, the event's in probe/internal/wire.

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
