package result

import (
	"reflect"
	"testing"
	"time"
)

// Every document starts from one header: the schema, this tool, a start in RFC 3339, the command, and the
// platform at the asked index (none where the inventory has none there).
func TestEveryDocumentTakesTheOneHeader(t *testing.T) {
	inv := Inventory{{Platform: Platform{Index: 0, Name: "A"}}, {Platform: Platform{Index: 1, Name: "B"}}}
	cmd := []string{"clmemprobe", "run"}
	h := NewHeader("1.2.3", cmd, inv, 1)
	if _, err := time.Parse(time.RFC3339, h.Started); err != nil || h.SchemaVersion != SchemaVersion || h.Tool != (Tool{ToolName, "1.2.3"}) ||
		h.Platform.Name != "B" || !reflect.DeepEqual(h.Command, cmd) {
		t.Fatalf("header %+v (%v)", h, err)
	}
	for _, at := range []int{-1, 2} {
		if p := NewHeader("1", cmd, inv, at).Platform; p != (Platform{}) {
			t.Errorf("platform %d of 2: %+v, want none", at, p)
		}
	}
	type head struct {
		schema   int
		kind     string
		tool     Tool
		started  string
		platform Platform
	}
	want := head{SchemaVersion, "", h.Tool, h.Started, h.Platform}
	run, l, r, e := NewRun(h), NewLargest(h), NewRemedy(h), NewExchangeRun(h, Exchange{Steps: 7})
	for name, c := range map[string]struct {
		got  head
		kind string
	}{
		"run":      {head{run.SchemaVersion, "", run.Tool, run.Started, run.Platform}, ""},
		"largest":  {head{l.SchemaVersion, l.Kind, l.Tool, l.Started, l.Platform}, LargestKind},
		"remedy":   {head{r.SchemaVersion, r.Kind, r.Tool, r.Started, r.Platform}, RemedyKind},
		"exchange": {head{e.SchemaVersion, "", e.Tool, e.Started, e.Platform}, ""},
	} {
		w := want
		w.kind = c.kind
		if c.got != w {
			t.Errorf("%s: header %+v, want %+v", name, c.got, w)
		}
	}
	if !run.Partial || run.Jobs == nil || e.Steps != 7 || !reflect.DeepEqual(l.Command, cmd) {
		t.Errorf("run partial %v with jobs %v; exchange %+v", run.Partial, run.Jobs, e.Exchange)
	}
}

// A judgement and a thinning go into copies: the document they start from is left as it was.
func TestJudgementAndThinningWriteCopies(t *testing.T) {
	samples := make([]Sample, 50)
	for i := range samples {
		samples[i].Index = uint64(i)
	}
	r := &Run{Jobs: []JobResult{{Strategy: Shared, Samples: samples}}}
	j := WithJudgement(r, Judgement{Verdict: []string{"v"}})
	th := r.Thinned(5)
	if r.Verdict != nil || !reflect.DeepEqual(j.Verdict, []string{"v"}) || len(r.Jobs[0].Samples) != 50 || len(th.Jobs[0].Samples) > 5 {
		t.Errorf("original verdict %v, judged %v; samples %d then %d", r.Verdict, j.Verdict, len(r.Jobs[0].Samples), len(th.Jobs[0].Samples))
	}
	l := &Largest{}
	if WithJudgement(l, Judgement{Verdict: []string{"x"}}).Verdict[0] != "x" || l.Verdict != nil {
		t.Error("a largest search's judgement went into the search")
	}
}
