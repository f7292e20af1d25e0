package findings

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
)

// JudgedRemedy is a remedy search with what it means: its changes ranked, each with its gain against the
// baseline and whether it lifts the failure, and the headline. JudgeRemedy is the one function that makes
// one; every renderer of a remedy search takes one.
type JudgedRemedy struct {
	remedy  *result.Remedy // a copy of the search with its changes ranked and the verdict stored
	verdict []string
}

// JudgeRemedy ranks a remedy search's changes (rankRemedies) and states its headline, in a copy of its own:
// it leaves r as it is.
func JudgeRemedy(r *result.Remedy) JudgedRemedy {
	if r == nil {
		r = &result.Remedy{}
	}
	ranked := *r
	ranked.Remedies = rankRemedies(r.Baseline, r.Remedies)
	verdict := []string{remedyHeadline(&ranked)}
	return JudgedRemedy{remedy: result.WithJudgement(&ranked, result.Judgement{Verdict: verdict}), verdict: verdict}
}

// Remedy is the judged search, its changes in their ranking.
func (j JudgedRemedy) Remedy() *result.Remedy { return j.remedy }

// Verdict is the search's headline, one sentence.
func (j JudgedRemedy) Verdict() []string { return j.verdict }

// MarshalJSON writes the judged search as remedy --format json does.
func (j JudgedRemedy) MarshalJSON() ([]byte, error) { return json.Marshal(j.remedy) }

// rankRemedies judges the changes of a remedy search: each change's gain against the baseline and whether
// it lifts the failure, the changes ordered by that (lifting first, then the largest gain, then the
// smallest change). A job Ctrl-C interrupted has no gain and comes last: how far it went says nothing of
// its change. It returns ranked copies of the jobs, in the order they ran.
func rankRemedies(base result.RemedyJob, jobs []result.RemedyJob) []result.RemedyJob {
	failed := base.Outcome != result.OutcomeCompleted
	ranked := slices.Clone(jobs)
	for i := range ranked {
		j := &ranked[i]
		j.Order = i
		j.Gain, j.Lifts = 0, false
		if !j.Interrupted() && !base.Interrupted() {
			j.Gain = gainOf(*j, base)
			j.Lifts = failed && j.Outcome == result.OutcomeCompleted
		}
	}
	sort.SliceStable(ranked, func(a, b int) bool {
		x, y := ranked[a], ranked[b]
		if x.Interrupted() != y.Interrupted() {
			return y.Interrupted()
		}
		if x.Lifts != y.Lifts {
			return x.Lifts
		}
		if x.Gain != y.Gain {
			return x.Gain > y.Gain
		}
		return x.Order < y.Order
	})
	return ranked
}

// remedyTolerance is how far a change must go past the baseline to have gone further: the comparisons'
// tolerance, and where the host guard stopped both before their address-space limit, at least the scatter
// of what two workers map besides their buffers (a malloc arena, result.AddressSlack, more or less on each
// side) over the baseline's bytes. Under a ulimit -v that left some 420 MiB on PoCL, one worker's extra
// arena made changes that change nothing of the address space (RLIMIT_NOFILE=hard, alloc-host-ptr) and one
// that changes little (buffers 4x as large) go "1.15x further", and two workers of the same job differ so.
func remedyTolerance(j, base result.RemedyJob) float64 {
	tol := comparison.Tolerance
	if result.StoppedAtAddressSpace(j.Outcome, j.StopCause, j.Limit) && result.StoppedAtAddressSpace(base.Outcome, base.StopCause, base.Limit) && base.BytesOK > 0 {
		tol = max(tol, 2*float64(result.AddressSlack)/float64(base.BytesOK))
	}
	return tol
}

// gainOf is a job's bytes placed over the baseline's; against a baseline that placed nothing, over one of
// its buffers.
func gainOf(j, base result.RemedyJob) float64 {
	if base.BytesOK > 0 {
		return float64(j.BytesOK) / float64(base.BytesOK)
	}
	if base.SizeBytes == 0 {
		return 0
	}
	return float64(j.BytesOK) / float64(base.SizeBytes)
}

// remedyHeadline is the headline of a ranked remedy search: what lifts the failure, or what comes nearest.
func remedyHeadline(r *result.Remedy) string {
	base := r.Baseline
	if base.Interrupted() {
		return fmt.Sprintf("Interrupted (Ctrl-C) during the baseline (%s), after %d buffers: no change was measured.", jobWords(base), base.AllocationsOK)
	}
	if !r.Interrupted {
		return remedyRanking(r)
	}
	ran := 0
	for _, j := range r.Remedies {
		if !j.Interrupted() {
			ran++
		}
	}
	if ran == 0 {
		return fmt.Sprintf("Interrupted (Ctrl-C) after the baseline (%s) %s after %d buffers (%s): none of the %d changes ran to its end.",
			jobWords(base), endWords(base), base.AllocationsOK, units.Bytes(base.BytesOK), r.ChangesPlanned)
	}
	return fmt.Sprintf("Interrupted (Ctrl-C): %d of %d changes ran to their end, and only those are ranked. %s", ran, r.ChangesPlanned, remedyRanking(r))
}

// remedyRanking is the headline of the jobs that ran to their end: what lifts the failure, or what comes
// nearest.
func remedyRanking(r *result.Remedy) string {
	base := r.Baseline
	if base.Outcome == result.OutcomeCompleted {
		return fmt.Sprintf("Nothing to lift: the baseline (%s) reached its budget of %d buffers (%s) without a failure; raise --max-allocs to find its limit first.",
			jobWords(base), base.AllocationsOK, units.Bytes(base.BytesOK))
	}
	s := fmt.Sprintf("The baseline (%s) %s after %d buffers (%s)", jobWords(base), endWords(base), base.AllocationsOK, units.Bytes(base.BytesOK))
	var lifts, helps, none, unsupported []result.RemedyJob
	for _, j := range r.Remedies {
		switch {
		case j.Interrupted():
		case j.Outcome == result.OutcomeUnsupported:
			unsupported = append(unsupported, j)
		case j.Lifts:
			lifts = append(lifts, j)
		case comparison.Above(j.Gain, 1, remedyTolerance(j, base)): // within it, the runtime's own scatter
			helps = append(helps, j)
		default:
			none = append(none, j)
		}
	}
	switch {
	case len(lifts) > 0:
		first := lifts[0]
		for _, j := range lifts[1:] { // the smallest change among those that lift it
			if j.Order < first.Order {
				first = j
			}
		}
		s += fmt.Sprintf("; the smallest change that lifts the failure is %s: it reached its budget of %d buffers (%s, %.2fx the baseline's bytes)",
			first.Change, first.AllocationsOK, units.Bytes(first.BytesOK), first.Gain)
		if others := changeNames(lifts, first.Change); others != "" {
			s += "; " + others + " lift it too"
		}
		if len(helps) > 0 {
			s += "; " + changeNames(helps, "") + " go further without lifting it"
		}
	case len(helps) > 0:
		s += fmt.Sprintf("; no change lifts the failure: %s goes furthest, %d buffers (%.2fx the baseline's bytes) before it %s", helps[0].Change,
			helps[0].AllocationsOK, helps[0].Gain, endWords(helps[0]))
	default:
		s += "; no change lifts it or goes 10% further"
	}
	if len(none) > 0 {
		s += "; did not help: " + changeNames(none, "")
	}
	for _, j := range unsupported {
		s += fmt.Sprintf("; %s could not run here: %s", j.Change, j.Reason)
	}
	return s + "."
}

func changeNames(js []result.RemedyJob, except string) string {
	var names []string
	for _, j := range js {
		if j.Change != except {
			names = append(names, fmt.Sprintf("%s (%.2fx)", j.Change, j.Gain))
		}
	}
	return strings.Join(names, ", ")
}

// jobWords names a job: its strategy, size, flags and settings.
func jobWords(j result.RemedyJob) string {
	s := fmt.Sprintf("%s, %s buffers", j.Strategy, units.Size(j.SizeBytes))
	if j.Flags != "" {
		s += ", flags " + j.Flags
	}
	if len(j.VariantSettings) > 0 {
		s += ", " + strings.Join(result.Assignments(j.VariantSettings), " ")
	}
	return s
}

// endWords says how a job ended: "failed with -6 (CL_OUT_OF_HOST_MEMORY)", "crashed", "interrupted".
func endWords(j result.RemedyJob) string {
	if j.Interrupted() {
		return "interrupted"
	}
	if j.Outcome == result.OutcomeCrashed && j.Limit == result.LimitCgroupMemory {
		return "was ended by its memory cgroup's OOM killer"
	}
	if j.Outcome == result.OutcomeStopped && j.StopCause == result.StopHostGuard {
		switch j.Limit {
		case result.LimitAddressSpace:
			return "was stopped by the host guard short of its address-space limit (ulimit -v)"
		case result.LimitCgroupMemory:
			return "was stopped by the host guard short of its memory cgroup's limit"
		}
	}
	if f := j.FirstFailure; f != nil && j.Outcome == result.OutcomeFailed {
		return fmt.Sprintf("failed with %d (%s)", f.Code, f.Name)
	}
	return string(j.Outcome)
}
