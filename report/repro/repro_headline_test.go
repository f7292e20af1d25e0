package repro

import (
	"fmt"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// The reproducer repeats the job the headline names: in a run without a failure whose headline names
// per-device (its memory alone did not grow with the buffers), it is per-device, not the first job; in the
// fixture, the failure the headline names.
func TestReproFollowsTheHeadline(t *testing.T) {
	fit := &result.Fit{Samples: 50, Spanned: 1000, OK: true}
	zero := 0.0
	mk := func(st result.Strategy, devicePerBuffer float64) result.JobResult {
		return result.JobResult{Strategy: st, Devices: []int{0, 1}, SizeBytes: 1 << 20, Outcome: result.OutcomeCompleted, AllocationsOK: 1000,
			BytesOK: 1000 << 20, Fit: fit, SystemBytesPerBuffer: &zero, DeviceSampler: "test", DeviceBytesPerBuffer: map[string]float64{"0": devicePerBuffer}}
	}
	deferred := &result.Run{Config: result.Config{Touch: result.TouchNone, MaxAllocs: 1000},
		Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}, {Index: 1, GlobalMemBytes: 8 << 30}},
		Jobs:    []result.JobResult{mk(result.Shared, 1<<20), mk(result.PerDevice, 0)}}
	for name, r := range map[string]*result.Run{"no failure": deferred, "fixture": fixture.Run(t)} {
		t.Run(name, func(t *testing.T) {
			h, _ := findings.Judge(r).Headline()
			if len(h.Strategies) == 0 {
				t.Fatalf("the headline names no strategy: %s", h.Sentence)
			}
			s, err := ReproJob(findings.Judge(r), "", "", "")
			if err != nil {
				t.Fatal(err)
			}
			if s.Strategy != h.Strategies[0] {
				t.Errorf("the reproducer repeats %s; the headline names %s: %s", s.Strategy, h.Strategies[0], h.Sentence)
			}
		})
	}
}

// What the reproducer repeats of a job that was stopped, crashed or hung reads as English: "which was
// stopped after", "which crashed after", never "which ended stopped after".
func TestReproSubjectOfAJobThatEndedEarly(t *testing.T) {
	for _, o := range []result.Outcome{result.OutcomeStopped, result.OutcomeCrashed, result.OutcomeHung} {
		const n = 383
		r := &result.Run{Jobs: []result.JobResult{{Strategy: result.Shared, Devices: []int{0}, SizeBytes: 1 << 20, Outcome: o, AllocationsOK: n}}}
		what, err := ReproSubject(findings.Judge(r))
		if err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		verb := string(o)
		if o == result.OutcomeStopped {
			verb = "was " + verb // a participle, not a verb of its own
		}
		want := fmt.Sprintf("the loop of %s, which %s after %d buffers", result.Shared, verb, n)
		if what != want { // not "ended "+the outcome
			t.Errorf("%s: %q, want %q", o, what, want)
		}
	}
}
