package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	goldenset "github.com/clmemprobe/clmemprobe/report/internal/golden"
	"image/png"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// inputs are results to merge, each from its node's folder.
var inputs = goldenset.Inputs

func TestMergeRendersEveryFormat(t *testing.T) {
	f := comparison.Merge(inputs(fixture.Node(t, "n1", 1), fixture.Node(t, "n2", 1), fixture.Node(t, "=cmd|' /C calc'!A0", 0.5)), 0.1)
	for _, name := range Names(KindFleet) {
		var b bytes.Buffer
		if err := Render(&b, name, f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch name {
		case "json":
			var back comparison.Fleet
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Outliers != f.Outliers {
				t.Errorf("json does not read back: %v", err)
			}
		case "csv":
			rows, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			for _, j := range f.Groups[0].Jobs {
				want += j.Count()
			}
			if len(rows) != want {
				t.Errorf("csv: %d rows, want a header and one per node and job (%d)", len(rows), want)
			}
			for _, r := range rows[1:] {
				if strings.HasPrefix(r[9], "=") {
					t.Errorf("csv: a host name starting with = is a spreadsheet formula: %q", r[9])
				}
			}
		case "png":
			if _, err := png.Decode(&b); err != nil {
				t.Errorf("png: %v", err)
			}
		case "table", "markdown":
			golden(t, "merge-hostile."+name, b.Bytes()) // how many outliers, the formula name as text
		}
	}
}

// A job of more nodes than the limit shows its outliers and a count of the others; --all (AllRows) shows
// every node, and a job within the limit is shown whole either way.
func TestFleetTableShowsOutliersAndCountsTheRest(t *testing.T) {
	scales := make([]float64, table.FleetRowLimit+15)
	for i := range scales {
		scales[i] = 1 + 0.001*float64(i%5)
	}
	scales[7], scales[31] = 0.5, 0.6
	f := comparison.Merge(inputs(fixture.Nodes(t, map[string][]float64{"1.0": scales})...), 0.1)
	jobs := 0
	for _, j := range f.Groups[0].Jobs {
		if j.MedianAllocs > 0 {
			jobs++
		}
	}
	healthy := fmt.Sprintf("and %d healthy nodes", len(scales)-2)
	for _, format := range []string{"table", "markdown"} {
		var short, all bytes.Buffer
		if err := RenderWith(&short, format, f, Options{}); err != nil {
			t.Fatal(err)
		}
		if err := RenderWith(&all, format, f, Options{AllRows: true}); err != nil {
			t.Fatal(err)
		}
		s := short.String()
		if got := strings.Count(s, healthy); got != jobs {
			t.Errorf("%s: %q %d times, want once per job with outliers (%d):\n%s", format, healthy, got, jobs, s)
		}
		if got := strings.Count(all.String(), healthy); got != 0 {
			t.Errorf("%s with AllRows still counts nodes instead of showing them", format)
		}
		// The outliers (1.0-n07, 1.0-n31) first, then the count; a healthy node (1.0-n03) only with AllRows.
		golden(t, "merge-outliers-first."+format, short.Bytes())
		golden(t, "merge-all-rows."+format, all.Bytes())
	}
	small := comparison.Merge(inputs(fixture.Nodes(t, map[string][]float64{"1.0": scales[:table.FleetRowLimit]})...), 0.1)
	var short, all bytes.Buffer
	_ = RenderWith(&short, "table", small, Options{})
	_ = RenderWith(&all, "table", small, Options{AllRows: true})
	if short.String() != all.String() {
		t.Errorf("a job of %d nodes must be shown whole:\n%s", table.FleetRowLimit, short.String())
	}
}
