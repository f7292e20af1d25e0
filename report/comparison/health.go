package comparison

import (
	"cmp"
	"fmt"
	"math"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Health is check's answer: whether each expected job still reaches what it reached when it was recorded.
type Health struct {
	Healthy   bool        `json:"healthy"`
	Tolerance float64     `json:"tolerance"`
	Seconds   float64     `json:"seconds"`
	Budget    float64     `json:"budget_seconds"`     // the old name of time_limit_seconds, kept for scripts that read it
	TimeLimit float64     `json:"time_limit_seconds"` // --time-limit: the same figure as budget_seconds
	Notes     []string    `json:"notes,omitempty"`    // what changed but does not make a node unhealthy (the driver)
	Jobs      []HealthJob `json:"jobs"`
	// Interrupted says Ctrl-C stopped the check once its jobs began: nothing is judged (Healthy says
	// nothing), JobsDone of JobsPlanned jobs ran to their end.
	Interrupted bool `json:"interrupted,omitempty"`
	JobsDone    int  `json:"jobs_done,omitempty"`
	JobsPlanned int  `json:"jobs_planned,omitempty"`
}

// HealthJob is one expected job against what the check's run did.
type HealthJob struct {
	Strategy        result.Strategy `json:"strategy"`
	SizeBytes       uint64          `json:"size_bytes"`
	Variant         string          `json:"variant"` // its name: "default" for the runtime's own settings
	Flags           string          `json:"flags"`   // the buffers' flags: "read-write" for the default
	ExpectedOutcome result.Outcome  `json:"expected_outcome"`
	ExpectedAllocs  uint64          `json:"expected_allocations_ok"`
	Outcome         result.Outcome  `json:"outcome,omitempty"` // empty: the job did not run within the budget
	AllocationsOK   uint64          `json:"allocations_ok"`
	Healthy         bool            `json:"healthy"`
	Why             string          `json:"why,omitempty"`
}

// CheckHealth holds a run to its expectations, job by job of the same key. A job is healthy when it reached
// at least the expected threshold less the tolerance (not Below), or ran its whole budget (OnlyBounded: a
// threshold beyond it), and is not Broken. A job that was stopped by the time budget before it reached that
// is not healthy: a check must be able to tell, so the expectations should come from a run that fits in the
// budget.
func CheckHealth(e *result.Expectations, r *result.Run, tol float64, budget float64) *Health {
	h := &Health{Healthy: true, Tolerance: tol, Budget: budget, TimeLimit: budget, Jobs: []HealthJob{}}
	if d := result.DriverVersions(r.Devices); d != e.DriverVersion {
		h.Notes = append(h.Notes, fmt.Sprintf("driver %s, recorded with %s", d, e.DriverVersion))
	}
	ran := map[Key]*result.JobResult{}
	for i, k := range Keys(r) {
		ran[k] = &r.Jobs[i] // the last of a key, should a run hold one twice
	}
	for i, k := range ExpectedKeys(e) {
		ej := &e.Jobs[i]
		j := HealthJob{Strategy: ej.Strategy, SizeBytes: ej.SizeBytes, Variant: k.Variant, Flags: k.Flags, ExpectedOutcome: ej.Outcome, ExpectedAllocs: ej.AllocationsOK}
		got := ran[k]
		j.Healthy, j.Why = judgeHealth(ej, got, tol, r.Config.Budget(ej.SizeBytes))
		if got != nil {
			j.Outcome, j.AllocationsOK = got.Outcome, got.AllocationsOK
		}
		h.Healthy = h.Healthy && j.Healthy
		h.Jobs = append(h.Jobs, j)
	}
	return h
}

func judgeHealth(e *result.ExpectedJob, s *result.JobResult, tol float64, budget uint64) (bool, string) {
	switch {
	case s == nil:
		return false, "did not run within the time budget"
	case Broken(s.Outcome):
		return false, fmt.Sprintf("%s after %d buffers (%s)", s.Outcome, s.AllocationsOK, cmp.Or(s.Reason, "-"))
	case s.Outcome == result.OutcomeUnsupported && e.Outcome != result.OutcomeUnsupported:
		return false, "unsupported now: " + s.Reason
	case s.Outcome == result.OutcomeUnsupported:
		return true, ""
	case OnlyBounded(s) && s.AllocationsOK >= budget:
		return true, "" // no failure within the whole budget: the threshold is at least where it was
	case Below(float64(s.AllocationsOK), float64(e.AllocationsOK), tol):
		why := fmt.Sprintf("%d buffers, expected %d (%+.1f%%)", s.AllocationsOK, e.AllocationsOK, 100*(float64(s.AllocationsOK)/math.Max(1, float64(e.AllocationsOK))-1))
		if ff := s.FirstFailure; ff != nil {
			why += fmt.Sprintf(", %s (%d) at %s", ff.Name, ff.Code, ff.Stage)
		} else if s.Outcome == result.OutcomeStopped {
			why += ", stopped: " + s.Reason
		}
		return false, why
	}
	return true, ""
}
