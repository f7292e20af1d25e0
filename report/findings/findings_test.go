package findings

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

func loadFixture(t *testing.T) *result.Run {
	t.Helper()
	r, err := result.Load(filepath.Join("..", "..", "probe", "result", "testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The fixture (faultcl, 2 devices, 64 MiB host budget, 256 MiB per device, written by an earlier build):
// its figures give these findings and limits, derived again by this build, each number from the fixture's
// own jobs.
func TestFindingsOfTheFixture(t *testing.T) {
	r := loadFixture(t)
	j := Judge(r)
	fs := j.Findings()
	jobs := map[result.Strategy]*result.JobResult{}
	for i := range r.Jobs {
		jobs[r.Jobs[i].Strategy] = &r.Jobs[i]
	}
	sh, pd := jobs[result.Shared], jobs[result.PerDevice]
	ratio := float64(pd.AllocationsOK) / float64(sh.AllocationsOK)
	head := fs[0]
	if head.Kind != result.FindingHeadline || head.About != result.FindingFailure || !slices.Equal(head.Strategies, []result.Strategy{result.Shared}) {
		t.Fatalf("headline %+v: want shared's first failure", head)
	}
	wantEvidence(t, head, map[string]float64{"allocations_ok": float64(sh.AllocationsOK), evidenceKey(result.PerDevice, "allocations_ok"): float64(pd.AllocationsOK), "ratio": ratio})
	ff := sh.FirstFailure
	wantEvidence(t, findingOf(t, fs, result.FindingFailure, result.Shared, result.MigrateFirst),
		map[string]float64{"index": float64(ff.Index), "code": float64(ff.Code), "device": float64(ff.Device), "bytes_before": float64(ff.BytesBefore)})
	wantEvidence(t, findingOf(t, fs, result.FindingComparison, result.PerDevice),
		map[string]float64{"allocations_ok": float64(pd.AllocationsOK), "ratio": ratio, evidenceKey(result.Shared, "allocations_ok"): float64(sh.AllocationsOK)})
	wantEvidence(t, findingOf(t, fs, result.FindingLimit, result.Shared, result.MigrateFirst), map[string]float64{"ratio": ratio})
	full := findingOf(t, fs, result.FindingLimit, result.PerDevice)
	global := float64(r.Devices[pd.FirstFailure.Device].GlobalMemBytes)
	wantEvidence(t, full, map[string]float64{"device": float64(pd.FirstFailure.Device), "device_global_bytes": global})
	if fill := evidence(t, full, "device_fill"); fill < 0.9 || fill != evidence(t, full, "device_used_bytes")/global {
		t.Errorf("per-device's device fill %v: want its used bytes over %v global, at least 90%%", fill, global)
	}
	findingOf(t, fs, result.FindingOutcome, result.DeviceList)
	// The earlier build kept 5 and 2 samples: too few for a cost, whatever the file's slopes say, so no cost
	// finding carries a figure.
	for _, f := range findingsOf(fs, result.FindingCost) {
		if len(f.Evidence) > 0 {
			t.Errorf("a cost from too few samples was stated: %v", f.Evidence)
		}
	}
	notHost := findingOf(t, fs, result.FindingCode, result.Shared, result.PerDevice, result.MigrateFirst)
	if avail, ram := evidence(t, notHost, "host_available_bytes"), evidence(t, notHost, "host_ram_bytes"); avail <= hostLowFraction*ram {
		t.Errorf("-6 said not to prove host memory ran out with %v of %v available", avail, ram)
	}
	if rt := RuntimeOf(r.Platform); !slices.ContainsFunc(fs, func(f result.Finding) bool { return f.Kind == result.FindingCode && f.Source == rt.Source }) {
		t.Errorf("no finding cites %s's row (%s)", rt.Name, rt.Source)
	}
	want := map[result.Strategy]result.Limit{result.Shared: result.LimitContext, result.PerDevice: result.LimitDeviceMemory,
		result.MigrateFirst: result.LimitContext, result.DeviceList: ""}
	for st, l := range want {
		if got := limitOf(t, j, st, 0).Limit; got != l {
			t.Errorf("%s: limit %q, want %q", st, got, l)
		}
	}
	if v := j.Verdict(); len(v) != len(fs) || v[0] != head.Sentence {
		t.Errorf("findings and verdict must match, the headline first")
	}
}

// Costs: strategies whose costs read alike share one finding, with the figures of the run; device memory
// that did not move gives no replication factor; and where memory did not grow, the headline says so and no
// other finding says it again.
func TestCostFindings(t *testing.T) {
	fit := &result.Fit{Samples: 50, Spanned: 1000, OK: true}
	const host, size = 300, 1 << 20
	sys := float64(0)
	mk := func(st result.Strategy, dev float64) result.JobResult {
		return result.JobResult{Strategy: st, SizeBytes: size, Outcome: result.OutcomeCompleted, AllocationsOK: 1000, Fit: fit,
			HostBytesPerBuffer: host, SystemBytesPerBuffer: &sys, DeviceBytesPerBuffer: map[string]float64{"0": dev}, DeviceSampler: "test"}
	}
	r := &result.Run{Config: result.Config{Touch: result.TouchNone}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}},
		Jobs: []result.JobResult{mk(result.Shared, 0), mk(result.PerDevice, 0)}}
	fs := Judge(r).Findings()
	cost := findingOf(t, fs, result.FindingCost, result.Shared, result.PerDevice)
	wantEvidence(t, cost, map[string]float64{"host_bytes_per_buffer": host, "system_bytes_per_buffer": sys, "device_bytes_per_buffer": 0})
	if _, ok := cost.Evidence["replication_factor"]; ok {
		t.Errorf("no device memory was placed, yet a replication factor: %v", cost.Evidence)
	}
	if h := fs[0]; h.About != result.FindingDeferred || !slices.Equal(h.Strategies, []result.Strategy{result.Shared, result.PerDevice}) {
		t.Errorf("headline %+v: want it to say memory did not grow for both", h)
	}
	if d := findingsOf(fs, result.FindingDeferred); len(d) != 0 {
		t.Errorf("the headline says memory did not grow; %d findings say it again", len(d))
	}
}

// Without a device sampler, a cheap host does not make deferred allocation a finding: it is a question the
// run could not answer, a finding of what was not measured that a job with a costly host does not have.
func TestDeferredNeedsADeviceMeasurement(t *testing.T) {
	fit := &result.Fit{Samples: 50, Spanned: 1000, OK: true}
	const size = 1 << 20
	unmeasured := map[float64]int{}
	for _, host := range []float64{100, size} {
		r := &result.Run{Config: result.Config{Touch: result.TouchNone}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}},
			Jobs: []result.JobResult{{Strategy: result.PerDevice, SizeBytes: size, Outcome: result.OutcomeCompleted, AllocationsOK: 1000,
				Fit: fit, HostBytesPerBuffer: host, DeviceSampler: "not available: no sampler for these devices"}}}
		fs := Judge(r).Findings()
		if fs[0].About == result.FindingDeferred || len(findingsOf(fs, result.FindingDeferred)) > 0 {
			t.Errorf("host %v B per buffer: deferred allocation claimed without a device measurement:\n%s", host, sentences(fs))
		}
		unmeasured[host] = len(findingsOf(fs, result.FindingUnmeasured, result.PerDevice))
	}
	// Both say the device sampler did not apply; only the cheap host also says at-create or first-use
	// cannot be told.
	if unmeasured[100] != 2 || unmeasured[size] != 1 {
		t.Errorf("findings of what was not measured, by host cost: %v, want 2 for 100 B and 1 for a buffer's size", unmeasured)
	}
}

// randomRun is fixture.Random: the generated runs the findings' properties are checked over.
func randomRun(rng *rand.Rand) *result.Run { return fixture.Random(rng) }

// No job is limited by its device's memory (the limit every "device is full" sentence states) unless its
// recorded use (or, unsampled, the bytes given to it where the runtime stopped at its size) reached 90% of
// its global memory; the limit's evidence carries that fill.
func TestNoDeviceRanOutBelowNinetyPercent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	claims := 0
	for n := 0; n < 20000; n++ {
		r := randomRun(rng)
		j := Judge(r)
		for i := range r.Jobs {
			s := &r.Jobs[i]
			l := j.Limit(&j.Run().Jobs[i])
			if l.Limit != result.LimitDeviceMemory {
				continue
			}
			claims++
			v := newView(r, s)
			use := v.fill(v.given)
			if v.usedKnown {
				use = v.fill(v.used)
			}
			if use < 0.9 {
				t.Fatalf("run %d: %s limited by device memory, but device %d's recorded use is %.1f%% of its memory", n, s.Strategy, v.failDev, 100*use)
			}
			if l.Evidence["device_fill"] != use || l.Evidence["device"] != float64(v.failDev) {
				t.Fatalf("run %d: %s's evidence %v, want device %d at fill %v", n, s.Strategy, l.Evidence, v.failDev, use)
			}
		}
	}
	if claims == 0 {
		t.Fatal("no run claimed a full device: the generator does not reach the case")
	}
	t.Logf("%d claims of a full device checked", claims)
}

// Every row of the runtime table says where its facts come from, and platforms find their row.
func TestRuntimeTable(t *testing.T) {
	for _, rt := range Runtimes {
		if rt.Name == "" || rt.Source == "" || len(rt.Codes) == 0 {
			t.Errorf("row %q lacks a name, a source or codes", rt.Name)
		}
	}
	for platform, want := range map[string]string{
		"Intel(R) OpenCL Graphics":            "Intel compute-runtime (NEO)",
		"AMD Accelerated Parallel Processing": "ROCm CLR",
		"Portable Computing Language":         "PoCL",
		"NVIDIA CUDA":                         "NVIDIA OpenCL",
		"rusticl":                             "Mesa rusticl",
		"faultcl":                             "clmemprobe's fault-injection runtime (faultcl)",
		"Some Other Runtime":                  "the OpenCL specification",
	} {
		if got := RuntimeOf(result.Platform{Name: platform}).Name; got != want {
			t.Errorf("%s: row %q, want %q", platform, got, want)
		}
	}
}

// Committed memory is a machine-wide figure: a negative slope, or one within the noise, is no cost of a
// buffer and is not written; a positive one past the noise is.
func TestCommittedNoiseIsLeftOut(t *testing.T) {
	fit := &result.Fit{Samples: 50, Spanned: 1000, OK: true}
	const size = 1 << 20
	for _, c := range []struct {
		committed float64
		shown     bool
	}{{-1006.37 * 1024, false}, {-21.49 * 1024, false}, {result.NoiseFraction * size / 2, false}, {3 * size, true}} {
		committed, sys := c.committed, float64(0)
		r := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}},
			Jobs: []result.JobResult{{Strategy: result.Shared, Devices: []int{0}, SizeBytes: size, Outcome: result.OutcomeCompleted, AllocationsOK: 1000, Fit: fit,
				HostBytesPerBuffer: 300, SystemBytesPerBuffer: &sys, CommittedBytesPerBuffer: &committed, DeviceBytesPerBuffer: map[string]float64{"0": size}, DeviceSampler: "test"}}}
		f := findingOf(t, Judge(r).Findings(), result.FindingCost, result.Shared)
		if got, shown := f.Evidence["committed_bytes_per_buffer"]; shown != c.shown || (shown && got != c.committed) {
			t.Errorf("committed %.0f B per buffer: evidence %v, want it shown %v", c.committed, f.Evidence, c.shown)
		}
	}
}
