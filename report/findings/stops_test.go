package findings

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
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

// A run on one device says, once and right after the headline, that the layouts cannot differ there;
// a run on two devices does not.
func TestOneDeviceIsSaidAfterTheHeadline(t *testing.T) {
	const name = "pthread-cpu"
	one := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0, Name: name, GlobalMemBytes: 8 << 30}},
		Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, 100, 0), job(result.PerDevice, result.OutcomeCompleted, 100, 0),
			job(result.MigrateFirst, result.OutcomeCompleted, 100, 0)}}
	apply(one)
	want := "cannot differ on one device"
	if len(one.Verdict) < 2 || !strings.Contains(one.Verdict[1], want) || !strings.Contains(one.Verdict[1], name) {
		t.Fatalf("the second sentence should say the layouts %s (device %s):\n%s", want, name, strings.Join(one.Verdict, "\n"))
	}
	if n := strings.Count(strings.Join(one.Verdict, "\n"), want); n != 1 {
		t.Errorf("said %d times, want once", n)
	}
	// Under two variants it is still said once: it is a fact of the run, not of a variant.
	two := *one
	two.Jobs = append(two.Jobs[:3:3], job(result.Shared, result.OutcomeCompleted, 50, 0))
	two.Jobs[3].Variant = "limit"
	if n := strings.Count(verdictOf(&two), want); n != 1 {
		t.Errorf("with two variants, said %d times, want once", n)
	}
	pair := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0}, {Index: 1}},
		Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, 100, 0, 1)}}
	if v := verdictOf(pair); strings.Contains(v, want) {
		t.Errorf("said on two devices:\n%s", v)
	}
}

// A job that completed after it was given more bytes than a device reports is a finding, on each device it
// exceeded; one within the device's size is not.
func TestCompletedPastTheReportedGlobalMemory(t *testing.T) {
	const global = 2 << 30
	const n = 3000 // 3000 MiB, past 2 GiB on one device; 1500 MiB each on two
	r := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0, GlobalMemBytes: global}},
		Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, n, 0)}}
	v := verdictOf(r)
	want := fmt.Sprintf("%d x 1 MiB (%s) completed on device 0, which reports %s of global memory: the runtime does not enforce its reported global memory",
		n, units.Bytes(n*mib), units.Bytes(global))
	if !strings.Contains(v, want) {
		t.Errorf("verdict lacks %q:\n%s", want, v)
	}
	if strings.Contains(v, "--touch fill") {
		t.Errorf("suggests --touch fill to a run that used it:\n%s", v)
	}
	// Judged by the sizes the job's own worker saw (a variant that made the device report 1 GiB), not by
	// the listing under the runtime's defaults (8 GiB here).
	variant := job(result.Shared, result.OutcomeCompleted, n, 0)
	variant.DeviceSizes = []result.DeviceSize{{Device: 0, GlobalMemBytes: 1 << 30}}
	listed := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}},
		Jobs: []result.JobResult{variant}}
	if v := verdictOf(listed); !strings.Contains(v, "which reports "+units.Bytes(1<<30)+" of global memory") {
		t.Errorf("a job whose worker saw 1 GiB, given %d MiB, is judged by the listing:\n%s", n, v)
	}
	two := &result.Run{Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 0, GlobalMemBytes: global}, {Index: 1, GlobalMemBytes: global}},
		Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, n, 0, 1)}}
	if v := verdictOf(two); strings.Contains(v, "does not enforce") {
		t.Errorf("1500 MiB per device is within 2 GiB, yet:\n%s", v)
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
	apply(r)
	if !strings.HasPrefix(r.Verdict[0], "per-device failed first") {
		t.Errorf("headline should name per-device's failure, not the guard stop: %s", r.Verdict[0])
	}
	reserveText := units.Bytes(reserve)
	want := fmt.Sprintf("The host guard stopped 1 strategy (shared) before any runtime limit, to keep the reserve of %s", reserveText)
	if len(r.Verdict) < 2 || !strings.Contains(r.Verdict[1], want) {
		t.Errorf("second sentence should be %q:\n%s", want, strings.Join(r.Verdict, "\n"))
	}
	only := &result.Run{Config: r.Config, Environment: r.Environment, Devices: r.Devices,
		Jobs: []result.JobResult{guarded, guarded, job(result.MigrateFirst, result.OutcomeCompleted, 100, 0, 1)}}
	only.Jobs[1].Strategy = result.PerDevice
	apply(only)
	want = fmt.Sprintf("The host guard stopped 2 strategies (shared and per-device) before any runtime limit, to keep the reserve of %s", reserveText)
	if !strings.HasPrefix(only.Verdict[0], want) || strings.Contains(only.Verdict[0], "first") {
		t.Errorf("headline %q, want it to begin %q", only.Verdict[0], want)
	}
}

// An interrupted run says so, has no limit for the job it interrupted, lists the jobs that did not run,
// and suggests no flag the run already used.
func TestInterruptedRunSaysSoAndListsWhatDidNotRun(t *testing.T) {
	stopped := job(result.PerDevice, result.OutcomeStopped, 700, 0, 1)
	stopped.Reason, stopped.DeviceSampler = "interrupted", "not available: test"
	sizes := []uint64{mib, 4 * mib}
	r := &result.Run{Partial: true, Environment: &result.Environment{HostMemBytes: 64 << 30},
		Config:  result.Config{Touch: result.TouchFill, TimeoutSeconds: 600, Strategies: []result.Strategy{result.Shared, result.PerDevice, result.MigrateFirst}, Sizes: sizes},
		Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}, {Index: 1, GlobalMemBytes: 8 << 30}},
		Jobs:    []result.JobResult{job(result.Shared, result.OutcomeCompleted, 1000, 0, 1), stopped}}
	v := verdictOf(r)
	if !strings.Contains(r.Verdict[0], "interrupted") {
		t.Errorf("headline should say the run was interrupted: %s", r.Verdict[0])
	}
	// The jobs without a result: every configured strategy at every size, less the two that ran.
	var missing []string
	for _, size := range sizes {
		for _, st := range r.Config.Strategies {
			if size == mib && (st == result.Shared || st == result.PerDevice) {
				continue
			}
			missing = append(missing, fmt.Sprintf("%s at %s", st, units.Size(size)))
		}
	}
	want := "Not run (the run was interrupted before them): " + strings.Join(missing, ", ") + "."
	if !strings.Contains(v, want) {
		t.Errorf("verdict lacks %q:\n%s", want, v)
	}
	for _, s := range r.Jobs {
		if s.Strategy == result.PerDevice && s.Limit != "" {
			t.Errorf("an interrupted job has limit %q; nothing but the user ended it", s.Limit)
		}
	}
	for _, used := range []string{"--touch fill", "raise --timeout", "failed first"} {
		if strings.Contains(v, used) {
			t.Errorf("verdict says %q to an interrupted run with --touch fill:\n%s", used, v)
		}
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
				s.Reason = []string{"interrupted", "timeout: the strategy ran longer than 10m0s", "host guard: below the reserve"}[rng.IntN(3)]
			}
		}
		apply(r)
		v := strings.Join(r.Verdict, "\n")
		if r.Config.Touch != result.TouchNone && strings.Contains(v, "--touch fill") {
			t.Fatalf("run %d (touch %s) is told to use --touch fill:\n%s", n, r.Config.Touch, v)
		}
		for _, s := range r.Jobs {
			if s.Outcome == result.OutcomeStopped && strings.Contains(r.Verdict[0], string(s.Strategy)+" stopped after") {
				t.Fatalf("run %d: a stopped job leads the verdict: %s", n, r.Verdict[0])
			}
		}
	}
}

// The guard's headline and the list of jobs not run refer back to what they named with a pronoun that
// agrees with its count: "to let it reach" for one strategy, "them" for two; "before it" for one job.
func TestStopSentencesAgreeInNumber(t *testing.T) {
	guarded := job(result.Shared, result.OutcomeStopped, 40, 0)
	guarded.Guard, guarded.Reason = result.GuardSystem, "host guard: system available memory fell below the reserve"
	for _, n := range []int{1, 2} {
		r := &result.Run{Config: result.Config{Touch: result.TouchFill, HostReserveByte: 3 << 30}, Environment: &result.Environment{HostMemBytes: 64 << 30},
			Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}}}
		for _, st := range []result.Strategy{result.Shared, result.PerDevice}[:n] {
			j := guarded
			j.Strategy = st
			r.Jobs = append(r.Jobs, j)
		}
		pronoun := map[int]string{1: "it", 2: "them"}[n]
		want := "to let " + pronoun + " reach the runtime's own limit"
		if v := verdictOf(r); !strings.Contains(v, want) {
			t.Errorf("%d guard-stopped: want %q in\n%s", n, want, v)
		}
	}
	for _, missing := range []int{1, 2} {
		asked := []result.Strategy{result.Shared, result.PerDevice, result.MigrateFirst}[:1+missing]
		r := &result.Run{Partial: true, Config: result.Config{Touch: result.TouchFill, Strategies: asked, SizeBytes: mib},
			Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}, {Index: 1, GlobalMemBytes: 8 << 30}},
			Jobs:    []result.JobResult{job(result.Shared, result.OutcomeCompleted, 10, 0, 1)}}
		want := "Not run (the run was interrupted before " + map[int]string{1: "it", 2: "them"}[missing] + "): "
		if v := verdictOf(r); !strings.Contains(v, want) {
			t.Errorf("%d not run: want %q in\n%s", missing, want, v)
		}
	}
}

// The one-device sentence names the strategies that ran, not the default three; a run of one strategy
// on one device says only that the layouts were not compared, in one sentence.
func TestOneDeviceNamesTheStrategiesThatRan(t *testing.T) {
	dev := []result.Device{{Index: 0, Name: "pthread-cpu", GlobalMemBytes: 8 << 30}}
	for _, ran := range [][]result.Strategy{{result.Shared}, {result.Shared, result.DeviceList}} {
		r := &result.Run{Config: result.Config{Touch: result.TouchFill, Strategies: result.DefaultStrategies}, Devices: dev}
		for _, st := range ran {
			r.Jobs = append(r.Jobs, job(st, result.OutcomeCompleted, 100, 0))
		}
		v := verdictOf(r)
		var line string
		for _, s := range r.Verdict {
			if strings.HasPrefix(s, "The run had one device") {
				line = s
			}
		}
		if line == "" {
			t.Fatalf("%v: no one-device sentence:\n%s", ran, v)
		}
		for _, st := range result.Strategies {
			if named := strings.Contains(line, string(st)); named != slices.Contains(ran, st) {
				t.Errorf("%v ran: the sentence names %s: %v\n%s", ran, st, named, line)
			}
		}
		if len(ran) == 1 && (!strings.Contains(line, "not compared") || strings.Count(line, ". ") > 0) {
			t.Errorf("one strategy: want one sentence saying the layouts were not compared: %s", line)
		}
	}
}

// A crash under a variant that set the address-space limit names that variant and its setting, not only
// the shell's ulimit -v: the user set it with --variant, not in the shell.
func TestCrashUnderAVariantsAddressLimitNamesTheVariant(t *testing.T) {
	crash := job(result.Shared, result.OutcomeCrashed, 300)
	crash.Signal, crash.Reason, crash.Variant = "SIGABRT", "crashed with SIGABRT", "small-as"
	crash.VariantSettings = map[string]string{"RLIMIT_AS": "1GiB"}
	r := &result.Run{Platform: result.Platform{Name: "Portable Computing Language"}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}},
		Jobs: []result.JobResult{crash}}
	apply(r)
	v := strings.Join(r.Verdict, "\n")
	if !strings.Contains(v, "here the variant small-as (RLIMIT_AS=1GiB) set it") {
		t.Errorf("the verdict does not name the variant that set the limit:\n%s", v)
	}
}

// A job given more than both its devices report is one sentence naming both, not one a device; migrate-
// first's buffers were migrated, so it does not say "never used" of them.
func TestOvercommitIsOneSentenceOverTheDevices(t *testing.T) {
	r := &result.Run{Config: result.Config{Touch: result.TouchNone}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}, {Index: 1, GlobalMemBytes: 1 << 30}}}
	for _, st := range []result.Strategy{result.Shared, result.MigrateFirst} {
		r.Jobs = append(r.Jobs, job(st, result.OutcomeCompleted, 4096, 0, 1))
	}
	apply(r)
	var said []string
	for _, f := range r.Findings {
		if strings.Contains(f.Sentence, "does not enforce its reported global memory") {
			said = append(said, f.Sentence)
		}
	}
	if len(said) != 2 || !strings.Contains(said[0], "each of devices 0 and 1") {
		t.Fatalf("want one sentence per job naming both devices, got %q", said)
	}
	for _, s := range said {
		if strings.HasPrefix(s, "migrate-first") && strings.Contains(s, "never used") {
			t.Errorf("migrate-first's buffers were migrated: %s", s)
		}
	}
}

// Where every strategy failed at the same buffer, the headline names them all and calls none first.
func TestATieIsNoFirst(t *testing.T) {
	r := &result.Run{Config: result.Config{Touch: result.TouchNone}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 8 << 30}, {Index: 1, GlobalMemBytes: 8 << 30}}}
	for _, st := range []result.Strategy{result.Shared, result.PerDevice} {
		r.Jobs = append(r.Jobs, failedAt(st, 500, 0, 0, 1))
	}
	apply(r)
	if h := r.Verdict[0]; !strings.HasPrefix(h, "shared and per-device all failed at buffer #500") {
		t.Errorf("headline: %s", h)
	}
}
