package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
)

// Health is check's answer: whether each expected job still reaches what it reached when it was recorded.
type Health struct {
	Healthy   bool        `json:"healthy"`
	Tolerance float64     `json:"tolerance"`
	Seconds   float64     `json:"seconds"`
	Budget    float64     `json:"budget_seconds"`
	Notes     []string    `json:"notes,omitempty"` // what changed but does not make a node unhealthy (the driver)
	Jobs      []HealthJob `json:"jobs"`
}

// HealthJob is one expected job against what the check's run did.
type HealthJob struct {
	Strategy        result.Strategy `json:"strategy"`
	SizeBytes       uint64          `json:"size_bytes"`
	Variant         string          `json:"variant"`
	ExpectedOutcome result.Outcome  `json:"expected_outcome"`
	ExpectedAllocs  uint64          `json:"expected_allocations_ok"`
	Outcome         result.Outcome  `json:"outcome,omitempty"` // empty: the job did not run within the budget
	AllocationsOK   uint64          `json:"allocations_ok"`
	Healthy         bool            `json:"healthy"`
	Why             string          `json:"why,omitempty"`
}

// CheckHealth holds a run to its expectations. A job is healthy when it reached at least the expected
// threshold less the tolerance, or ran its whole budget (a threshold beyond it), and neither crashed nor hung.
// A job that was stopped by the time budget before it reached that is not healthy: a check must be able to
// tell, so the expectations should come from a run that fits in the budget.
func CheckHealth(e *result.Expectations, r *result.Run, tol float64, budget float64) *Health {
	h := &Health{Healthy: true, Tolerance: tol, Budget: budget, Jobs: []HealthJob{}}
	if d := result.DriverVersions(r.Devices); d != e.DriverVersion {
		h.Notes = append(h.Notes, fmt.Sprintf("driver %s, recorded with %s", d, e.DriverVersion))
	}
	for _, ej := range e.Jobs {
		j := HealthJob{Strategy: ej.Strategy, SizeBytes: ej.SizeBytes, Variant: result.VariantName(ej.Variant), ExpectedOutcome: ej.Outcome,
			ExpectedAllocs: ej.AllocationsOK}
		var got *result.StrategyResult
		for i := range r.Strategies {
			s := &r.Strategies[i]
			if s.Strategy == ej.Strategy && s.SizeBytes == ej.SizeBytes && s.Variant == ej.Variant {
				got = s
			}
		}
		j.Healthy, j.Why = judgeHealth(&ej, got, tol, r.Config.Budget(ej.SizeBytes))
		if got != nil {
			j.Outcome, j.AllocationsOK = got.Outcome, got.AllocationsOK
		}
		h.Healthy = h.Healthy && j.Healthy
		h.Jobs = append(h.Jobs, j)
	}
	return h
}

func judgeHealth(e *result.ExpectedJob, s *result.StrategyResult, tol float64, budget uint64) (bool, string) {
	// A tolerance of 100% or more accepts any count (the floor would go below zero).
	floor := uint64(math.Ceil(float64(e.AllocationsOK) * max(0, 1-tol)))
	switch {
	case s == nil:
		return false, "did not run within the time budget"
	case s.Outcome == result.OutcomeCrashed || s.Outcome == result.OutcomeHung:
		return false, fmt.Sprintf("%s after %d buffers (%s)", s.Outcome, s.AllocationsOK, OrDash(s.Reason))
	case s.Outcome == result.OutcomeUnsupported && e.Outcome != result.OutcomeUnsupported:
		return false, "unsupported now: " + s.Reason
	case s.Outcome == result.OutcomeUnsupported:
		return true, ""
	case s.Outcome == result.OutcomeCompleted && s.AllocationsOK >= budget:
		return true, "" // no failure within the whole budget: the threshold is at least where it was
	case s.AllocationsOK < floor:
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

// writeHealthText is check's one line: the verdict, each job's threshold against the expected one, and the time.
func writeHealthText(w io.Writer, h *Health, _ Options) error {
	var parts []string
	for _, j := range h.Jobs {
		name := fmt.Sprintf("%s %s", j.Strategy, units.Size(j.SizeBytes))
		if j.Variant != result.DefaultVariant {
			name += " " + plain(j.Variant)
		}
		if j.Healthy {
			parts = append(parts, fmt.Sprintf("%s %d (expected %d)", name, j.AllocationsOK, j.ExpectedAllocs))
		} else {
			parts = append(parts, fmt.Sprintf("%s: %s", name, plain(j.Why)))
		}
	}
	verdict := "healthy"
	if !h.Healthy {
		verdict = "BELOW EXPECTATION"
	}
	notes := ""
	for _, n := range h.Notes {
		notes += "; " + plain(n)
	}
	_, err := fmt.Fprintf(w, "clmemprobe check: %s: %s; %.1f s of %.0f s%s\n", verdict, strings.Join(parts, ", "), h.Seconds, h.Budget, notes)
	return err
}
