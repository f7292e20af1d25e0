package comparison

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// A node is held to what it reached when it was recorded, job by job of the same key.
func TestCheckHealth(t *testing.T) {
	rec := fixture.Run(t)
	exp := result.ExpectationsFrom(rec)
	for _, c := range []struct {
		name    string
		now     func(s *result.JobResult)
		healthy bool
		// below says what an unhealthy job's figures show: how it fell short of what was expected.
		below func(j HealthJob) bool
	}{
		{name: "the same", now: func(*result.JobResult) {}, healthy: true},
		{name: "within the tolerance", now: func(s *result.JobResult) { s.AllocationsOK = s.AllocationsOK * 95 / 100 }, healthy: true},
		{name: "half", now: func(s *result.JobResult) { s.AllocationsOK /= 2 }, below: func(j HealthJob) bool {
			return j.Outcome == j.ExpectedOutcome && j.AllocationsOK == j.ExpectedAllocs/2
		}},
		{name: "now crashes", now: func(s *result.JobResult) { s.Outcome, s.Reason = result.OutcomeCrashed, "" }, below: func(j HealthJob) bool {
			return j.Outcome == result.OutcomeCrashed && j.ExpectedOutcome != result.OutcomeCrashed
		}},
		{name: "the default variant named", now: func(s *result.JobResult) { s.Variant = result.DefaultVariant }, healthy: true},
		{name: "another variant", now: func(s *result.JobResult) { s.Variant = "pool-off" }, below: func(j HealthJob) bool {
			return j.Outcome == "" && j.AllocationsOK == 0 // did not run
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := CheckHealth(exp, cloneWith(rec, c.now), 0.1, 50)
			if h.Healthy != c.healthy {
				t.Fatalf("healthy %v, want %v: %+v", h.Healthy, c.healthy, h.Jobs)
			}
			for _, j := range h.Jobs {
				if j.Variant != result.DefaultVariant {
					t.Errorf("%s: variant %q, want %q", j.Strategy, j.Variant, result.DefaultVariant)
				}
				if !j.Healthy && (j.Why == "" || !c.below(j)) {
					t.Errorf("%s: %+v does not show how it fell short (%s)", j.Strategy, j, c.name)
				}
			}
		})
	}
}
