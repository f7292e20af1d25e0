package report

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/google/pprof/profile"
)

// The pprof formats of a trace with a ledger and a failure (H100, docs/examples/h100-ledger/tfill) are
// profiles pprof reads, with the two sample types and, between them, as many buffers as the ledger's sites
// held live at that point.
func TestPprofFormatsAreProfilesOfTheLedger(t *testing.T) {
	tr, err := result.LoadTrace(filepath.Join("..", "docs", "examples", "h100-ledger", "tfill", "trace.json"))
	if err != nil || tr == nil || tr.Ledger == nil || tr.FirstFailure == nil {
		t.Fatalf("the example trace: %v (a ledger and a failure are needed)", err)
	}
	for _, c := range []struct {
		format string
		live   func(result.TraceSite) int64
	}{
		{"pprof", func(s result.TraceSite) int64 { return int64(s.Live) }},
		{"pprof-failure", func(s result.TraceSite) int64 { return int64(s.AtFailure) }},
	} {
		var b bytes.Buffer
		if err := Render(&b, c.format, findings.JudgeTrace(tr)); err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		p, err := profile.Parse(&b)
		if err != nil {
			t.Fatalf("%s: pprof cannot read it: %v", c.format, err)
		}
		if len(p.SampleType) != 2 || p.SampleType[0].Type != "buffers" || p.SampleType[1].Type != "bytes" {
			t.Errorf("%s: sample types %v, want buffers and bytes", c.format, p.SampleType)
		}
		var got, want int64
		for _, s := range p.Sample {
			got += s.Value[0]
		}
		for _, s := range tr.Ledger.Sites {
			want += c.live(s)
		}
		if got != want || want == 0 {
			t.Errorf("%s: %d buffers in the profile, want the sites' %d (not 0)", c.format, got, want)
		}
	}
}
