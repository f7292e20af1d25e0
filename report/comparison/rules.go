package comparison

import (
	"math"
	"strconv"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The rules every comparison of two jobs judges by: compare, merge and check, and the findings that set a
// variant, a flag set or the probe's loop (run --like) beside a job. A tolerance is a fraction (0.1 is 10%)
// of the reference figure: the baseline's (compare), the group's median (merge), the recorded one (check),
// the default variant's or the read-write job's (findings). What counts as noise in a cost is
// result.NoiseFraction of the buffer size. Which jobs are compared at all is the Key's to say.

// Tolerance is how far a count or a cost may move from its reference, as a fraction of it, before a
// comparison says it moved: about the run-to-run scatter of a runtime's limits. It is the default of
// compare, merge and check's --tolerance, and the findings of variants, flags, costs, run --like and
// remedy use it as it is.
const Tolerance = 0.10

// TolerancePercent is Tolerance as the --tolerance flags write their default ("10%").
var TolerancePercent = strconv.FormatFloat(100*Tolerance, 'f', -1, 64) + "%"

// Moved reports whether got differs from ref, either way, by more than the tolerance of ref's size:
// |got − ref| > tol × |ref|. For a positive ref it is Below or Above.
func Moved(got, ref, tol float64) bool { return math.Abs(got-ref) > tol*math.Abs(ref) }

// Below reports whether a threshold got fell short of its reference ref by more than the tolerance:
// ref − got > tol × ref. A tolerance of 100% or more accepts any count.
func Below(got, ref, tol float64) bool { return ref-got > tol*ref }

// Above reports whether a threshold got went past its reference ref by more than the tolerance.
func Above(got, ref, tol float64) bool { return got-ref > tol*ref }

// Change is got against its reference as a fraction, got/ref − 1: +Inf where only got is above 0, 0 where
// both are 0.
func Change(got, ref float64) float64 {
	switch {
	case ref > 0:
		return got/ref - 1
	case got > 0:
		return math.Inf(1)
	}
	return 0
}

// CostGrew reports whether a cost per buffer grew from ref to got by more than the tolerance of ref and by
// more than the noise of a buffer of size bytes.
func CostGrew(got, ref, tol float64, size uint64) bool { return costBeyond(got-ref, ref, tol, size) }

// CostMoved reports whether a cost per buffer differs from ref, either way, by more than the tolerance of
// ref and by more than the noise of a buffer of size bytes.
func CostMoved(got, ref, tol float64, size uint64) bool {
	return costBeyond(math.Abs(got-ref), ref, tol, size)
}

func costBeyond(d, ref, tol float64, size uint64) bool {
	return !result.IsNoise(d, size) && d > 0 && d > tol*math.Abs(ref)
}

// OnlyBounded reports whether a job's count is only a lower bound of its threshold: it completed its
// budget without a failure, so the threshold lies somewhere past the count. Against a reference above it,
// it says nothing either way (compare's inconclusive); at or past its own whole budget, it meets any
// expectation (check).
func OnlyBounded(s *result.JobResult) bool { return s.Outcome == result.OutcomeCompleted }

// Broken reports whether an outcome is a fault of the runtime, not a threshold: the worker crashed or hung.
func Broken(o result.Outcome) bool {
	return o == result.OutcomeCrashed || o == result.OutcomeHung || o == result.OutcomeWrong
}

// outcomeRank orders outcomes from healthy to broken: completed, then the ends of a threshold (failed,
// stopped, unsupported), then the broken ones.
func outcomeRank(o result.Outcome) int {
	switch {
	case o == result.OutcomeCompleted:
		return 0
	case Broken(o):
		return 2
	}
	return 1
}

// Worse reports whether outcome got is a fault that ref was not: a job that completed or failed now
// crashes or hangs.
func Worse(got, ref result.Outcome) bool { return Broken(got) && outcomeRank(got) > outcomeRank(ref) }

// Better reports whether outcome got is healthier than ref: it failed or crashed and now completes, or it
// crashed and now fails.
func Better(got, ref result.Outcome) bool { return outcomeRank(got) < outcomeRank(ref) }
