package findings

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
	"github.com/clmemprobe/clmemprobe/report/result"
)

func loadFixture(t *testing.T) *result.Run {
	t.Helper()
	r, err := result.Load(filepath.Join("..", "result", "testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The fixture (faultcl, 2 devices, 64 MiB host budget, 256 MiB per device, written by an earlier build):
// its figures give these findings, derived again by this build.
func TestFindingsOfTheFixture(t *testing.T) {
	r := loadFixture(t)
	apply(r)
	v := strings.Join(r.Verdict, "\n")
	for _, want := range []string{
		"shared failed first, at buffer #64 (after 64 MiB), with CL_OUT_OF_HOST_MEMORY (-6) at create: one context per device reached 8.00x",
		"shared and migrate-first failed first at buffer #64 (after 64 MiB)",
		"per-device reached 512 buffers, 8.00x as many as shared (64)",
		"shared and migrate-first: ended at 64 buffers where one context per device reached 512 (8.00x)",
		"per-device: when buffer #512 failed, device 0 held 256 MiB, 100.0% of its 256 MiB global memory: the device's memory ran out (device-memory)",
		"device-list is not supported here",
		// The earlier build kept 5 and 2 samples: too few for a cost, whatever the file's slopes say.
		"shared and migrate-first: no cost per buffer, too few samples to fit one (5 samples",
		"CL_OUT_OF_HOST_MEMORY (shared, per-device and migrate-first) does not prove host memory ran out",
		"On clmemprobe's fault-injection runtime (faultcl), CL_OUT_OF_HOST_MEMORY (-6) means",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "replication factor") || strings.Contains(v, "costs 1.99x the device memory") {
		t.Errorf("a cost from too few samples was stated:\n%s", v)
	}
	want := map[result.Strategy]result.Limit{result.Shared: result.LimitContext, result.PerDevice: result.LimitDeviceMemory,
		result.MigrateFirst: result.LimitContext, result.DeviceList: ""}
	for _, s := range r.Jobs {
		if s.Limit != want[s.Strategy] {
			t.Errorf("%s: limit %q, want %q", s.Strategy, s.Limit, want[s.Strategy])
		}
	}
	if len(r.Findings) != len(r.Verdict) || r.Findings[0].Kind != result.FindingHeadline {
		t.Errorf("findings and verdict must match, the headline first")
	}
}

// Costs: a ratio under 1% is a percentage; device memory that did not move gives no replication factor;
// strategies whose costs read alike share a sentence.
func TestCostSentences(t *testing.T) {
	fit := &result.Fit{Samples: 50, Spanned: 1000, OK: true}
	sys := float64(0)
	mk := func(st result.Strategy, dev float64) result.JobResult {
		return result.JobResult{Strategy: st, SizeBytes: 1 << 20, Outcome: result.OutcomeCompleted, AllocationsOK: 1000, Fit: fit,
			HostBytesPerBuffer: 300, SystemBytesPerBuffer: &sys, DeviceBytesPerBuffer: map[string]float64{"0": dev}, DeviceSampler: "test"}
	}
	r := &result.Run{Config: result.Config{Touch: result.TouchNone}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}},
		Jobs: []result.JobResult{mk(result.Shared, 0), mk(result.PerDevice, 0)}}
	apply(r)
	v := strings.Join(r.Verdict, "\n")
	for _, want := range []string{
		"shared and per-device cost 300 B of host RSS per buffer (0.03% of the buffer size), no measurable system memory and 0 B of device memory: no device memory was placed, so no replication factor",
		"memory did not grow with them: the runtime defers allocation to first use",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q:\n%s", want, v)
		}
	}
	// The headline says memory did not grow; no other finding says it again.
	if n := strings.Count(v, "did not grow"); n != 1 {
		t.Errorf("%d findings say memory did not grow, want 1 (the headline):\n%s", n, v)
	}
}

// Without a device sampler, a cheap host does not make deferred allocation a finding.
func TestDeferredNeedsADeviceMeasurement(t *testing.T) {
	fit := &result.Fit{Samples: 50, Spanned: 1000, OK: true}
	r := &result.Run{Config: result.Config{Touch: result.TouchNone}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}},
		Jobs: []result.JobResult{{Strategy: result.PerDevice, SizeBytes: 1 << 20, Outcome: result.OutcomeCompleted, AllocationsOK: 1000,
			Fit: fit, HostBytesPerBuffer: 100, DeviceSampler: "not available: no sampler for these devices"}}}
	apply(r)
	v := strings.Join(r.Verdict, "\n")
	if strings.Contains(v, "defers allocation") {
		t.Errorf("deferred allocation claimed without a device measurement:\n%s", v)
	}
	if !strings.Contains(v, "device memory was not measured, so whether the runtime allocates at create or at first use cannot be told") {
		t.Errorf("the verdict should say what could not be measured:\n%s", v)
	}
}

// randomRun is fixture.Random: the generated runs the findings' properties are checked over.
func randomRun(rng *rand.Rand) *result.Run { return fixture.Random(rng) }

// No sentence says a device ran out, or was full, unless its recorded use (or, unsampled, the bytes given
// to it where the runtime stopped at its size) reached 90% of its global memory.
func TestNoDeviceRanOutBelowNinetyPercent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	claims := 0
	for n := 0; n < 20000; n++ {
		r := randomRun(rng)
		apply(r)
		for _, f := range r.Findings {
			if !strings.Contains(f.Sentence, "the device's memory ran out") && !strings.Contains(f.Sentence, "device is full") &&
				!strings.Contains(f.Sentence, "was full") {
				continue
			}
			claims++
			for _, name := range f.Strategies {
				for i := range r.Jobs {
					s := &r.Jobs[i]
					if s.Strategy != name || (len(f.Sizes) > 0 && s.SizeBytes != f.Sizes[0]) || s.FirstFailure == nil {
						continue
					}
					v := newView(r, s)
					use := v.fill(v.given)
					if v.usedKnown {
						use = v.fill(v.used)
					}
					if use < 0.9 {
						t.Fatalf("run %d: %q, but device %d's recorded use is %.1f%% of its memory", n, f.Sentence, v.failDev, 100*use)
					}
				}
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
		v := verdictOf(r)
		if got := strings.Contains(v, "committed)"); got != c.shown {
			t.Errorf("committed %.0f B per buffer: written %v, want %v:\n%s", c.committed, got, c.shown, v)
		}
	}
}
