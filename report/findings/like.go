package findings

import (
	"fmt"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// likeFinding holds the probe's strategies against the traced program a run --like took its jobs from: at
// the program's most created size and flags, how far each layout got against where the program failed, and
// whether another layout would have let it go on. ok is false for runs without --like.
func likeFinding(r *result.Run) (result.Finding, bool) {
	l := r.Config.Like
	if l == nil || len(l.Sizes) == 0 {
		return result.Finding{}, false
	}
	flags := ""
	if len(l.Flags) > 0 && l.Flags[0] != result.FlagsName("") {
		flags = l.Flags[0]
	}
	jobs := map[result.Strategy]*result.JobResult{}
	var reached []string
	for i := range r.Jobs {
		s := &r.Jobs[i]
		if s.SizeBytes != l.Sizes[0] || s.Flags != flags || s.Variant != "" {
			continue
		}
		jobs[s.Strategy] = s
		reached = append(reached, fmt.Sprintf("%s %s after %s (%s buffers)", s.Strategy, s.Outcome, units.Bytes(s.BytesOK), render.Made(s)))
	}
	program := "the traced program " + l.Program
	what := fmt.Sprintf("%s made %d allocations without a failure", program, l.Allocations)
	if l.Ended != "" {
		// Not "without a failure" alone: the program did not end by itself, and that is what the user traced.
		what = fmt.Sprintf("%s made %d allocations without a failed call, and %s", program, l.Allocations, l.Ended)
		if unreproduced(r) {
			what += "; no layout here ended that way"
			if r.Config.Touch == result.TouchNone {
				what += " (run with --touch fill, in the limits the program had, to use the buffers as it did)"
			}
		}
	}
	if l.Failed {
		what = fmt.Sprintf("%s failed at its allocation #%d with %s in a context of %d device(s) holding %s", program, l.FailureIndex, l.FailureCode,
			l.ContextDevices, units.Bytes(l.LiveBytes))
	}
	sentence := fmt.Sprintf("%s; run like it, with its most created buffers (%s, %s): %s", capitalize(what), units.Size(l.Sizes[0]), result.FlagsName(flags),
		strings.Join(reached, ", "))
	ev := map[string]float64{"program_live_bytes": float64(l.LiveBytes)}
	shared, perDevice := jobs[result.Shared], jobs[result.PerDevice]
	switch {
	case !l.Failed || shared == nil || shared.Outcome != result.OutcomeFailed:
	case refusedFirst(jobs):
		// The first buffer refused for its size, in every layout: no context changes that.
		sentence += "; every layout was refused its first buffer with -61 (CL_INVALID_BUFFER_SIZE): a buffer of this size is more than the runtime gives one allocation, whatever the context"
	case perDevice != nil && l.ContextDevices > 1 && perDevice.BytesOK > shared.BytesOK && placedAlike(placementOf(r, perDevice), placementOf(r, shared)) &&
		(perDevice.Outcome == result.OutcomeCompleted || float64(perDevice.BytesOK) >= contextRatio*float64(shared.BytesOK)):
		ev["shared_bytes"], ev["per_device_bytes"] = float64(shared.BytesOK), float64(perDevice.BytesOK)
		sentence += fmt.Sprintf("; one context per device reached %s where one shared context reached %s: the program's context over %d devices is its limit, and one context per device would let it go on past where it failed",
			units.Bytes(perDevice.BytesOK), units.Bytes(shared.BytesOK), l.ContextDevices)
	case l.LiveBytes > 0 && !comparison.Moved(float64(shared.BytesOK), float64(l.LiveBytes), comparison.Tolerance):
		ev["shared_bytes"] = float64(shared.BytesOK)
		sentence += "; the probe's shared context failed where the program did (within " + comparison.TolerancePercent + "): the runtime's limit, which the program meets as the probe's loop does"
	}
	return result.Finding{Kind: result.FindingLike, Sizes: []uint64{l.Sizes[0]}, Flags: flags, Sentence: sentence + ".", Evidence: ev}, true
}

// unreproduced says no job of the run was ended as a killed program is: every one completed or was stopped.
func unreproduced(r *result.Run) bool {
	for i := range r.Jobs {
		if o := r.Jobs[i].Outcome; o != result.OutcomeCompleted && o != result.OutcomeStopped {
			return false
		}
	}
	return true
}

// refusedFirst says every layout of the run like the program failed its first buffer with -61.
func refusedFirst(jobs map[result.Strategy]*result.JobResult) bool {
	for _, s := range jobs {
		if s.Outcome != result.OutcomeFailed || s.AllocationsOK != 0 || s.FirstFailure == nil || s.FirstFailure.Code != -61 {
			return false
		}
	}
	return len(jobs) > 0
}
