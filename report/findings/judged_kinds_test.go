package findings

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// A judgement thinned for a smaller report says what the whole run says: the findings and each job's limit
// are those of every sample, and only the samples shown are fewer. The run judged keeps its samples.
func TestThinnedKeepsTheJudgementOfEverySample(t *testing.T) {
	r := fixture.Run(t)
	before := make([]int, len(r.Jobs))
	most := 0
	for i, s := range r.Jobs {
		before[i] = len(s.Samples)
		most = max(most, len(s.Samples))
	}
	const keep = 3
	if most <= keep {
		t.Fatalf("the fixture's jobs have at most %d samples: thinning to %d changes nothing", most, keep)
	}
	j := Judge(r)
	th := j.Thinned(keep)
	if !reflect.DeepEqual(th.Findings(), j.Findings()) {
		t.Error("thinning changed the findings")
	}
	for i := range th.Run().Jobs {
		s := &th.Run().Jobs[i]
		if len(s.Samples) > keep || th.Limit(s).Limit != j.Limit(&j.Run().Jobs[i]).Limit {
			t.Errorf("job %d: %d samples (want at most %d), limit %q (want %q)", i, len(s.Samples), keep, th.Limit(s).Limit, j.Limit(&j.Run().Jobs[i]).Limit)
		}
		if len(r.Jobs[i].Samples) != before[i] || len(j.Run().Jobs[i].Samples) != before[i] {
			t.Errorf("job %d: the judged run lost samples to the thinned copy", i)
		}
	}
	if (Judged{}).Thinned(keep).Run() != nil {
		t.Error("an empty judgement thinned holds a run")
	}
}

// Each judged document writes itself as its kind's JSON with the judge's verdict in it, and judging nothing
// gives an empty document, not a crash.
func TestJudgedDocumentsWriteTheirVerdict(t *testing.T) {
	l := &result.Largest{Kind: result.LargestKind, Devices: []result.LargestDevice{{Index: 0, Name: "a", LargestVerifiedBytes: 1 << 30, BoundBytes: 1 << 30,
		Tries: []result.LargestTry{{SizeBytes: 1 << 30, PatternBytes: 4, Outcome: result.TryVerified}}}}}
	jl := JudgeLargest(l)
	var gotL result.Largest
	decode(t, jl, &gotL)
	if len(jl.Verdict()) != 1 || !slices.Equal(gotL.Verdict, jl.Verdict()) || jl.Largest().Kind != result.LargestKind {
		t.Errorf("largest: verdict %q written as %q", jl.Verdict(), gotL.Verdict)
	}
	r := &result.Remedy{Kind: result.RemedyKind, Baseline: remedyJob("the baseline", result.Shared, result.OutcomeFailed, 10),
		Remedies: []result.RemedyJob{remedyJob("pool", result.Pool, result.OutcomeCompleted, 20)}}
	jr := JudgeRemedy(r)
	var gotR result.Remedy
	decode(t, jr, &gotR)
	if !slices.Equal(gotR.Verdict, jr.Verdict()) || len(gotR.Remedies) != 1 || !gotR.Remedies[0].Lifts || gotR.Remedies[0].Gain != 2 {
		t.Errorf("remedy: written %+v, want the verdict %q and pool lifting it at 2x", gotR, jr.Verdict())
	}
	e := &result.ExchangeRun{Exchange: result.Exchange{Sync: "events", Verified: true, Correct: true, Steps: 3}}
	var gotE result.ExchangeRun
	decode(t, JudgeExchange(e), &gotE)
	if !reflect.DeepEqual(&gotE, e) {
		t.Errorf("exchange: written %+v, want the run as measured %+v", gotE, *e)
	}
	if len(JudgeLargest(nil).Verdict()) != 0 || len(JudgeRemedy(nil).Verdict()) != 1 || JudgeExchange(nil).Outcome() != ExchangeUnverified {
		t.Error("judging nothing does not give an empty document")
	}
}

// decode writes v as JSON and reads it back into into.
func decode(t *testing.T, v, into any) {
	t.Helper()
	if b, err := json.Marshal(v); err != nil || json.Unmarshal(b, into) != nil {
		t.Fatalf("%T does not write itself as JSON that reads back: %v", v, err)
	}
}
