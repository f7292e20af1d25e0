package comparison

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// A job the host guard stopped ended at the run's reserve, not at a limit of the runtime: however few
// buffers it reached, against either run, it is no regression.
func TestGuardStopIsNoRegression(t *testing.T) {
	base := fixture.Run(t)
	guarded := func(s *result.JobResult) {
		s.Outcome, s.Guard, s.Reason, s.FirstFailure = result.OutcomeStopped, result.GuardSystem, "host guard: below the reserve", nil
		s.AllocationsOK /= 4
	}
	wantInconclusive(t, "a guard stop", map[string][2]*result.Run{
		"new run guarded":  {base, cloneWith(base, guarded)},
		"baseline guarded": {cloneWith(base, guarded), base},
	})
}

// wantInconclusive compares each pair (baseline, new) and wants no regression and every job that ran
// inconclusive.
func wantInconclusive(t *testing.T, what string, pairs map[string][2]*result.Run) {
	for name, runs := range pairs {
		t.Run(name, func(t *testing.T) {
			cmp := Compare(runs[0], runs[1], 0.10)
			if cmp.Regressed {
				t.Errorf("%s counted as a regression: %+v", what, cmp.Rows)
			}
			for _, r := range cmp.Rows {
				if r.BaseOutcome != result.OutcomeUnsupported && r.Change != ChangeInconclusive {
					t.Errorf("%s: change %q (%s), want %q", r.Strategy, r.Change, r.Why, ChangeInconclusive)
				}
			}
		})
	}
}

// An interrupted run (Ctrl-C) is no regression either: a job it stopped before any limit, and a job it did
// not reach, are inconclusive against the baseline, whichever side was interrupted.
func TestInterruptedRunIsNoRegression(t *testing.T) {
	base := fixture.Run(t)
	stopped := func(s *result.JobResult) {
		s.Outcome, s.StopCause, s.Reason, s.FirstFailure = result.OutcomeStopped, result.StopInterrupted, "interrupted", nil
		s.AllocationsOK /= 3
	}
	partial := cloneWith(base, stopped)
	partial.Partial = true
	partial.Jobs = partial.Jobs[:1] // the others never ran
	wantInconclusive(t, "an interrupted run", map[string][2]*result.Run{
		"new run interrupted":  {base, partial},
		"baseline interrupted": {cloneWith(base, stopped), base},
	})
}
