package findings

import (
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// Pool's figures: two devices, a pool of 512 MiB each, made with buffers #0 and #1 (round robin), and 64 B
// of RSS a sub-buffer after them.
const poolEach, poolSubCost = 512 * mib, 64

// pooledJob is a pool job over devices 0 and 1 whose samples hold both pools: the one before buffer #0,
// then one at buffer #4, after both pools and four sub-buffers.
func pooledJob(fit *result.Fit) result.JobResult {
	s := job(result.Pool, result.OutcomeCompleted, 100, 0, 1)
	s.Fit, s.HostBytesPerBuffer = fit, poolSubCost
	const rss, vms = 100 * mib, 1 << 30
	s.Samples = []result.Sample{{Index: 0, RSSBytes: rss, VMSBytes: vms},
		{Index: 4, RSSBytes: rss + 2*poolEach + 4*poolSubCost, VMSBytes: vms + 2*poolEach}}
	return s
}

// The pool strategy's cost per buffer leaves out the pool buffers (the collector fits only the samples
// after them), so the cost sentence says what they took: before, "pool cost 20 B of host RSS per buffer"
// was all a rusticl run said of a pool that had grown its RSS by 2 GiB at create.
func TestThePoolsOwnBuffersAreSaidBesideTheirCost(t *testing.T) {
	r := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 4 << 30}, {Index: 1, GlobalMemBytes: 4 << 30}},
		Jobs: []result.JobResult{pooledJob(&result.Fit{Samples: 50, Spanned: 100, OK: true})}}
	var cost *result.Finding
	for _, f := range Judge(r).Findings() {
		if f.Kind == result.FindingCost && strings.Contains(f.Sentence, "pool") {
			cost = &f
		}
	}
	if cost == nil {
		t.Fatal("no cost finding of the pool")
	}
	lump := float64(2 * poolEach) // both pools; the four sub-buffers' fitted cost is not the pools'
	if cost.Evidence["pool_rss_bytes"] != lump || cost.Evidence["pool_vms_bytes"] != lump {
		t.Errorf("evidence %v, want %v of RSS and of virtual memory", cost.Evidence, lump)
	}
	if want := "the process's RSS grew " + units.Bytes(uint64(lump)); !strings.Contains(cost.Sentence, want) || !strings.Contains(cost.Sentence, "one per device") {
		t.Errorf("%q does not say %q of both devices' pools", cost.Sentence, want)
	}
	// Without a reading of virtual memory, nothing is said of the pools.
	bare := pooledJob(&result.Fit{Samples: 50, Spanned: 100, OK: true})
	for i := range bare.Samples {
		bare.Samples[i].VMSBytes = 0
	}
	r.Jobs = []result.JobResult{bare}
	for _, f := range Judge(r).Findings() {
		if _, ok := f.Evidence["pool_rss_bytes"]; ok || strings.Contains(f.Sentence, "pool's own") {
			t.Errorf("without virtual memory readings: %q (%v)", f.Sentence, f.Evidence)
		}
	}
}
