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
	claim   RemedyClaim
}

// JudgeRemedy ranks a remedy search's changes (rankRemedies) and states its headline, in a copy of its own:
// it leaves r as it is.
func JudgeRemedy(r *result.Remedy) JudgedRemedy {
	if r == nil {
		r = &result.Remedy{}
	}
	ranked := *r
	ranked.Remedies = rankRemedies(r.Baseline, r.Remedies)
	claim := remedyClaimOf(&ranked)
	verdict := []string{remedyHeadline(&ranked, claim)}
	return JudgedRemedy{remedy: result.WithJudgement(&ranked, result.Judgement{Verdict: verdict}), verdict: verdict, claim: claim}
}

// Remedy is the judged search, its changes in their ranking.
func (j JudgedRemedy) Remedy() *result.Remedy { return j.remedy }

// Claim is what the headline claims, before its words.
func (j JudgedRemedy) Claim() RemedyClaim { return j.claim }

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

// RemedyClaimKind is what a remedy search's headline claims.
type RemedyClaimKind string

// The claims of a remedy search.
const (
	RemedyBaselineInterrupted RemedyClaimKind = "baseline-interrupted" // Ctrl-C during the baseline: no change measured
	RemedyNoChangeEnded       RemedyClaimKind = "no-change-ended"      // Ctrl-C after the baseline, before any change ended
	RemedyNothingToLift       RemedyClaimKind = "nothing-to-lift"      // the baseline reached its budget without a failure
	RemedyLifts               RemedyClaimKind = "lifts"                // a change reached its budget where the baseline failed
	RemedyGoesFurther         RemedyClaimKind = "goes-further"         // none lifts it; one goes further than the baseline
	RemedyNoneHelps           RemedyClaimKind = "none-helps"           // none lifts it or goes further
)

// RemedyClaim is what a ranked remedy search claims, before its words: its kind, and the changes (by name,
// in their ranking) by what they did. A change Ctrl-C cut short is in none of the lists.
type RemedyClaim struct {
	Kind RemedyClaimKind
	// Interrupted says Ctrl-C ended the search: Ran of its planned changes ran to their end.
	Interrupted bool
	Ran         int
	// Smallest is, for RemedyLifts, the smallest change that lifts the failure; Lift every one that does.
	Smallest    string
	Lift        []string
	Further     []string // go further than the baseline (past its scatter) without lifting the failure
	NoHelp      []string // go no further
	Unsupported []string // could not run here
	// BaselineEnd is how the baseline ended; Ends how each change that ran did, by name.
	BaselineEnd RemedyEnd
	Ends        map[string]RemedyEnd
}

// remedyClaimOf is what a ranked remedy search claims.
func remedyClaimOf(r *result.Remedy) RemedyClaim {
	base := r.Baseline
	c := RemedyClaim{Interrupted: r.Interrupted, BaselineEnd: remedyEnd(base), Ends: map[string]RemedyEnd{}}
	for _, j := range r.Remedies {
		c.Ends[j.Change] = remedyEnd(j)
	}
	if base.Interrupted() {
		c.Kind = RemedyBaselineInterrupted
		return c
	}
	smallest := -1
	for _, j := range r.Remedies {
		switch {
		case j.Interrupted():
			continue
		case j.Outcome == result.OutcomeUnsupported:
			c.Unsupported = append(c.Unsupported, j.Change)
		case j.Lifts:
			c.Lift = append(c.Lift, j.Change)
			if smallest < 0 || j.Order < smallest { // the smallest change among those that lift it
				smallest, c.Smallest = j.Order, j.Change
			}
		case comparison.Above(j.Gain, 1, remedyTolerance(j, base)): // within it, the runtime's own scatter
			c.Further = append(c.Further, j.Change)
		default:
			c.NoHelp = append(c.NoHelp, j.Change)
		}
		c.Ran++
	}
	switch {
	case r.Interrupted && c.Ran == 0:
		c.Kind = RemedyNoChangeEnded
	case base.Outcome == result.OutcomeCompleted:
		c.Kind = RemedyNothingToLift
	case len(c.Lift) > 0:
		c.Kind = RemedyLifts
	case len(c.Further) > 0:
		c.Kind = RemedyGoesFurther
	default:
		c.Kind = RemedyNoneHelps
	}
	return c
}

// remedyHeadline is the claim of a ranked remedy search in words: what lifts the failure, or what comes
// nearest.
func remedyHeadline(r *result.Remedy, c RemedyClaim) string {
	base := r.Baseline
	switch {
	case c.Kind == RemedyBaselineInterrupted:
		return fmt.Sprintf("Interrupted (Ctrl-C) during the baseline (%s), after %d buffers: no change was measured.", jobWords(base), base.AllocationsOK)
	case c.Kind == RemedyNoChangeEnded:
		return fmt.Sprintf("Interrupted (Ctrl-C) after the baseline (%s) %s after %d buffers (%s): none of the %d changes ran to its end.",
			jobWords(base), endWords(base), base.AllocationsOK, units.Bytes(base.BytesOK), r.ChangesPlanned)
	case c.Interrupted:
		return fmt.Sprintf("Interrupted (Ctrl-C): %d of %d changes ran to their end, and only those are ranked. %s", c.Ran, r.ChangesPlanned, remedyRanking(r, c))
	}
	return remedyRanking(r, c)
}

// remedyRanking is the headline of the jobs that ran to their end: what lifts the failure, or what comes
// nearest.
func remedyRanking(r *result.Remedy, c RemedyClaim) string {
	base := r.Baseline
	if c.Kind == RemedyNothingToLift {
		return fmt.Sprintf("Nothing to lift: the baseline (%s) reached its budget of %d buffers (%s) without a failure; raise --max-allocs to find its limit first.",
			jobWords(base), base.AllocationsOK, units.Bytes(base.BytesOK))
	}
	s := fmt.Sprintf("The baseline (%s) %s after %d buffers (%s)", jobWords(base), endWords(base), base.AllocationsOK, units.Bytes(base.BytesOK))
	switch c.Kind {
	case RemedyLifts:
		first := remedyJobNamed(r, c.Smallest)
		s += fmt.Sprintf("; the smallest change that lifts the failure is %s: it reached its budget of %d buffers (%s, %.2fx the baseline's bytes)",
			first.Change, first.AllocationsOK, units.Bytes(first.BytesOK), first.Gain)
		if others := changeNames(r, c.Lift, first.Change); others != "" {
			s += "; " + others + " lift it too"
		}
		if len(c.Further) > 0 {
			s += "; " + changeNames(r, c.Further, "") + " go further without lifting it"
		}
	case RemedyGoesFurther:
		j := remedyJobNamed(r, c.Further[0])
		s += fmt.Sprintf("; no change lifts the failure: %s goes furthest, %d buffers (%.2fx the baseline's bytes) before it %s", j.Change,
			j.AllocationsOK, j.Gain, endWords(j))
	default:
		s += "; no change lifts it or goes 10% further"
	}
	if len(c.NoHelp) > 0 {
		s += "; did not help: " + changeNames(r, c.NoHelp, "")
	}
	for _, name := range c.Unsupported {
		s += fmt.Sprintf("; %s could not run here: %s", name, remedyJobNamed(r, name).Reason)
	}
	return s + "."
}

// remedyJobNamed is the change of that name among the search's jobs.
func remedyJobNamed(r *result.Remedy, name string) result.RemedyJob {
	for _, j := range r.Remedies {
		if j.Change == name {
			return j
		}
	}
	return result.RemedyJob{Change: name}
}

// changeNames lists the named changes with their gains, but for except.
func changeNames(r *result.Remedy, names []string, except string) string {
	var out []string
	for _, name := range names {
		if name != except {
			out = append(out, fmt.Sprintf("%s (%.2fx)", name, remedyJobNamed(r, name).Gain))
		}
	}
	return strings.Join(out, ", ")
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

// RemedyEnd is how a job of a remedy search ended, as its headline tells it: one of its outcomes, or one of
// the ends below.
type RemedyEnd string

// The ends a remedy headline tells apart from a bare outcome.
const (
	RemedyEndInterrupted RemedyEnd = "interrupted" // Ctrl-C
	RemedyEndCgroupOOM   RemedyEnd = "cgroup-oom"  // its memory cgroup's OOM killer ended it
	// RemedyEndGuardAddressSpace and RemedyEndGuardCgroup: the host guard stopped it short of the user's
	// limit (ulimit -v, the memory cgroup's), not at the tool's own margin.
	RemedyEndGuardAddressSpace RemedyEnd = "guard-address-space"
	RemedyEndGuardCgroup       RemedyEnd = "guard-cgroup"
)

// remedyEnd is how job j ended.
func remedyEnd(j result.RemedyJob) RemedyEnd {
	switch {
	case j.Interrupted():
		return RemedyEndInterrupted
	case j.Outcome == result.OutcomeCrashed && j.Limit == result.LimitCgroupMemory:
		return RemedyEndCgroupOOM
	case j.Outcome == result.OutcomeStopped && j.StopCause == result.StopHostGuard && j.Limit == result.LimitAddressSpace:
		return RemedyEndGuardAddressSpace
	case j.Outcome == result.OutcomeStopped && j.StopCause == result.StopHostGuard && j.Limit == result.LimitCgroupMemory:
		return RemedyEndGuardCgroup
	}
	return RemedyEnd(j.Outcome)
}

// endWords says how a job ended: "failed with -6 (CL_OUT_OF_HOST_MEMORY)", "crashed", "interrupted".
func endWords(j result.RemedyJob) string {
	switch remedyEnd(j) {
	case RemedyEndInterrupted:
		return "interrupted"
	case RemedyEndCgroupOOM:
		return "was ended by its memory cgroup's OOM killer"
	case RemedyEndGuardAddressSpace:
		return "was stopped by the host guard short of its address-space limit (ulimit -v)"
	case RemedyEndGuardCgroup:
		return "was stopped by the host guard short of its memory cgroup's limit"
	}
	if f := j.FirstFailure; f != nil && j.Outcome == result.OutcomeFailed {
		return fmt.Sprintf("failed with %d (%s)", f.Code, f.Name)
	}
	return string(j.Outcome)
}
