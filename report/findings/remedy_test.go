package findings

import (
	"math"
	"slices"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

func remedyJob(change string, st result.Strategy, outcome result.Outcome, n uint64) result.RemedyJob {
	return result.RemedyJob{Change: change, Strategy: st, SizeBytes: 1 << 20, AllocationsOK: n, BytesOK: n << 20, Outcome: outcome}
}

// headlines collects the headline of every search the tests judge, for the golden file that holds their words.
var headlines []string

// judgeRemedy judges r and keeps its headline for the golden file.
func judgeRemedy(r *result.Remedy) JudgedRemedy {
	j := JudgeRemedy(r)
	headlines = append(headlines, j.Verdict()...)
	return j
}

func changesOf(r *result.Remedy) []string {
	var out []string
	for _, j := range r.Remedies {
		out = append(out, j.Change)
	}
	return out
}

// near says whether gain is a over b, to the two decimals a headline gives.
func near(gain float64, a, b uint64) bool { return math.Abs(gain-float64(a)/float64(b)) < 1e-9 }

// Changes that lift the failure come first, the smallest of equal gains first; then by gain; unsupported
// ones are said apart; the claim names the smallest that lifts it.
func TestRankRemediesLiftingFirstThenGainThenSmallest(t *testing.T) {
	r := &result.Remedy{Baseline: remedyJob("the baseline", result.Shared, result.OutcomeFailed, 1000), Remedies: []result.RemedyJob{
		remedyJob("one context per device", result.PerDevice, result.OutcomeCompleted, 3000),
		remedyJob("device-list", result.DeviceList, result.OutcomeUnsupported, 0),
		remedyJob("pool", result.Pool, result.OutcomeCompleted, 3000),
		remedyJob("flags alloc-host-ptr", result.Shared, result.OutcomeFailed, 1050),
		remedyJob("buffers a quarter the size", result.Shared, result.OutcomeFailed, 2000),
	}}
	r.Remedies[1].Reason = "no cl_khr_external_memory"
	j := judgeRemedy(r)
	ranked := j.Remedy()
	if want := []string{"one context per device", "pool", "buffers a quarter the size", "flags alloc-host-ptr", "device-list"}; !slices.Equal(changesOf(ranked), want) {
		t.Errorf("order %v, want %v", changesOf(ranked), want)
	}
	if !ranked.Remedies[0].Lifts || !near(ranked.Remedies[0].Gain, 3000, 1000) || ranked.Remedies[2].Lifts || !near(ranked.Remedies[2].Gain, 2000, 1000) {
		t.Errorf("gains %+v", ranked.Remedies)
	}
	c := j.Claim()
	if c.Kind != RemedyLifts || c.Smallest != "one context per device" || !slices.Equal(c.Lift, []string{"one context per device", "pool"}) ||
		!slices.Equal(c.Further, []string{"buffers a quarter the size"}) || !slices.Equal(c.NoHelp, []string{"flags alloc-host-ptr"}) ||
		!slices.Equal(c.Unsupported, []string{"device-list"}) || c.Interrupted || c.Ran != 5 {
		t.Errorf("claim %+v", c)
	}
	// Without a change that lifts it, the one that goes furthest is named first.
	r2 := &result.Remedy{Baseline: remedyJob("the baseline", result.Shared, result.OutcomeFailed, 1000), Remedies: []result.RemedyJob{
		remedyJob("flags alloc-host-ptr", result.Shared, result.OutcomeFailed, 1050),
		remedyJob("buffers a quarter the size", result.Shared, result.OutcomeFailed, 2000),
	}}
	c2 := judgeRemedy(r2).Claim()
	if c2.Kind != RemedyGoesFurther || !slices.Equal(c2.Further, []string{"buffers a quarter the size"}) || !slices.Equal(c2.NoHelp, []string{"flags alloc-host-ptr"}) ||
		len(c2.Lift) != 0 || c2.Smallest != "" {
		t.Errorf("claim %+v", c2)
	}
}

func TestRankRemediesOfABaselineThatCompleted(t *testing.T) {
	r := &result.Remedy{Baseline: remedyJob("the baseline", result.Shared, result.OutcomeCompleted, 100), Remedies: []result.RemedyJob{
		remedyJob("pool", result.Pool, result.OutcomeCompleted, 100)}}
	j := judgeRemedy(r)
	if j.Remedy().Remedies[0].Lifts || j.Claim().Kind != RemedyNothingToLift {
		t.Errorf("%+v %+v", j.Remedy().Remedies[0], j.Claim())
	}
}

// An interrupted search ranks only the jobs that ran to their end: the job Ctrl-C cut short has no gain, is
// neither among those that "did not help" nor those that lift it, comes last, and the claim says how many
// of the planned changes ran. Before, the cut job was ranked "stopped ... 0.30x" under "did not help".
func TestRankRemediesOfAnInterruptedSearch(t *testing.T) {
	cut := remedyJob("buffers a quarter the size", result.Shared, result.OutcomeStopped, 300)
	cut.StopCause = result.StopInterrupted
	r := &result.Remedy{Baseline: remedyJob("the baseline", result.Shared, result.OutcomeFailed, 1000), ChangesPlanned: 9, Interrupted: true,
		Remedies: []result.RemedyJob{cut, remedyJob("one context per device", result.PerDevice, result.OutcomeCompleted, 3000),
			remedyJob("flags alloc-host-ptr", result.Shared, result.OutcomeFailed, 1050)}}
	j := judgeRemedy(r)
	last := j.Remedy().Remedies[len(r.Remedies)-1]
	if last.Change != cut.Change || last.Gain != 0 || last.Lifts {
		t.Errorf("the interrupted job: %+v; want it last, with no gain", last)
	}
	c := j.Claim()
	listed := slices.Concat(c.Lift, c.Further, c.NoHelp, c.Unsupported)
	if !c.Interrupted || c.Ran != 2 || c.Kind != RemedyLifts || slices.Contains(listed, cut.Change) || c.Ends[cut.Change] != RemedyEndInterrupted {
		t.Errorf("claim %+v: want 2 of 9 ran, and the interrupted change not ranked", c)
	}
	// Interrupted before any change ended, and during the baseline.
	r.Remedies = []result.RemedyJob{cut}
	if c := judgeRemedy(r).Claim(); c.Kind != RemedyNoChangeEnded || c.Ran != 0 {
		t.Errorf("no change ended: %+v", c)
	}
	r.Baseline, r.Remedies = cut, nil
	if c := judgeRemedy(r).Claim(); c.Kind != RemedyBaselineInterrupted || c.BaselineEnd != RemedyEndInterrupted {
		t.Errorf("during the baseline: %+v", c)
	}
}

// A job the memory cgroup's OOM killer ended is said so, not as a bare crash.
func TestRemedyNamesTheCgroupsOOMKiller(t *testing.T) {
	base := remedyJob("the baseline", result.Shared, result.OutcomeCrashed, 538)
	base.Limit = result.LimitCgroupMemory
	r := &result.Remedy{Baseline: base, Remedies: []result.RemedyJob{remedyJob("one context per device", result.PerDevice, result.OutcomeCrashed, 540)}}
	c := judgeRemedy(r).Claim()
	if c.BaselineEnd != RemedyEndCgroupOOM || c.Ends["one context per device"] != RemedyEnd(result.OutcomeCrashed) {
		t.Errorf("baseline ended %q, the change %q; want %q and a bare crash", c.BaselineEnd, c.Ends["one context per device"], RemedyEndCgroupOOM)
	}
}

// TestRemedySaysTheGuardStoppedAtAUserLimit: a baseline and a change that the host guard stopped before
// the address-space limit they inherited, and one stopped before their memory cgroup's limit, are said to
// be so, not a bare "stopped" (which reads as the tool's own margin).
func TestRemedySaysTheGuardStoppedAtAUserLimit(t *testing.T) {
	for _, limit := range []result.Limit{result.LimitAddressSpace, result.LimitCgroupMemory} {
		want := map[result.Limit]RemedyEnd{result.LimitAddressSpace: RemedyEndGuardAddressSpace, result.LimitCgroupMemory: RemedyEndGuardCgroup}[limit]
		stopped := func(change string, n uint64) result.RemedyJob {
			j := remedyJob(change, result.Shared, result.OutcomeStopped, n)
			j.StopCause, j.Limit = result.StopHostGuard, limit
			return j
		}
		const change = "buffers 4x as large, the same bytes"
		r := &result.Remedy{Baseline: stopped("the baseline", 400), Remedies: []result.RemedyJob{stopped(change, 600)}}
		if c := judgeRemedy(r).Claim(); c.BaselineEnd != want || c.Ends[change] != want {
			t.Errorf("%s: baseline ended %q, the change %q; want both %q", limit, c.BaselineEnd, c.Ends[change], want)
		}
	}
}

// TestRemedyAtTheAddressSpaceLimitTakesItsScatter: the baseline and its changes stopped by the guard before
// a ulimit -v that left some 420 MiB (PoCL, as measured): changes within two malloc arenas (128 MiB) of the
// baseline did not go further, whatever their ratio (482 and 484 MiB against 418 were 1.15x, "further"
// before); one 200 MiB past it did. Stopped at the host reserve, the same 1.15x still counts.
func TestRemedyAtTheAddressSpaceLimitTakesItsScatter(t *testing.T) {
	atLimit := func(change string, n uint64, limit result.Limit) result.RemedyJob {
		j := remedyJob(change, result.Shared, result.OutcomeStopped, n)
		j.StopCause, j.Limit = result.StopHostGuard, limit
		return j
	}
	r := &result.Remedy{Baseline: atLimit("the baseline", 418, result.LimitAddressSpace), Remedies: []result.RemedyJob{
		atLimit("settings RLIMIT_NOFILE=hard", 482, result.LimitAddressSpace),
		atLimit("buffers 4x as large, the same bytes", 484, result.LimitAddressSpace),
		atLimit("a change that maps less", 618, result.LimitAddressSpace),
	}}
	j := judgeRemedy(r)
	c := j.Claim()
	if c.Kind != RemedyGoesFurther || !slices.Equal(c.Further, []string{"a change that maps less"}) ||
		!slices.Equal(c.NoHelp, []string{"buffers 4x as large, the same bytes", "settings RLIMIT_NOFILE=hard"}) {
		t.Errorf("claim %+v", c)
	}
	if g := j.Remedy().Remedies; !near(g[1].Gain, 484, 418) || !near(g[2].Gain, 482, 418) {
		t.Errorf("gains %v and %v, want 484/418 and 482/418", g[1].Gain, g[2].Gain)
	}
	reserve := &result.Remedy{Baseline: atLimit("the baseline", 418, result.LimitHostMemory), Remedies: []result.RemedyJob{
		atLimit("settings RLIMIT_NOFILE=hard", 482, result.LimitHostMemory)}}
	if c := judgeRemedy(reserve).Claim(); c.Kind != RemedyGoesFurther || !slices.Equal(c.Further, []string{"settings RLIMIT_NOFILE=hard"}) {
		t.Errorf("at the host reserve: %+v", c)
	}
}

// The words of every headline the tests above judged, in the order they ran.
func TestRemedyHeadlinesWords(t *testing.T) {
	headlines = nil
	for _, test := range []func(*testing.T){TestRankRemediesLiftingFirstThenGainThenSmallest, TestRankRemediesOfABaselineThatCompleted,
		TestRankRemediesOfAnInterruptedSearch, TestRemedyNamesTheCgroupsOOMKiller, TestRemedySaysTheGuardStoppedAtAUserLimit,
		TestRemedyAtTheAddressSpaceLimitTakesItsScatter} {
		test(t)
	}
	if len(headlines) != 11 {
		t.Fatalf("%d headlines, want 11", len(headlines))
	}
	goldenLines(t, "remedy-headlines", headlines)
}
