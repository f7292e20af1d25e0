package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

// stale is a verdict planted in a document before it is judged: no renderer may show it.
const stale = "STALE-VERDICT-PLANTED-BY-THE-TEST"

// The renderers of largest, remedy and exchange take the judged values: a bare document is refused, every
// format of the kind renders the judged one, none shows a verdict the document held before it was judged,
// and the JSON holds the judge's.
func TestJudgedKindsRenderTheJudgement(t *testing.T) {
	l := &result.Largest{Kind: result.LargestKind, Platform: result.Platform{Name: "P"}, Devices: []result.LargestDevice{{Index: 0, Name: "a", MaxAllocBytes: 1 << 30,
		BoundBytes: 2 << 30, LargestVerifiedBytes: 1 << 30, Patterns: []result.LargestPattern{{PatternBytes: 4, LargestVerifiedBytes: 1 << 30}},
		Tries: []result.LargestTry{{SizeBytes: 1 << 30, PatternBytes: 4, Outcome: result.TryVerified}, {SizeBytes: 2 << 30, PatternBytes: 4, Outcome: result.TryRefused, Code: -61, Call: "clCreateBuffer"}}}}}
	l.Verdict = []string{stale}
	base := result.RemedyJob{Change: "the baseline", Strategy: result.Shared, SizeBytes: 1 << 20, AllocationsOK: 10, BytesOK: 10 << 20, Outcome: result.OutcomeFailed,
		FirstFailure: &result.FirstFailure{Code: -4, Name: "CL_MEM_OBJECT_ALLOCATION_FAILURE"}}
	r := &result.Remedy{Kind: result.RemedyKind, Baseline: base, Remedies: []result.RemedyJob{{Change: "pool", Strategy: result.Pool, SizeBytes: 1 << 20, AllocationsOK: 20,
		BytesOK: 20 << 20, Outcome: result.OutcomeCompleted}}}
	r.Verdict = []string{stale}
	e := &result.ExchangeRun{Command: []string{"clmemprobe", "exchange"}, DeviceInfo: []result.Device{{Index: 0, Name: "a"}, {Index: 1, Name: "b"}},
		Exchange: result.Exchange{Devices: []int{0, 1}, Sync: "events", Verified: true, Correct: true, Steps: 3, Paths: []result.ExchangePath{{Path: "copy", Bytes: 4096}}}}
	jl, jr, je := findings.JudgeLargest(l), findings.JudgeRemedy(r), findings.JudgeExchange(e)
	for _, c := range []struct {
		kind    Kind
		bare    any
		judged  any
		verdict []string
	}{{KindLargest, l, jl, jl.Verdict()}, {KindRemedy, r, jr, jr.Verdict()}, {KindExchange, e, je, nil}} {
		if err := Render(&bytes.Buffer{}, "json", c.bare); err == nil {
			t.Errorf("%T: a bare document was rendered", c.bare)
		}
		names := Names(c.kind)
		if len(names) < 2 {
			t.Errorf("%T: formats %v", c.bare, names)
		}
		for _, name := range names {
			var out bytes.Buffer
			if err := RenderWith(&out, name, c.judged, Options{AllFindings: true}); err != nil || out.Len() == 0 {
				t.Errorf("%T as %s: %v, %d bytes", c.judged, name, err, out.Len())
			}
			if bytes.Contains(out.Bytes(), []byte(stale)) {
				t.Errorf("%T as %s shows the verdict stored before it was judged", c.judged, name)
			}
		}
		var out bytes.Buffer
		if err := Render(&out, "json", c.judged); err != nil {
			t.Fatal(err)
		}
		var doc struct{ Verdict []string }
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil || !slices.Equal(doc.Verdict, c.verdict) {
			t.Errorf("%T: JSON verdict %q (%v), want the judge's %q", c.judged, doc.Verdict, err, c.verdict)
		}
	}
}
