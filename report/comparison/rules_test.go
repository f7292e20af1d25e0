package comparison

import (
	"fmt"
	"math"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// One rule for every comparison: a threshold exactly the tolerance away has not moved, one buffer further
// has, and a tolerance of 100% or more accepts any count.
func TestThresholdRules(t *testing.T) {
	for _, c := range []struct {
		name         string
		got, ref     float64
		tol          float64
		below, above bool
	}{
		{name: "equal", got: 100, ref: 100, tol: 0.1},
		{name: "exactly 10% below", got: 90, ref: 100, tol: 0.1},
		{name: "exactly 5% below", got: 95, ref: 100, tol: 0.05},
		{name: "one buffer more below", got: 89, ref: 100, tol: 0.1, below: true},
		{name: "exactly 10% above", got: 110, ref: 100, tol: 0.1},
		{name: "one buffer more above", got: 111, ref: 100, tol: 0.1, above: true},
		{name: "a median between two counts", got: 2, ref: 2.5, tol: 0.1, below: true},
		{name: "nothing at all, a tolerance of 150%", got: 0, ref: 1000, tol: 1.5},
		{name: "none to compare with", got: 5, ref: 0, tol: 0.1, above: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Below(c.got, c.ref, c.tol); got != c.below {
				t.Errorf("Below(%v, %v, %v) = %v", c.got, c.ref, c.tol, got)
			}
			if got := Above(c.got, c.ref, c.tol); got != c.above {
				t.Errorf("Above(%v, %v, %v) = %v", c.got, c.ref, c.tol, got)
			}
			// Moved is either of them against a reference above 0.
			if got := Moved(c.got, c.ref, c.tol); c.ref > 0 && got != (c.below || c.above) {
				t.Errorf("Moved(%v, %v, %v) = %v, want Below or Above", c.got, c.ref, c.tol, got)
			}
		})
	}
	if c := Change(5, 0); !math.IsInf(c, 1) || Change(0, 0) != 0 || Change(50, 100) != -0.5 {
		t.Errorf("Change: %v, %v, %v", c, Change(0, 0), Change(50, 100))
	}
}

// Moved measures the tolerance against the reference's size, so a negative cost (a buffer that gave memory
// back) moves by the same rule as a positive one; and the flags' default says the tolerance.
func TestMovedEitherSign(t *testing.T) {
	for _, c := range []struct {
		got, ref float64
		want     bool
	}{{-95, -100, false}, {-89, -100, true}, {-111, -100, true}, {0, 0, false}, {1, 0, true}} {
		if got := Moved(c.got, c.ref, Tolerance); got != c.want {
			t.Errorf("Moved(%v, %v, %v) = %v, want %v", c.got, c.ref, Tolerance, got, c.want)
		}
	}
	if want := fmt.Sprintf("%g%%", 100*Tolerance); TolerancePercent != want {
		t.Errorf("TolerancePercent = %q, want %q", TolerancePercent, want)
	}
}

// A cost moved when it is beyond the tolerance and beyond the noise (1% of the buffer), either way for
// CostMoved, upwards for CostGrew.
func TestCostRules(t *testing.T) {
	const size = 1 << 20
	noise := result.NoiseFraction * size
	for _, c := range []struct {
		name        string
		got, ref    float64
		grew, moved bool
	}{
		{name: "the same", got: 4096, ref: 4096},
		{name: "doubled, within the noise", got: 2 * noise / 3, ref: noise / 3},
		{name: "doubled, past the noise", got: 4 * noise, ref: 2 * noise, grew: true, moved: true},
		{name: "halved, past the noise", got: 2 * noise, ref: 4 * noise, moved: true},
		{name: "past the noise, within the tolerance", got: 100*noise + 2*noise, ref: 100 * noise},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := CostGrew(c.got, c.ref, 0.1, size); got != c.grew {
				t.Errorf("CostGrew(%v, %v) = %v", c.got, c.ref, got)
			}
			if got := CostMoved(c.got, c.ref, 0.1, size); got != c.moved {
				t.Errorf("CostMoved(%v, %v) = %v", c.got, c.ref, got)
			}
		})
	}
}

func TestOutcomeRules(t *testing.T) {
	for _, c := range []struct {
		name          string
		got, ref      result.Outcome
		worse, better bool
	}{
		{name: "failed to crashed", got: result.OutcomeCrashed, ref: result.OutcomeFailed, worse: true},
		{name: "completed to hung", got: result.OutcomeHung, ref: result.OutcomeCompleted, worse: true},
		{name: "completed to failed: a threshold, not a fault", got: result.OutcomeFailed, ref: result.OutcomeCompleted},
		{name: "crashed to hung", got: result.OutcomeHung, ref: result.OutcomeCrashed},
		{name: "crashed to failed", got: result.OutcomeFailed, ref: result.OutcomeCrashed, better: true},
		{name: "failed to completed", got: result.OutcomeCompleted, ref: result.OutcomeFailed, better: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if Worse(c.got, c.ref) != c.worse || Better(c.got, c.ref) != c.better {
				t.Errorf("Worse %v Better %v, want %v %v", Worse(c.got, c.ref), Better(c.got, c.ref), c.worse, c.better)
			}
		})
	}
}
