package findings

import (
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
)

// A sweep's headline states the budget per size: one count of buffers is a different number of bytes at
// each size, so "200 buffers (200 MiB)" would be wrong for the 4 KiB jobs.
func TestSweepHeadlineStatesTheBudgetPerSize(t *testing.T) {
	const n = 200
	sizes := []uint64{4 << 10, mib}
	r := &result.Run{Config: result.Config{Touch: result.TouchFill, MaxAllocs: n, Sizes: sizes},
		Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}, {Index: 1, GlobalMemBytes: 8 << 30}}}
	for _, size := range sizes {
		for _, st := range []result.Strategy{result.Shared, result.PerDevice} {
			j := job(st, result.OutcomeCompleted, n, 0, 1)
			j.SizeBytes, j.BytesOK = size, n*size
			r.Strategies = append(r.Strategies, j)
		}
	}
	Apply(r)
	h := r.Verdict[0]
	for _, size := range sizes {
		if want := units.Bytes(n*size) + " at " + units.Size(size); !strings.Contains(h, want) {
			t.Errorf("the headline does not say %q: %s", want, h)
		}
	}
	if strings.Contains(h, "("+units.Bytes(n*sizes[len(sizes)-1])+")") {
		t.Errorf("the headline gives one byte figure for every size: %s", h)
	}
}
