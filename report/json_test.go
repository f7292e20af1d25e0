package report

import (
	"bytes"
	"slices"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/export"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// json is written a group, a job and a row at a time, and reads byte for byte as the whole document
// encoded at once: merged fleets, an empty one, and lists that are empty or null.
// wholeRows is f with every job's rows in its Rows, as encoding/json sees them.
func wholeRows(f *comparison.Fleet) *comparison.Fleet {
	out := *f
	out.Groups = slices.Clone(f.Groups)
	for gi := range out.Groups {
		g := &out.Groups[gi]
		g.Jobs = slices.Clone(g.Jobs)
		for ji := range g.Jobs {
			if j := &g.Jobs[ji]; j.Count() > 0 {
				j.Rows = slices.Collect(j.All())
			}
		}
	}
	return &out
}

func TestFleetJSONIsTheDocumentEncodedWhole(t *testing.T) {
	in := inputs(fixture.Nodes(t, map[string][]float64{"1.0": {1, 1.02, 0.5}, "2.0": {1}})...)
	st := &in[1].Run.Jobs[1]
	st.Fit, st.HostBytesPerBuffer = &result.Fit{OK: true}, 0.6*float64(st.SizeBytes)
	merged := comparison.Merge(in, 0.1)
	odd := &comparison.Fleet{Tolerance: 0.5, Results: 2, Groups: []comparison.FleetGroup{{Platform: "p", Nodes: 1}, {Platform: "q", Jobs: []comparison.FleetJob{{Strategy: result.Shared}}}}}
	for name, f := range map[string]*comparison.Fleet{"merged": merged, "empty": comparison.Merge(nil, 0.1), "null and empty lists": odd} {
		var whole, streamed bytes.Buffer
		if err := export.WriteJSON(&whole, wholeRows(f)); err != nil {
			t.Fatal(err)
		}
		if err := Render(&streamed, "json", f); err != nil {
			t.Fatal(err)
		}
		if whole.String() != streamed.String() {
			t.Errorf("%s: the streamed document differs from the whole one:\n%s\nwant:\n%s", name, streamed.String(), whole.String())
		}
	}
}
