package judge

import (
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// loadTrace is a trace this tool wrote (docs/examples), loaded afresh on each call.
func loadTrace(t *testing.T) *result.Trace {
	t.Helper()
	tr, err := result.LoadTrace(filepath.Join("..", "..", "docs", "examples", "h100-ledger", "leak", "trace.json"))
	if err != nil || tr == nil {
		t.Fatalf("the example trace: %v", err)
	}
	return tr
}

// largestSearch is a search on two devices: one whose runtime enforces its maximum, one that went wrong
// above a size another pattern filled.
func largestSearch() *result.Largest {
	return &result.Largest{Kind: result.LargestKind, Devices: []result.LargestDevice{
		{Index: 0, Name: "a", MaxAllocBytes: 1 << 30, BoundBytes: 4 << 30, LargestVerifiedBytes: 1 << 30,
			Patterns: []result.LargestPattern{{PatternBytes: 4, LargestVerifiedBytes: 1 << 30}},
			Tries: []result.LargestTry{{SizeBytes: 1 << 30, PatternBytes: 4, Outcome: result.TryVerified},
				{SizeBytes: 2 << 30, PatternBytes: 4, Outcome: result.TryRefused, Code: -61, Call: "clCreateBuffer"}}},
		{Index: 1, Name: "b", MaxAllocBytes: 1 << 30, BoundBytes: 4 << 30, LargestVerifiedBytes: 3 << 30,
			Tries: []result.LargestTry{{SizeBytes: 3 << 30, PatternBytes: 1, Outcome: result.TryVerified},
				{SizeBytes: 4 << 30, PatternBytes: 1, Outcome: result.TryWrong, WrongAt: 1 << 31}}},
	}}
}

// remedySearch is a failing baseline and changes in the order they ran, which the ranking reorders.
func remedySearch() *result.Remedy {
	job := func(change string, st result.Strategy, o result.Outcome, n uint64) result.RemedyJob {
		return result.RemedyJob{Change: change, Strategy: st, SizeBytes: 1 << 20, AllocationsOK: n, BytesOK: n << 20, Outcome: o}
	}
	return &result.Remedy{Kind: result.RemedyKind, ChangesPlanned: 3, Baseline: job("the baseline", result.Shared, result.OutcomeFailed, 1000),
		Remedies: []result.RemedyJob{job("flags alloc-host-ptr", result.Shared, result.OutcomeFailed, 1050),
			job("buffers a quarter the size", result.Shared, result.OutcomeFailed, 2000),
			job("one context per device", result.PerDevice, result.OutcomeCompleted, 3000)}}
}

func exchangeRun() *result.ExchangeRun {
	return &result.ExchangeRun{DeviceInfo: []result.Device{{Index: 0}, {Index: 1}}, Exchange: result.Exchange{Devices: []int{0, 1}, Cells: 4096,
		Steps: 200, Sync: "none", Verified: true, WrongCells: 17, MaxError: 3, Checks: []result.ExchangeCheck{{Step: 200, WrongCells: 17, MaxError: 3}}}}
}

// Each judge function leaves its input as it found it, down to the last sample: the input is made twice
// the same way, one judged, and the two compared after. Each case also checks that the judgement is not
// empty, so that a case that judges nothing cannot pass.
func TestEveryJudgeLeavesItsInputAsItWas(t *testing.T) {
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(44, 2)) }
	cases := []struct {
		name  string
		make  func() any
		judge func(any) int // the judge of the kind; returns how much it said (sentences, rows, jobs)
	}{
		{"run", func() any { return fixture.Run(t) }, func(in any) int { return len(Run(in.(*result.Run)).Findings()) }},
		{"random run", func() any { return fixture.Random(rng()) }, func(in any) int { return len(Run(in.(*result.Run)).Findings()) }},
		{"trace", func() any { return loadTrace(t) }, func(in any) int { return len(Trace(in.(*result.Trace), false).Verdict()) }},
		{"interrupted trace", func() any { return loadTrace(t) }, func(in any) int {
			j := Trace(in.(*result.Trace), true)
			if !j.Trace().Exit.Interrupted {
				t.Error("the judged trace of an interrupted program does not say it was interrupted")
			}
			return len(j.Verdict())
		}},
		{"largest", func() any { return largestSearch() }, func(in any) int { return len(Largest(in.(*result.Largest)).Verdict()) }},
		{"remedy", func() any { return remedySearch() }, func(in any) int { return len(Remedy(in.(*result.Remedy)).Remedy().Remedies) }},
		{"remedy job", func() any { return fixture.Run(t) }, func(in any) int { return int(RemedyJob(in.(*result.Run)).AllocationsOK) }},
		{"exchange", func() any { return exchangeRun() }, func(in any) int { return len(Exchange(in.(*result.ExchangeRun)).Conclusion()) }},
		{"compare", func() any { return [2]*result.Run{fixture.Node(t, "a", 1), fixture.Node(t, "b", 0.5)} }, func(in any) int {
			p := in.([2]*result.Run)
			return len(Compare(p[0], p[1], comparison.Tolerance).Rows)
		}},
		{"merge", func() any { return fixture.Nodes(t, map[string][]float64{"1.0": {1, 1, 0.5}}) }, func(in any) int {
			var m comparison.FleetMerger
			for _, r := range in.([]*result.Run) {
				m.Add(comparison.NodeOf(fixture.Source(r), r))
			}
			return Merge(&m, comparison.Tolerance).Results
		}},
		{"interrupted check", func() any { return fixture.Run(t) }, func(in any) int {
			r := in.(*result.Run)
			h := CheckInterrupted(r, len(r.Jobs)+2)
			if !h.Interrupted || h.JobsDone != len(r.Jobs) || h.JobsPlanned != len(r.Jobs)+2 || CheckInterrupted(nil, 3).JobsDone != 0 {
				t.Errorf("interrupted check %+v of %d jobs run of %d", h, len(r.Jobs), len(r.Jobs)+2)
			}
			return h.JobsPlanned
		}},
		{"check", func() any { r := fixture.Run(t); return [2]any{result.ExpectationsFrom(r), fixture.Node(t, "n", 0.5)} }, func(in any) int {
			p := in.([2]any)
			return len(Check(p[0].(*result.Expectations), p[1].(*result.Run), comparison.Tolerance, time.Minute, time.Second).Jobs)
		}},
	}
	for _, c := range cases {
		in, want := c.make(), c.make()
		if !reflect.DeepEqual(in, want) {
			t.Fatalf("%s: two inputs made the same way differ: the test cannot tell a change", c.name)
		}
		if said := c.judge(in); said == 0 {
			t.Errorf("%s: the judgement is empty", c.name)
		}
		if !reflect.DeepEqual(in, want) {
			t.Errorf("%s: the judge changed its input", c.name)
		}
	}
}

// A judged value is the same judged twice: nothing of the first judgement is left in the input for the
// second to find.
func TestJudgingTwiceSaysTheSame(t *testing.T) {
	r := remedySearch()
	first, second := Remedy(r), Remedy(r)
	if !reflect.DeepEqual(first.Remedy(), second.Remedy()) || !reflect.DeepEqual(first.Verdict(), second.Verdict()) {
		t.Error("a remedy search judged twice is ranked or said differently")
	}
	l := largestSearch()
	if a, b := Largest(l), Largest(l); !reflect.DeepEqual(a.Verdict(), b.Verdict()) || len(a.Verdict()) != len(l.Devices) {
		t.Errorf("largest: %d and %d headlines for %d devices", len(a.Verdict()), len(b.Verdict()), len(l.Devices))
	}
}

// The remedy search's record of a job is the run's first job with the limit the findings classify, not one
// the run stored.
func TestRemedyJobTakesTheJudgedLimit(t *testing.T) {
	r := fixture.Run(t)
	want := findings.Judge(r)
	s := &want.Run().Jobs[0]
	r.Jobs[0].Limit = result.LimitUnknown + "-stored" // a stored limit the judge must not read
	j := RemedyJob(r)
	if j.Limit != want.Limit(s).Limit || j.AllocationsOK != s.AllocationsOK || j.BytesOK != s.BytesOK || j.Outcome != s.Outcome {
		t.Errorf("remedy job %+v; want the first job's figures and its judged limit %q", j, want.Limit(s).Limit)
	}
}

// Check says how long it took, as it was told.
func TestCheckSaysHowLongItTook(t *testing.T) {
	r := fixture.Run(t)
	h := Check(result.ExpectationsFrom(r), r, comparison.Tolerance, time.Minute, 1500*time.Millisecond)
	if h.Seconds != 1.5 || h.Budget != 60 || !h.Healthy {
		t.Errorf("seconds %v, budget %v, healthy %v; want 1.5, 60 and a run healthy against its own expectations", h.Seconds, h.Budget, h.Healthy)
	}
}
