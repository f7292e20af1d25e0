package report

import (
	"bytes"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// json is written a group, a job and a row at a time, and reads byte for byte as the whole document
// encoded at once: merged fleets, an empty one, and lists that are empty or null.
func TestFleetJSONIsTheDocumentEncodedWhole(t *testing.T) {
	in := inputs(fixture.Nodes(t, map[string][]float64{"1.0": {1, 1.02, 0.5}, "2.0": {1}})...)
	st := &in[1].Run.Jobs[1]
	st.Fit, st.HostBytesPerBuffer = &result.Fit{OK: true}, 0.6*float64(st.SizeBytes)
	merged := comparison.Merge(in, 0.1)
	odd := &comparison.Fleet{Tolerance: 0.5, Results: 2, Groups: []comparison.FleetGroup{{Platform: "p", Nodes: 1}, {Platform: "q", Jobs: []comparison.FleetJob{{Strategy: result.Shared}}}}}
	for name, f := range map[string]*comparison.Fleet{"merged": merged, "empty": comparison.Merge(nil, 0.1), "null and empty lists": odd} {
		var whole, streamed bytes.Buffer
		if err := writeJSON(&whole, f); err != nil {
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
