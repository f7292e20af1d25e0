package comparison

import (
	"errors"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// baselineRun is a complete run of two jobs that each failed or completed by themselves: a baseline.
func baselineRun() *result.Run {
	return &result.Run{Config: result.Config{Devices: []int{0, 1}, Touch: result.TouchNone, MaxAllocs: 1000},
		Jobs: []result.JobResult{
			{Strategy: result.Shared, SizeBytes: 1 << 20, Outcome: result.OutcomeFailed, AllocationsOK: 256},
			{Strategy: result.PerDevice, SizeBytes: 4 << 20, Outcome: result.OutcomeCompleted, AllocationsOK: 1000},
		}}
}

// Baseline is the one rule of check --record and check --expect: each kind of ending that is not the
// runtime's threshold is refused, naming every job of that kind; what a job ended by itself is taken.
func TestBaseline(t *testing.T) {
	stop := func(i int, cause result.StopCause) func(*result.Run) {
		return func(r *result.Run) { r.Jobs[i].Outcome, r.Jobs[i].StopCause = result.OutcomeStopped, cause }
	}
	end := func(i int, o result.Outcome) func(*result.Run) {
		return func(r *result.Run) { r.Jobs[i].Outcome = o }
	}
	var refusals []string
	for _, c := range []struct {
		name   string
		change []func(*result.Run)
		fault  BaselineFault // "" for a baseline
		jobs   []int         // the jobs the refusal names, by index
		words  []string      // what each named job's ending is called
	}{
		{name: "complete", fault: ""},
		{name: "unsupported is a recorded ending", change: []func(*result.Run){end(0, result.OutcomeUnsupported)}, fault: ""},
		{name: "interrupted run", change: []func(*result.Run){func(r *result.Run) { r.Partial = true }, stop(1, result.StopInterrupted)}, fault: BaselineInterrupted},
		{name: "interrupted between jobs", change: []func(*result.Run){func(r *result.Run) { r.Partial, r.Jobs = true, r.Jobs[:1] }}, fault: BaselineInterrupted},
		{name: "guard-stopped", change: []func(*result.Run){stop(1, result.StopHostGuard)}, fault: BaselineStopped, jobs: []int{1}, words: []string{"host guard"}},
		{name: "timed out", change: []func(*result.Run){stop(0, result.StopTimedOut)}, fault: BaselineStopped, jobs: []int{0}, words: []string{"timed out"}},
		{name: "a job interrupted, the run not marked", change: []func(*result.Run){stop(0, result.StopInterrupted)}, fault: BaselineStopped, jobs: []int{0}, words: []string{"interrupted"}},
		{name: "stopped, no cause recorded", change: []func(*result.Run){stop(1, "")}, fault: BaselineStopped, jobs: []int{1}, words: []string{"stopped"}},
		{name: "crashed", change: []func(*result.Run){end(1, result.OutcomeCrashed)}, fault: BaselineBroken, jobs: []int{1}, words: []string{"crashed"}},
		{name: "hung", change: []func(*result.Run){end(0, result.OutcomeHung)}, fault: BaselineBroken, jobs: []int{0}, words: []string{"hung"}},
		{name: "read back wrong", change: []func(*result.Run){end(0, result.OutcomeWrong)}, fault: BaselineBroken, jobs: []int{0}, words: []string{"wrong"}},
		{name: "every crash named", change: []func(*result.Run){end(0, result.OutcomeCrashed), end(1, result.OutcomeHung)}, fault: BaselineBroken, jobs: []int{0, 1}, words: []string{"crashed", "hung"}},
		// A stop is said before a crash: the stopped job's count is not even where the run would have ended.
		{name: "stopped and crashed", change: []func(*result.Run){end(0, result.OutcomeCrashed), stop(1, result.StopHostGuard)}, fault: BaselineStopped, jobs: []int{1}, words: []string{"host guard"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := baselineRun()
			for _, f := range c.change {
				f(r)
			}
			err := Baseline(result.ExpectationsFrom(r))
			if c.fault == "" {
				if err != nil {
					t.Fatalf("refused a baseline: %v", err)
				}
				return
			}
			var ref *Refusal
			if !errors.As(err, &ref) {
				t.Fatalf("Baseline = %v, want a refusal (%s)", err, c.fault)
			}
			if ref.Fault != c.fault {
				t.Errorf("fault %q, want %q", ref.Fault, c.fault)
			}
			if len(ref.Jobs) != len(c.jobs) {
				t.Fatalf("names %d jobs (%+v), want %d", len(ref.Jobs), ref.Jobs, len(c.jobs))
			}
			for k, i := range c.jobs {
				want := RefusedJob{Strategy: r.Jobs[i].Strategy, SizeBytes: r.Jobs[i].SizeBytes, Ending: c.words[k]}
				if ref.Jobs[k] != want {
					t.Errorf("job %d: %+v, want %+v", k, ref.Jobs[k], want)
				}
			}
			refusals = append(refusals, c.name+": "+err.Error())
		})
	}
	// The sentences name each job as the command line would (strategy, size, what ended it): their words
	// are the golden file's.
	fixture.GoldenLines(t, "baseline-refusals", refusals, *update, "./report/comparison")
}

// An expectations file records only each job's outcome: a stopped, crashed or hung job in one is refused
// by the same rule, a stop without its cause called "stopped".
func TestBaselineOfAnExpectationsFile(t *testing.T) {
	for _, o := range result.Outcomes {
		e := result.ExpectationsFrom(baselineRun())
		e.Jobs[1].Outcome = o
		err := Baseline(e)
		var ref *Refusal
		refused := errors.As(err, &ref)
		switch want := o == result.OutcomeStopped || Broken(o); {
		case refused != want:
			t.Errorf("outcome %s: refused %v (%v), want %v", o, refused, err, want)
		case refused && (len(ref.Jobs) != 1 || ref.Jobs[0].Strategy != e.Jobs[1].Strategy):
			t.Errorf("outcome %s: names %+v, want the one job %s", o, ref.Jobs, e.Jobs[1].Strategy)
		case refused && o == result.OutcomeStopped && ref.Jobs[0].Ending != "stopped":
			t.Errorf("a stop without its cause is called %q", ref.Jobs[0].Ending)
		}
	}
}

// A job under a variant or with other flags is named with them: two jobs of one strategy and size are
// told apart.
func TestBaselineNamesVariantAndFlags(t *testing.T) {
	r := baselineRun()
	r.Jobs[1].Variant, r.Jobs[1].Flags, r.Jobs[1].Outcome = "cap", "alloc-host-ptr", result.OutcomeCrashed
	err := Baseline(result.ExpectationsFrom(r))
	var ref *Refusal
	if !errors.As(err, &ref) || len(ref.Jobs) != 1 || ref.Jobs[0] != (RefusedJob{Strategy: result.PerDevice, SizeBytes: 4 << 20, Variant: "cap", Flags: "alloc-host-ptr", Ending: "crashed"}) {
		t.Fatalf("Baseline = %v, want it to name the variant and the flags", err)
	}
	fixture.GoldenLines(t, "baseline-variant-flags", []string{err.Error()}, *update, "./report/comparison")
}
