package findings

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// No printed cost or conclusion rests on a slope inside its own noise, over generated runs whose slopes'
// noise runs from none to more than the figures: a system or committed figure is printed as a cost only
// above its noise; memory held outside the process is said only where the difference clears its noise;
// "did not grow" is said only where every slope, moved by its noise, stays under the threshold.
func TestNoFigureInsideItsNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 5))
	checked := map[string]int{}
	for n := 0; n < 20000; n++ {
		r := randomRun(rng)
		apply(r)
		for _, f := range r.Findings {
			for _, s := range jobsOfFinding(r, f) {
				noise := s.Noise()
				switch f.Kind {
				case result.FindingCost:
					// A system figure is in the evidence whether or not it cleared its noise; the sentence
					// says which ("no measurable system memory"), so the claim is read there.
					if sys := s.SystemBytesPerBuffer; sys != nil && strings.Contains(f.Sentence, units.SignedBytes(*sys)+" of system memory") {
						checked["system"]++
						if !result.Measured(*sys, noise.System, s.SizeBytes) {
							t.Fatalf("run %d: %q prints %s of system memory with a noise of %s", n, f.Sentence, units.SignedBytes(*sys), units.SignedBytes(noise.System))
						}
					}
					// A committed figure is in a cost's evidence only where its sentence states it.
					if _, shown := f.Evidence["committed_bytes_per_buffer"]; shown && s.CommittedBytesPerBuffer != nil {
						c := s.CommittedBytesPerBuffer
						checked["committed"]++
						if !result.Measured(*c, noise.Committed, s.SizeBytes) {
							t.Fatalf("run %d: %q prints %s committed with a noise of %s", n, f.Sentence, units.SignedBytes(*c), units.SignedBytes(noise.Committed))
						}
					}
				case result.FindingOutsideRSS:
					checked["outside"]++
					sys, c := 0.0, 0.0
					if s.SystemBytesPerBuffer != nil {
						sys = *s.SystemBytesPerBuffer - s.HostBytesPerBuffer - noise.System - noise.Host
					}
					if s.CommittedBytesPerBuffer != nil {
						c = *s.CommittedBytesPerBuffer - s.HostBytesPerBuffer - noise.Committed - noise.Host
					}
					if max(sys, c) <= cheapFraction*float64(s.SizeBytes) {
						t.Fatalf("run %d: %q rests on a difference inside its noise (%+v)", n, f.Sentence, noise)
					}
				case result.FindingDeferred:
					// Of a completed job a deferred finding says memory did not grow; of a failed one, that
					// the failure surfaced at first use.
					if s.Outcome != result.OutcomeCompleted {
						continue
					}
					checked["deferred"]++
					cheap := cheapFraction * float64(s.SizeBytes)
					if abs(s.HostBytesPerBuffer)+noise.Host >= cheap || (s.SystemBytesPerBuffer != nil && *s.SystemBytesPerBuffer+noise.System >= cheap) ||
						(s.CommittedBytesPerBuffer != nil && *s.CommittedBytesPerBuffer+noise.Committed >= cheap) {
						t.Fatalf("run %d: %q, but a slope within its noise reaches %s: %+v", n, f.Sentence, units.SignedBytes(cheap), noise)
					}
				}
			}
		}
	}
	for _, k := range []string{"system", "committed", "outside", "deferred"} {
		if checked[k] == 0 {
			t.Errorf("no %s claim was generated: the generator does not reach the case", k)
		}
	}
	t.Logf("claims checked: %v", checked)
}

// jobsOfFinding is the jobs a finding is about: its strategies at its size.
func jobsOfFinding(r *result.Run, f result.Finding) []*result.JobResult {
	var out []*result.JobResult
	for i := range r.Jobs {
		s := &r.Jobs[i]
		for _, st := range f.Strategies {
			if s.Strategy == st && (len(f.Sizes) == 0 || s.SizeBytes == f.Sizes[0]) {
				out = append(out, s)
			}
		}
	}
	return out
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
