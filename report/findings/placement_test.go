package findings

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// TestPlacementReadsWhatWasMeasured: a job's placement comes from the memory its buffers live in, never
// from the strategy's name, and is unknown where nothing measured tells.
func TestPlacementReadsWhatWasMeasured(t *testing.T) {
	const size = 1 << 20
	committed := func(b float64) *float64 { return &b }
	discrete := []result.Device{{Index: 0}, {Index: 1}}
	unified := []result.Device{{Index: 0, HostUnified: true}}
	for _, c := range []struct {
		name    string
		touch   result.Touch
		devices []result.Device
		job     result.JobResult
		want    placement
	}{
		{"a touch places", result.TouchFill, discrete, result.JobResult{AllocationsOK: 10}, placedAll},
		{"device memory grew a buffer a buffer", result.TouchNone, discrete,
			result.JobResult{AllocationsOK: 10, DeviceBytesPerBuffer: map[string]float64{"0": size / 2, "1": size / 2}}, placedAll},
		{"device and host memory did not grow", result.TouchNone, discrete,
			result.JobResult{AllocationsOK: 10, HostBytesPerBuffer: 600, DeviceBytesPerBuffer: map[string]float64{"0": 0, "1": 0}}, placedNone},
		{"device memory did not grow, host memory did", result.TouchNone, discrete,
			result.JobResult{AllocationsOK: 10, HostBytesPerBuffer: size, DeviceBytesPerBuffer: map[string]float64{"0": 0}}, placementUnknown},
		{"device memory not measured on a device of its own", result.TouchNone, discrete,
			result.JobResult{AllocationsOK: 10, HostBytesPerBuffer: 600}, placementUnknown},
		// oclgrind reports no unified memory and allocates every buffer in the host's memory at create.
		{"device memory not measured, host memory grew a buffer a buffer", result.TouchNone, discrete,
			result.JobResult{AllocationsOK: 10, HostBytesPerBuffer: size}, placedAll},
		{"host memory is the device's and was committed", result.TouchNone, unified,
			result.JobResult{AllocationsOK: 10, HostBytesPerBuffer: 5000, CommittedBytesPerBuffer: committed(size)}, placedAll},
		{"host memory is the device's and did not grow", result.TouchNone, unified,
			result.JobResult{AllocationsOK: 10, HostBytesPerBuffer: 600}, placedNone},
		{"too few samples", result.TouchNone, unified,
			result.JobResult{AllocationsOK: 10, HostBytesPerBuffer: 600, Fit: &result.Fit{OK: false}}, placementUnknown},
		{"no buffer", result.TouchFill, discrete, result.JobResult{}, placementUnknown},
		{"a fill that did not take", result.TouchFill, discrete, result.JobResult{AllocationsOK: 0, Outcome: result.OutcomeWrong}, placementUnknown},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &result.Run{Devices: c.devices, Config: result.Config{Touch: c.touch}}
			s := c.job
			s.SizeBytes = size
			if s.Fit == nil {
				s.Fit = &result.Fit{OK: true}
			}
			if got := placementOf(r, &s); got != c.want {
				t.Errorf("placement %d, want %d", got, c.want)
			}
		})
	}
	if placedAlike(placedAll, placedNone) || !placedAlike(placedAll, placementUnknown) || !placedAlike(placedNone, placedNone) || placedAlike(placedNone, placementUnknown) {
		t.Error("a job known to have placed none is held only against another known to have placed none; the rest against all but those")
	}
}

// useLayout finds the layout a headline tells the user to use.
var useLayout = regexp.MustCompile(`use ([a-z-]+)'s layout`)

// TestNoClaimHoldsJobsPlacedApart: over generated sweeps, no claim holds a job that placed its buffers
// against one that placed none: no "N buffers, X as many as" comparison, no context limit measured by a
// per-device job placed otherwise, no "use X's layout" unless X and the failing job are known to have
// placed alike. The generator makes such pairs (counted), or the property would be empty.
func TestNoClaimHoldsJobsPlacedApart(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 9))
	apart := 0
	for n := 0; n < 3000; n++ {
		r := fixture.RandomSweep(rng)
		placeAtRandom(rng, r)
		apply(r)
		// alike says whether some variant and flag set has jobs of strategies a and b at size, placed alike
		// (known alike where known is set).
		alike := func(a, b result.Strategy, size uint64, known bool) bool {
			for i := range r.Jobs {
				for k := range r.Jobs {
					x, y := &r.Jobs[i], &r.Jobs[k]
					if x.Strategy != a || y.Strategy != b || x.SizeBytes != size || y.SizeBytes != size || x.Variant != y.Variant || x.Flags != y.Flags {
						continue
					}
					px, py := placementOf(r, x), placementOf(r, y)
					if !knownApart(px, py) && (!known || px == py && px != placementUnknown) {
						return true
					}
				}
			}
			return false
		}
		for i := range r.Jobs {
			for k := range r.Jobs {
				if knownApart(placementOf(r, &r.Jobs[i]), placementOf(r, &r.Jobs[k])) {
					apart++
				}
			}
			if s := &r.Jobs[i]; s.Limit == result.LimitContext && !alike(s.Strategy, result.PerDevice, s.SizeBytes, false) {
				t.Fatalf("run %d: %s at %d has the context limit, measured by a per-device job placed otherwise", n, s.Strategy, s.SizeBytes)
			}
		}
		for _, f := range r.Findings {
			if f.Kind != result.FindingComparison || f.Evidence["ratio"] == 0 || len(f.Sizes) == 0 {
				continue
			}
			for key := range f.Evidence {
				first, ok := strings.CutSuffix(key, "_allocations_ok")
				if !ok || first == "allocations" {
					continue
				}
				for _, o := range f.Strategies {
					if !alike(o, result.Strategy(strings.ReplaceAll(first, "_", "-")), f.Sizes[0], false) {
						t.Fatalf("run %d: %q compares jobs placed apart", n, f.Sentence)
					}
				}
			}
		}
		if m := useLayout.FindStringSubmatch(r.Verdict[0]); m != nil {
			h := r.Findings[0]
			if !alike(h.Strategies[0], result.Strategy(m[1]), h.Sizes[0], true) {
				t.Fatalf("run %d: %q, but %s and %s are not known to have placed alike", n, r.Verdict[0], h.Strategies[0], m[1])
			}
		}
	}
	if apart == 0 {
		t.Fatal("the generator made no jobs placed apart")
	}
	t.Logf("%d pairs of jobs placed apart", apart)
}

// knownApart is the test's own rule: one job known to have placed its buffers, the other known to have
// placed none.
func knownApart(a, b placement) bool {
	return a != b && a != placementUnknown && b != placementUnknown
}

// placeAtRandom makes the generated run one without a touch in which each job, with a fit, placed its
// buffers on its devices (a buffer's size a buffer) or placed none (nothing grew), at random: the pairs the
// property is about, which the generator alone makes rarely.
func placeAtRandom(rng *rand.Rand, r *result.Run) {
	r.Config.Touch = result.TouchNone
	for i := range r.Jobs {
		s := &r.Jobs[i]
		s.Fit, s.SlopeNoise, s.CommittedBytesPerBuffer = &result.Fit{OK: true}, nil, nil
		none := 0.0
		s.SystemBytesPerBuffer, s.HostBytesPerBuffer = &none, 600
		s.DeviceBytesPerBuffer = map[string]float64{"0": 0}
		if rng.IntN(2) == 0 {
			s.DeviceBytesPerBuffer["0"] = float64(s.SizeBytes)
		}
	}
}
