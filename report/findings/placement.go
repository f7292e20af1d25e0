package findings

import (
	"fmt"
	"math"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// placement is how a job's buffers stood on their devices, as its measurements show. Counts of buffers
// are compared only between jobs placed alike: a layout that placed nothing (a runtime that allocates at
// first use, a loop that never used its buffers) goes as far as its budget, and says nothing of what a
// layout that placed its buffers costs.
type placement int

const (
	// placementUnknown: nothing measured tells (device memory not measured on a device of its own, too few
	// samples, no buffer).
	placementUnknown placement = iota
	// placedAll: a touch wrote every buffer on its device, or the memory the buffers live in grew by at least
	// 5% of a buffer per buffer (device memory, or host memory: on a device whose memory is the host's, or
	// where device memory was not measured and the runtime allocated on the host at create).
	placedAll
	// placedNone: that memory grew by less than 5% of a buffer per buffer, its noise included, and so did
	// the host's: the runtime defers allocation to first use.
	placedNone
)

// placementOf is how job s of run r placed its buffers (see placement).
func placementOf(r *result.Run, s *result.JobResult) placement {
	switch {
	case s.AllocationsOK == 0 || s.Outcome == result.OutcomeWrong || s.Outcome == result.OutcomeUnsupported:
		return placementUnknown
	case r.Config.Touch != result.TouchNone:
		return placedAll
	case !s.JudgedFit().OK || s.Strategy == result.Pool:
		// The pool's sub-buffers take no memory of their own, and the fits leave out the pool buffer its
		// first buffer made: whether the runtime placed that at create (rusticl) or at first use (PoCL)
		// the growth per buffer does not tell.
		return placementUnknown
	}
	if device, ok := deviceCostOf(s); ok {
		switch {
		case result.Placed(device, s.SizeBytes):
			return placedAll
		case hostDidNotGrow(s):
			return placedNone
		}
		return placementUnknown
	}
	if !hostUnified(r) {
		// Device memory unmeasured on a device of its own: host memory growing with the buffers still shows
		// the runtime allocated them at create (a CPU runtime that reports no unified memory, oclgrind, or
		// a driver's host shadow copies); host memory that did not grow says nothing of the device.
		if hostGrew(s) {
			return placedAll
		}
		return placementUnknown
	}
	switch {
	case hostGrew(s):
		return placedAll
	case hostDidNotGrow(s):
		return placedNone
	}
	return placementUnknown
}

// placedAlike says whether the counts of jobs placed as a and b may be held against each other: not where
// one is known to have placed its buffers and the other known to have placed none, and not a job known to
// have placed none against one not known to have (a layout that placed nothing went as far as its budget,
// whatever the other did).
func placedAlike(a, b placement) bool {
	if a == placedNone || b == placedNone {
		return a == b
	}
	return true
}

// deviceCostOf sums job s's fitted device memory per buffer over its devices; ok is false where device
// memory was not measured.
func deviceCostOf(s *result.JobResult) (float64, bool) {
	if len(s.DeviceBytesPerBuffer) == 0 {
		return 0, false
	}
	var sum float64
	for _, b := range s.DeviceBytesPerBuffer {
		sum += b
	}
	return sum, true
}

// hostDidNotGrow says each host figure per buffer (RSS, system, committed), moved by its own noise, stays
// under 5% of a buffer: a conclusion only where a machine-wide reading did not scatter more than that.
func hostDidNotGrow(s *result.JobResult) bool {
	noise, cheap := s.Noise(), cheapFraction*float64(s.SizeBytes)
	return math.Abs(s.HostBytesPerBuffer)+noise.Host < cheap &&
		(s.SystemBytesPerBuffer == nil || *s.SystemBytesPerBuffer+noise.System < cheap) &&
		(s.CommittedBytesPerBuffer == nil || *s.CommittedBytesPerBuffer+noise.Committed < cheap)
}

// growthFraction is the most any memory job s's buffers could live in grew per buffer, each figure moved by
// its noise, as a fraction of a buffer: RSS either way, system and committed memory, and devCost on the
// devices (0 where not measured). Under cheapFraction the buffers were never placed.
func growthFraction(s *result.JobResult, devCost float64) float64 {
	noise := s.Noise()
	most := max(math.Abs(s.HostBytesPerBuffer)+noise.Host, devCost)
	if s.SystemBytesPerBuffer != nil {
		most = max(most, *s.SystemBytesPerBuffer+noise.System)
	}
	if s.CommittedBytesPerBuffer != nil {
		most = max(most, *s.CommittedBytesPerBuffer+noise.Committed)
	}
	return most / float64(max(s.SizeBytes, 1))
}

// hostGrew says a host figure per buffer (RSS, system or committed), less its noise, reached 5% of a buffer.
func hostGrew(s *result.JobResult) bool {
	noise, cheap := s.Noise(), cheapFraction*float64(s.SizeBytes)
	return s.HostBytesPerBuffer-noise.Host >= cheap ||
		(s.SystemBytesPerBuffer != nil && *s.SystemBytesPerBuffer-noise.System >= cheap) ||
		(s.CommittedBytesPerBuffer != nil && *s.CommittedBytesPerBuffer-noise.Committed >= cheap)
}

// hostUnified says every device of the run has the host's memory for its own.
func hostUnified(r *result.Run) bool {
	for _, d := range r.Devices {
		if !d.HostUnified {
			return false
		}
	}
	return len(r.Devices) > 0
}

// placedApart says why the counts of jobs placed otherwise are not held against each other: which placed
// their buffers and which placed none, with how far each went. vs are the jobs, of one size.
func placedApart(vs []*view) result.Finding {
	var placed, none, unknown []result.Strategy
	var placedN, noneN []uint64
	ev := map[string]float64{}
	for _, v := range vs {
		n := v.s.AllocationsOK
		ev[strings.ReplaceAll(string(v.s.Strategy), "-", "_")+"_allocations_ok"] = float64(n)
		putPlacement(ev, v.s.Strategy, v.placement)
		switch v.placement {
		case placedNone:
			none, noneN = append(none, v.s.Strategy), appendOnce(noneN, n)
		case placedAll:
			placed, placedN = append(placed, v.s.Strategy), appendOnce(placedN, n)
		default:
			unknown, placedN = append(unknown, v.s.Strategy), appendOnce(placedN, n)
		}
	}
	count := func(n uint64) string { return fmt.Sprint(n) }
	sentence := fmt.Sprintf("%s placed no buffer (the memory the buffers live in did not grow with them)%s, so how far they went is not compared (%s buffers against %s): a layout that places nothing goes as far as its budget; run with --touch fill to compare layouts that all place their buffers",
		names(none), otherPlacements(placed, unknown), listOf(noneN, count), listOf(placedN, count))
	return result.Finding{Kind: result.FindingComparison, Strategies: append(append(none, placed...), unknown...), Sentence: sentence, Evidence: ev}
}

// otherPlacements is how the jobs held apart from those that placed nothing placed theirs: " where X placed
// its buffers", ", and whether Y placed theirs was not measured", or both.
func otherPlacements(placed, unknown []result.Strategy) string {
	theirs := func(ss []result.Strategy) string {
		if len(ss) == 1 {
			return "its buffers"
		}
		return "their buffers"
	}
	s := ""
	if len(placed) > 0 {
		s = fmt.Sprintf(" where %s placed %s", names(placed), theirs(placed))
	}
	if len(unknown) > 0 {
		s += fmt.Sprintf(", and whether %s placed %s was not measured", names(unknown), theirs(unknown))
	}
	return s
}
