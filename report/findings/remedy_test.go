package findings

import (
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

func remedyJob(change string, st result.Strategy, outcome result.Outcome, n uint64) result.RemedyJob {
	return result.RemedyJob{Change: change, Strategy: st, SizeBytes: 1 << 20, AllocationsOK: n, BytesOK: n << 20, Outcome: outcome}
}

// Changes that lift the failure come first, the smallest of equal gains first; then by gain; unsupported
// ones are said apart; the headline names the smallest that lifts it with its reach.
func TestRankRemediesLiftingFirstThenGainThenSmallest(t *testing.T) {
	r := &result.Remedy{Baseline: remedyJob("the baseline", result.Shared, result.OutcomeFailed, 1000), Remedies: []result.RemedyJob{
		remedyJob("one context per device", result.PerDevice, result.OutcomeCompleted, 3000),
		remedyJob("device-list", result.DeviceList, result.OutcomeUnsupported, 0),
		remedyJob("pool", result.Pool, result.OutcomeCompleted, 3000),
		remedyJob("flags alloc-host-ptr", result.Shared, result.OutcomeFailed, 1050),
		remedyJob("buffers a quarter the size", result.Shared, result.OutcomeFailed, 2000),
	}}
	r.Remedies[1].Reason = "no cl_khr_external_memory"
	r = JudgeRemedy(r).Remedy()
	var order []string
	for _, j := range r.Remedies {
		order = append(order, j.Change)
	}
	want := []string{"one context per device", "pool", "buffers a quarter the size", "flags alloc-host-ptr", "device-list"}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Errorf("order %v, want %v", order, want)
	}
	if !r.Remedies[0].Lifts || r.Remedies[0].Gain != 3 || r.Remedies[2].Lifts || r.Remedies[2].Gain != 2 {
		t.Errorf("gains %+v", r.Remedies)
	}
	h := r.Verdict[0]
	for _, want := range []string{"the smallest change that lifts the failure is one context per device: it reached its budget of 3000 buffers",
		"pool (3.00x) lift it too", "buffers a quarter the size (2.00x) go further without lifting it", "did not help: flags alloc-host-ptr (1.05x)", "device-list could not run here: no cl_khr_external_memory"} {
		if !strings.Contains(h, want) {
			t.Errorf("headline lacks %q: %s", want, h)
		}
	}
	// Without a change that lifts it, the one that goes furthest is named first.
	r2 := &result.Remedy{Baseline: remedyJob("the baseline", result.Shared, result.OutcomeFailed, 1000), Remedies: []result.RemedyJob{
		remedyJob("flags alloc-host-ptr", result.Shared, result.OutcomeFailed, 1050),
		remedyJob("buffers a quarter the size", result.Shared, result.OutcomeFailed, 2000),
	}}
	r2 = JudgeRemedy(r2).Remedy()
	if h := r2.Verdict[0]; !strings.Contains(h, "no change lifts the failure: buffers a quarter the size goes furthest, 2000 buffers (2.00x") ||
		!strings.Contains(h, "did not help: flags alloc-host-ptr (1.05x)") {
		t.Errorf("headline: %s", h)
	}
}

func TestRankRemediesOfABaselineThatCompleted(t *testing.T) {
	r := &result.Remedy{Baseline: remedyJob("the baseline", result.Shared, result.OutcomeCompleted, 100), Remedies: []result.RemedyJob{
		remedyJob("pool", result.Pool, result.OutcomeCompleted, 100)}}
	r = JudgeRemedy(r).Remedy()
	if r.Remedies[0].Lifts || !strings.HasPrefix(r.Verdict[0], "Nothing to lift") {
		t.Errorf("%+v %q", r.Remedies[0], r.Verdict[0])
	}
}

// An interrupted search ranks only the jobs that ran to their end: the job Ctrl-C cut short has no gain, is
// neither among those that "did not help" nor those that lift it, comes last, and the headline says how
// many of the planned changes ran. Before, the cut job was ranked "stopped ... 0.30x" under "did not help".
func TestRankRemediesOfAnInterruptedSearch(t *testing.T) {
	cut := remedyJob("buffers a quarter the size", result.Shared, result.OutcomeStopped, 300)
	cut.StopCause = result.StopInterrupted
	r := &result.Remedy{Baseline: remedyJob("the baseline", result.Shared, result.OutcomeFailed, 1000), ChangesPlanned: 9, Interrupted: true,
		Remedies: []result.RemedyJob{cut, remedyJob("one context per device", result.PerDevice, result.OutcomeCompleted, 3000),
			remedyJob("flags alloc-host-ptr", result.Shared, result.OutcomeFailed, 1050)}}
	r = JudgeRemedy(r).Remedy()
	last := r.Remedies[len(r.Remedies)-1]
	if last.Change != cut.Change || last.Gain != 0 || last.Lifts {
		t.Errorf("the interrupted job: %+v; want it last, with no gain", last)
	}
	h := r.Verdict[0]
	if !strings.HasPrefix(h, "Interrupted (Ctrl-C): 2 of 9 changes ran to their end") || strings.Contains(h, cut.Change) {
		t.Errorf("headline %q: want 2 of 9 ran, and the interrupted change not ranked", h)
	}
	// Interrupted before any change ended, and during the baseline.
	r.Remedies = []result.RemedyJob{cut}
	r = JudgeRemedy(r).Remedy()
	if h := r.Verdict[0]; !strings.HasPrefix(h, "Interrupted (Ctrl-C) after the baseline") || !strings.Contains(h, "none of the 9 changes") {
		t.Errorf("no change ended: %q", h)
	}
	r.Baseline, r.Remedies = cut, nil
	r = JudgeRemedy(r).Remedy()
	if h := r.Verdict[0]; !strings.HasPrefix(h, "Interrupted (Ctrl-C) during the baseline") {
		t.Errorf("during the baseline: %q", h)
	}
}

// A job the memory cgroup's OOM killer ended is said so, not as a bare crash.
func TestRemedyNamesTheCgroupsOOMKiller(t *testing.T) {
	base := remedyJob("the baseline", result.Shared, result.OutcomeCrashed, 538)
	base.Limit = result.LimitCgroupMemory
	r := &result.Remedy{Baseline: base, Remedies: []result.RemedyJob{remedyJob("one context per device", result.PerDevice, result.OutcomeCrashed, 540)}}
	r = JudgeRemedy(r).Remedy()
	if want := "The baseline (shared, 1 MiB buffers) was ended by its memory cgroup's OOM killer after 538 buffers"; !strings.HasPrefix(r.Verdict[0], want) {
		t.Errorf("headline %q, want it to start %q", r.Verdict[0], want)
	}
}

// TestRemedySaysTheGuardStoppedAtAUserLimit: a baseline and a change that the host guard stopped before
// the address-space limit they inherited, and one stopped before their memory cgroup's limit, are said to
// be so, not a bare "stopped" (which reads as the tool's own margin).
func TestRemedySaysTheGuardStoppedAtAUserLimit(t *testing.T) {
	for limit, words := range map[result.Limit]string{
		result.LimitAddressSpace: "was stopped by the host guard short of its address-space limit (ulimit -v)",
		result.LimitCgroupMemory: "was stopped by the host guard short of its memory cgroup's limit",
	} {
		stopped := func(change string, n uint64) result.RemedyJob {
			j := remedyJob(change, result.Shared, result.OutcomeStopped, n)
			j.StopCause, j.Limit = result.StopHostGuard, limit
			return j
		}
		r := &result.Remedy{Baseline: stopped("the baseline", 400), Remedies: []result.RemedyJob{stopped("buffers 4x as large, the same bytes", 600)}}
		r = JudgeRemedy(r).Remedy()
		if h := r.Verdict[0]; strings.Count(h, words) != 2 {
			t.Errorf("%s: the headline does not say twice %q: %s", limit, words, h)
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
	r = JudgeRemedy(r).Remedy()
	h := r.Verdict[0]
	if !strings.Contains(h, "no change lifts the failure: a change that maps less goes furthest") ||
		!strings.Contains(h, "did not help: buffers 4x as large, the same bytes (1.16x), settings RLIMIT_NOFILE=hard (1.15x)") {
		t.Errorf("headline: %s", h)
	}
	reserve := &result.Remedy{Baseline: atLimit("the baseline", 418, result.LimitHostMemory), Remedies: []result.RemedyJob{
		atLimit("settings RLIMIT_NOFILE=hard", 482, result.LimitHostMemory)}}
	reserve = JudgeRemedy(reserve).Remedy()
	if h := reserve.Verdict[0]; !strings.Contains(h, "settings RLIMIT_NOFILE=hard goes furthest") {
		t.Errorf("at the host reserve: %s", h)
	}
}
