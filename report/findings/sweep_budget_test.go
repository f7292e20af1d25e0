package findings

import (
	"fmt"
	"slices"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
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
			r.Jobs = append(r.Jobs, j)
		}
	}
	f := Judge(r).Findings()[0]
	if f.About != result.FindingCompleted {
		t.Fatalf("headline %+v: want the completed budget", f)
	}
	for _, size := range sizes {
		wantEvidence(t, f, map[string]float64{fmt.Sprintf("allocations_ok@%d", size): n, fmt.Sprintf("bytes_ok@%d", size): float64(n * size)})
	}
	// That the sentence states each size's bytes is TestEachSentenceStatesItsEvidence's; that it states no
	// one byte figure for all is prose only, the golden file's.
	goldenLines(t, "sweep-budget", []string{f.Sentence})
}

// In a sweep where memory did not grow at one size and did at another, the headline says at which size
// it did not: "memory did not grow" is not said of the buffers that took memory.
func TestNoGrowthIsSaidOfItsSize(t *testing.T) {
	const n = 200
	fit := &result.Fit{Samples: 50, Spanned: n, OK: true}
	r := &result.Run{Config: result.Config{Touch: result.TouchNone, MaxAllocs: n},
		Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30, HostUnified: true}}}
	for _, c := range []struct {
		size uint64
		host float64
	}{{4 << 10, 4096}, {mib, 300}} {
		j := job(result.Shared, result.OutcomeCompleted, n, 0)
		j.SizeBytes, j.BytesOK, j.Fit, j.HostBytesPerBuffer, j.DeviceSampler = c.size, n*c.size, fit, c.host, "not available: test"
		r.Jobs = append(r.Jobs, j)
	}
	fs := Judge(r).Findings()
	if h := fs[0]; h.About != result.FindingDeferred {
		t.Fatalf("headline %+v: want memory that did not grow", h)
	}
	// Only the 1 MiB job's host cost (300 B) is under 5% of its buffer: the deferred headline is of that
	// size, and the 4 KiB job keeps a cost finding whose host figure is its whole buffer.
	// The headline names no size of its own: that it is of the 1 MiB buffers is in its words, the golden
	// file's.
	goldenLines(t, "sweep-no-growth", []string{fs[0].Sentence})
	small := 0
	for _, f := range findingsOf(fs, result.FindingCost, result.Shared) {
		if f.Sizes[0] == 4<<10 {
			small++
			wantEvidence(t, f, map[string]float64{"host_bytes_per_buffer": 4096})
		}
	}
	if small != 1 {
		t.Errorf("%d cost findings at 4 KiB, want 1:\n%s", small, sentences(fs))
	}
}

// A sweep whose small buffers all completed and whose large ones failed leads with the failure, at its
// size: "no allocation failed" above a table of failures would be false.
func TestSweepHeadlineIsTheFirstSizeThatFailed(t *testing.T) {
	r := &result.Run{Config: result.Config{Touch: result.TouchNone, MaxAllocs: 100},
		Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}, {Index: 1, GlobalMemBytes: 8 << 30}}}
	small := job(result.Shared, result.OutcomeCompleted, 100, 0, 1)
	small.SizeBytes, small.BytesOK = 4<<10, 100*4<<10
	r.Jobs = append(r.Jobs, small, failedAt(result.Shared, 64, 0, 0, 1))
	h := Judge(r).Findings()[0]
	if h.About != result.FindingFailure || !slices.Equal(h.Sizes, []uint64{mib}) || !slices.Equal(h.Strategies, []result.Strategy{result.Shared}) {
		t.Errorf("headline %+v: want shared's failure at 1 MiB", h)
	}
	wantEvidence(t, h, map[string]float64{"allocations_ok": 64})
}
