package findings

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

const mib = 1 << 20

// job is a strategy result of n buffers of 1 MiB over devs, ending as outcome.
func job(st result.Strategy, outcome result.Outcome, n uint64, devs ...int) result.JobResult {
	return result.JobResult{Strategy: st, Devices: devs, SizeBytes: mib, Outcome: outcome, AllocationsOK: n, BytesOK: n * mib,
		DeviceSampler: "test sampler"}
}

// failedAt is a job that failed with -4 at create at buffer n, meant for device dev.
func failedAt(st result.Strategy, n uint64, dev int, devs ...int) result.JobResult {
	s := job(st, result.OutcomeFailed, n, devs...)
	s.FirstFailure = &result.FirstFailure{Index: n, Stage: result.StageCreate, Code: -4, Name: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
		Call: "clCreateBuffer", Device: dev, BytesBefore: n * mib}
	return s
}

func verdictOf(r *result.Run) string {
	apply(r)
	return strings.Join(r.Verdict, "\n")
}

// oneDeviceFindings are the findings that say the run had one device (a comparison with that evidence).
func oneDeviceFindings(fs []result.Finding) []result.Finding {
	var out []result.Finding
	for _, f := range findingsOf(fs, result.FindingComparison) {
		if f.Evidence["devices"] == 1 {
			out = append(out, f)
		}
	}
	return out
}

// A run on one device says, once and right after the headline, that the layouts cannot differ there;
// a run on two devices does not.
func TestOneDeviceIsSaidAfterTheHeadline(t *testing.T) {
	one := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0, Name: "pthread-cpu", GlobalMemBytes: 8 << 30}},
		Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, 100, 0), job(result.PerDevice, result.OutcomeCompleted, 100, 0),
			job(result.MigrateFirst, result.OutcomeCompleted, 100, 0)}}
	fs := Judge(one).Findings()
	if len(fs) < 2 || fs[1].Kind != result.FindingComparison || fs[1].Evidence["devices"] != 1 {
		t.Fatalf("the second finding should say the run had one device:\n%s", sentences(fs))
	}
	if n := len(oneDeviceFindings(fs)); n != 1 {
		t.Errorf("said %d times, want once", n)
	}
	wantEvidence(t, fs[1], map[string]float64{"device": float64(one.Devices[0].Index)})
	// Under two variants it is still said once: it is a fact of the run, not of a variant.
	two := *one
	two.Jobs = append(two.Jobs[:3:3], job(result.Shared, result.OutcomeCompleted, 50, 0))
	two.Jobs[3].Variant = "limit"
	if n := len(oneDeviceFindings(Judge(&two).Findings())); n != 1 {
		t.Errorf("with two variants, said %d times, want once", n)
	}
	pair := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0}, {Index: 1}},
		Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, 100, 0, 1)}}
	if fs := oneDeviceFindings(Judge(pair).Findings()); len(fs) != 0 {
		t.Errorf("said on two devices: %v", fs)
	}
}

// A job that completed after it was given more bytes than a device reports is a finding, on each device it
// exceeded, with the bytes given and the size reported; one within the device's size is not.
func TestCompletedPastTheReportedGlobalMemory(t *testing.T) {
	const global = 2 << 30
	const n = 3000 // 3000 MiB, past 2 GiB on one device; 1500 MiB each on two
	r := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0, GlobalMemBytes: global}},
		Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, n, 0)}}
	wantEvidence(t, findingOf(t, Judge(r).Findings(), result.FindingLimit, result.Shared),
		map[string]float64{"device": 0, "devices_over": 1, "given_bytes": n * mib, "global_mem_bytes": global})
	// Judged by the sizes the job's own worker saw (a variant that made the device report 1 GiB), not by
	// the listing under the runtime's defaults (8 GiB here).
	variant := job(result.Shared, result.OutcomeCompleted, n, 0)
	variant.DeviceSizes = []result.DeviceSize{{Device: 0, GlobalMemBytes: 1 << 30}}
	listed := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}},
		Jobs: []result.JobResult{variant}}
	wantEvidence(t, findingOf(t, Judge(listed).Findings(), result.FindingLimit, result.Shared), map[string]float64{"global_mem_bytes": 1 << 30})
	two := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0, GlobalMemBytes: global}, {Index: 1, GlobalMemBytes: global}},
		Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, n, 0, 1)}}
	if fs := findingsOf(Judge(two).Findings(), result.FindingLimit); len(fs) != 0 {
		t.Errorf("%d MiB per device is within 2 GiB, yet: %v", n/2, fs)
	}
}

// A strategy the host guard stopped is never ranked first: the headline names the runtime's first failure
// and then says the guard stopped the other before any runtime limit, with the reserve; with nothing else,
// the headline is the guard's.
func TestGuardStopIsNotFailingFirst(t *testing.T) {
	const reserve = 3 << 30
	guarded := job(result.Shared, result.OutcomeStopped, 40, 0, 1)
	guarded.Guard, guarded.Reason = result.GuardSystem, "host guard: system available memory fell below the reserve"
	r := &result.Run{Config: result.Config{Touch: result.TouchFill, HostReserveByte: reserve}, Environment: &result.Environment{HostMemBytes: 64 << 30},
		Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}, {Index: 1, GlobalMemBytes: 1 << 30}},
		Jobs:    []result.JobResult{guarded, failedAt(result.PerDevice, 900, 0, 0, 1)}}
	fs := Judge(r).Findings()
	if h := fs[0]; h.About != result.FindingFailure || !slices.Equal(h.Strategies, []result.Strategy{result.PerDevice}) {
		t.Errorf("headline should be per-device's failure, not the guard stop: %+v", h)
	}
	if len(fs) < 2 || fs[1].Kind != result.FindingOutcome || !slices.Equal(fs[1].Strategies, []result.Strategy{result.Shared}) {
		t.Fatalf("the second finding should be the guard's stop of shared:\n%s", sentences(fs))
	}
	wantEvidence(t, fs[1], map[string]float64{"host_reserve_bytes": reserve, "guard_stopped": 1})
	only := &result.Run{Config: r.Config, Environment: r.Environment, Devices: r.Devices,
		Jobs: []result.JobResult{guarded, guarded, job(result.MigrateFirst, result.OutcomeCompleted, 100, 0, 1)}}
	only.Jobs[1].Strategy = result.PerDevice
	h := Judge(only).Findings()[0]
	if h.Kind != result.FindingHeadline || h.About == result.FindingFailure || !slices.Equal(h.Strategies, []result.Strategy{result.Shared, result.PerDevice}) {
		t.Errorf("headline %+v: want the guard's stop of shared and per-device", h)
	}
	wantEvidence(t, h, map[string]float64{"host_reserve_bytes": reserve, "guard_stopped": 2})
}

// An interrupted run has no failure for its headline and no limit for the job it interrupted, and counts
// the jobs that did not run.
func TestInterruptedRunSaysSoAndListsWhatDidNotRun(t *testing.T) {
	stopped := job(result.PerDevice, result.OutcomeStopped, 700, 0, 1)
	stopped.StopCause, stopped.Reason, stopped.DeviceSampler = result.StopInterrupted, "interrupted", "not available: test"
	sizes := []uint64{mib, 4 * mib}
	r := &result.Run{Partial: true, Environment: &result.Environment{HostMemBytes: 64 << 30},
		Config:  result.Config{Touch: result.TouchFill, TimeoutSeconds: 600, Strategies: []result.Strategy{result.Shared, result.PerDevice, result.MigrateFirst}, Sizes: sizes},
		Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}, {Index: 1, GlobalMemBytes: 8 << 30}},
		Jobs:    []result.JobResult{job(result.Shared, result.OutcomeCompleted, 1000, 0, 1), stopped}}
	j := Judge(r)
	fs := j.Findings()
	if h := fs[0]; h.Kind != result.FindingHeadline || h.About != "" || len(h.Strategies) != 0 {
		t.Errorf("headline %+v: an interrupt is no failure of a strategy", h)
	}
	wantEvidence(t, fs[0], map[string]float64{fmt.Sprintf("%s@%d", evidenceKey(result.PerDevice, "allocations_ok"), stopped.SizeBytes): float64(stopped.AllocationsOK)})
	// The jobs without a result: every configured strategy at every size, less the two that ran; their
	// strategies in the order the first of each is missed.
	var missing int
	var who []result.Strategy
	for _, size := range sizes {
		for _, st := range r.Config.Strategies {
			if size != mib || (st != result.Shared && st != result.PerDevice) {
				missing++
				who = appendOnce(who, st)
			}
		}
	}
	wantEvidence(t, findingOf(t, fs, result.FindingOutcome, who...), map[string]float64{"jobs_not_run": float64(missing)})
	if l := limitOf(t, j, result.PerDevice, mib); l.Limit != "" {
		t.Errorf("an interrupted job has limit %q; nothing but the user ended it", l.Limit)
	}
}

// Over random runs: no sentence suggests --touch fill to a run that touched its buffers, and no stopped job
// (an interrupt, a timeout, the host reserve) leads the verdict.
func TestNoSentenceSuggestsWhatTheRunDid(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 5000; n++ {
		r := randomRun(rng)
		for i := range r.Jobs {
			if s := &r.Jobs[i]; s.Outcome == result.OutcomeStopped {
				k := rng.IntN(3)
				s.StopCause = []result.StopCause{result.StopInterrupted, result.StopTimedOut, result.StopHostGuard}[k]
				s.Reason = []string{"interrupted", "timeout: the strategy ran longer than 10m0s", "host guard: below the reserve"}[k]
			}
		}
		j := Judge(r)
		// Advice is prose with no figure to carry: the sentences themselves are checked.
		if v := strings.Join(j.Verdict(), "\n"); r.Config.Touch != result.TouchNone && strings.Contains(v, "--touch fill") {
			t.Fatalf("run %d (touch %s) is told to use --touch fill:\n%s", n, r.Config.Touch, v)
		}
		h := j.Findings()[0]
		if len(h.Strategies) == 0 || len(h.Sizes) == 0 {
			continue
		}
		for _, s := range r.Jobs {
			if s.Strategy == h.Strategies[0] && s.SizeBytes == h.Sizes[0] && s.Variant == h.Variant && s.Flags == h.Flags && s.Outcome == result.OutcomeStopped {
				t.Fatalf("run %d: a stopped job leads the verdict: %s", n, h.Sentence)
			}
		}
	}
}

// The guard's headline and the list of jobs not run refer back to what they named with a pronoun that
// agrees with its count: "to let it reach" for one strategy, "them" for two; "before it" for one job.
func TestStopSentencesAgreeInNumber(t *testing.T) {
	guarded := job(result.Shared, result.OutcomeStopped, 40, 0)
	guarded.Guard, guarded.Reason = result.GuardSystem, "host guard: system available memory fell below the reserve"
	var verdicts []string
	for _, n := range []int{1, 2} {
		r := &result.Run{Config: result.Config{Touch: result.TouchFill, HostReserveByte: 3 << 30}, Environment: &result.Environment{HostMemBytes: 64 << 30},
			Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}}}
		for _, st := range []result.Strategy{result.Shared, result.PerDevice}[:n] {
			j := guarded
			j.Strategy = st
			r.Jobs = append(r.Jobs, j)
		}
		if h := Judge(r).Findings()[0]; h.Kind != result.FindingHeadline || len(h.Strategies) != n {
			t.Errorf("%d guard-stopped: headline %+v, want one of the %d strategies", n, h, n)
		}
		verdicts = append(verdicts, fmt.Sprintf("%d guard-stopped:", n), verdictOf(r))
	}
	for _, missing := range []int{1, 2} {
		asked := []result.Strategy{result.Shared, result.PerDevice, result.MigrateFirst}[:1+missing]
		r := &result.Run{Partial: true, Config: result.Config{Touch: result.TouchFill, Strategies: asked, SizeBytes: mib},
			Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}, {Index: 1, GlobalMemBytes: 8 << 30}},
			Jobs:    []result.JobResult{job(result.Shared, result.OutcomeCompleted, 10, 0, 1)}}
		if f := findingOf(t, Judge(r).Findings(), result.FindingOutcome); f.Evidence["jobs_not_run"] != float64(missing) {
			t.Errorf("%d not run: %+v", missing, f)
		}
		verdicts = append(verdicts, fmt.Sprintf("%d not run:", missing), verdictOf(r))
	}
	// The pronouns agree with their counts ("to let it reach", "them"; "before it"): the golden file's words.
	goldenLines(t, "stop-pronouns", verdicts)
}

// The one-device sentence names the strategies that ran, not the default three; a run of one strategy
// on one device says only that the layouts were not compared, in one sentence.
func TestOneDeviceNamesTheStrategiesThatRan(t *testing.T) {
	dev := []result.Device{{Index: 0, Name: "pthread-cpu", GlobalMemBytes: 8 << 30}}
	var lines []string
	for _, ran := range [][]result.Strategy{{result.Shared}, {result.Shared, result.DeviceList}} {
		r := &result.Run{Config: result.Config{Touch: result.TouchFill, Strategies: result.DefaultStrategies}, Devices: dev}
		for _, st := range ran {
			r.Jobs = append(r.Jobs, job(st, result.OutcomeCompleted, 100, 0))
		}
		fs := oneDeviceFindings(Judge(r).Findings())
		if len(fs) != 1 {
			t.Fatalf("%v: %d one-device findings, want 1", ran, len(fs))
		}
		// The finding holds no strategies of its own: the names are in its sentence only, the golden file's.
		lines = append(lines, fmt.Sprintf("%v ran: %s", ran, fs[0].Sentence))
	}
	goldenLines(t, "one-device", lines)
}

// A crash under a variant that set the address-space limit names that variant and its setting, not only
// the shell's ulimit -v: the user set it with --variant, not in the shell.
func TestCrashUnderAVariantsAddressLimitNamesTheVariant(t *testing.T) {
	crash := job(result.Shared, result.OutcomeCrashed, 300)
	crash.Signal, crash.Reason, crash.Variant = "SIGABRT", "crashed with SIGABRT", "small-as"
	crash.VariantSettings = map[string]string{"RLIMIT_AS": "1GiB"}
	r := &result.Run{Platform: result.Platform{Name: "Portable Computing Language"}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}},
		Jobs: []result.JobResult{crash}}
	j := Judge(r)
	if l := limitOf(t, j, result.Shared, 0); l.Limit != result.LimitRuntime || l.Evidence["allocations_ok"] != float64(crash.AllocationsOK) {
		t.Errorf("limit %+v: want the runtime's, after %d buffers", l, crash.AllocationsOK)
	}
	// The variant and its setting are names, not figures: the limit's sentence says them.
	goldenLines(t, "crash-variant-limit", []string{findingOf(t, j.Findings(), result.FindingLimit, result.Shared).Sentence})
}

// A job given more than both its devices report is one sentence naming both, not one a device; migrate-
// first's buffers were migrated, so it does not say "never used" of them.
func TestOvercommitIsOneSentenceOverTheDevices(t *testing.T) {
	r := &result.Run{Config: result.Config{Touch: result.TouchNone}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}, {Index: 1, GlobalMemBytes: 1 << 30}}}
	for _, st := range []result.Strategy{result.Shared, result.MigrateFirst} {
		r.Jobs = append(r.Jobs, job(st, result.OutcomeCompleted, 4096, 0, 1))
	}
	fs := Judge(r).Findings()
	// 4096 buffers of 1 MiB over two devices: half of them each, twice what each reports.
	for _, st := range []result.Strategy{result.Shared, result.MigrateFirst} {
		wantEvidence(t, findingOf(t, fs, result.FindingLimit, st), map[string]float64{"devices_over": 2, "given_bytes": 4096 / 2 * mib, "global_mem_bytes": 1 << 30})
	}
	// What the note after it says of the buffers is prose with no figure: the golden file's words.
	goldenLines(t, "overcommit", []string{findingOf(t, fs, result.FindingLimit, result.Shared).Sentence, findingOf(t, fs, result.FindingLimit, result.MigrateFirst).Sentence})
}

// Where every strategy failed at the same buffer, the headline names them all and calls none first.
func TestATieIsNoFirst(t *testing.T) {
	r := &result.Run{Config: result.Config{Touch: result.TouchNone}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}, {Index: 1, GlobalMemBytes: 8 << 30}}}
	for _, st := range []result.Strategy{result.Shared, result.PerDevice} {
		r.Jobs = append(r.Jobs, failedAt(st, 500, 0, 0, 1))
	}
	fs := Judge(r).Findings()
	wantEvidence(t, findingOf(t, fs, result.FindingFailure, result.Shared, result.PerDevice), map[string]float64{"index": 500})
	// The headline's finding names one strategy (its limit's); that none was first is in its sentence.
	if h := fs[0]; h.Kind != result.FindingHeadline || h.About != result.FindingFailure {
		t.Errorf("headline %+v: want the failure", h)
	}
	goldenLines(t, "tie", []string{fs[0].Sentence})
}
