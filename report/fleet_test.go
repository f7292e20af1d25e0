package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/result"
)

// node is the fixture as one node's result: its host name, and every job's threshold scaled by scale.
func node(t *testing.T, name string, scale float64) FleetInput {
	t.Helper()
	r := loadFixture(t)
	r.Environment.Hostname = name
	for i := range r.Strategies {
		s := &r.Strategies[i]
		s.AllocationsOK = uint64(math.Round(float64(s.AllocationsOK) * scale))
		if s.FirstFailure != nil {
			s.FirstFailure.Index = s.AllocationsOK
		}
	}
	return FleetInput{Source: name + "/run.json", Run: r}
}

func rowOf(f *Fleet, strategy result.Strategy, node string) *FleetRow {
	for gi := range f.Groups {
		for ji := range f.Groups[gi].Jobs {
			j := &f.Groups[gi].Jobs[ji]
			for ri := range j.Rows {
				if j.Strategy == strategy && j.Rows[ri].Node == node {
					return &j.Rows[ri]
				}
			}
		}
	}
	return nil
}

func TestMergeFindsTheNodeThatDiffers(t *testing.T) {
	base := loadFixture(t)
	in := []FleetInput{node(t, "n1", 1), node(t, "n2", 1), node(t, "n3", 1.05), node(t, "n4", 0.97), node(t, "slow", 0.8)}
	f := Merge(in, 0.10)
	if len(f.Groups) != 1 || f.Groups[0].Nodes != 5 {
		t.Fatalf("want one group of 5 results, got %d groups", len(f.Groups))
	}
	g := f.Groups[0]
	if g.DeviceModel != result.DeviceModel(base.Devices) || g.DriverVersion != base.Devices[0].DriverVersion || g.Touch != base.Config.Touch {
		t.Errorf("group %q driver %q touch %s, want the fixture's", g.DeviceModel, g.DriverVersion, g.Touch)
	}
	if len(g.Jobs) != len(base.Strategies) {
		t.Fatalf("%d jobs, want one per strategy of the fixture (%d)", len(g.Jobs), len(base.Strategies))
	}
	for _, j := range g.Jobs {
		var want uint64
		for _, s := range base.Strategies {
			if s.Strategy == j.Strategy {
				want = s.AllocationsOK
			}
		}
		if j.MedianAllocs != float64(want) {
			t.Errorf("%s: median %v, want the unscaled threshold %d (the middle of 0.8, 0.97, 1, 1, 1.05)", j.Strategy, j.MedianAllocs, want)
		}
		lo, hi := uint64(math.Round(float64(want)*0.8)), uint64(math.Round(float64(want)*1.05))
		if j.MinAllocs != lo || j.MaxAllocs != hi || math.Abs(j.Spread-float64(hi-lo)/float64(want)) > 1e-12 {
			t.Errorf("%s: range %d-%d spread %v, want %d-%d", j.Strategy, j.MinAllocs, j.MaxAllocs, j.Spread, lo, hi)
		}
		for _, r := range j.Rows {
			if want > 0 && r.Outlier != (r.Node == "slow") {
				t.Errorf("%s on %s: outlier %v (%s); only the node 20%% below may be one at 10%%", j.Strategy, r.Node, r.Outlier, r.Why)
			}
		}
	}
	first := base.Strategies[0]
	dev := fmt.Sprintf("%+.1f%%", 100*(math.Round(float64(first.AllocationsOK)*0.8)/float64(first.AllocationsOK)-1))
	if r := rowOf(f, first.Strategy, "slow"); r == nil || !strings.Contains(r.Why, dev) {
		t.Errorf("the outlier's reason must say how far it is (%s): %+v", dev, r)
	}
	// A wider tolerance forgives it.
	if f := Merge(in, 0.25); f.Outliers != 0 {
		t.Errorf("%d outliers at 25%% tolerance, want 0", f.Outliers)
	}
}

func TestMergeNeverGroupsRunsThatAskedForDifferentThings(t *testing.T) {
	a, b, c, d := node(t, "a", 1), node(t, "b", 1), node(t, "c", 1), node(t, "d", 1)
	b.Run.Config.Touch = result.TouchFill
	c.Run.Config.MaxAllocs++
	d.Run.Devices[0].DriverVersion = "2.0"
	f := Merge([]FleetInput{a, b, c, d}, 0.1)
	if len(f.Groups) != 4 || f.Outliers != 0 {
		t.Fatalf("touch, budget and driver differ: want 4 groups and no outlier, got %d groups, %d outliers", len(f.Groups), f.Outliers)
	}
	// The size is part of every job: a job at another size is another row, never another node of the same job.
	e := node(t, "e", 1)
	for i := range e.Run.Strategies {
		e.Run.Strategies[i].SizeBytes *= 2
	}
	f = Merge([]FleetInput{a, e}, 0.1)
	for _, j := range f.Groups[0].Jobs {
		if len(j.Rows) != 1 {
			t.Errorf("%s at %d: %d rows, want 1", j.Strategy, j.SizeBytes, len(j.Rows))
		}
	}
}

func TestMergeOutcomeAndCostOutliers(t *testing.T) {
	in := []FleetInput{node(t, "a", 1), node(t, "b", 1), node(t, "c", 1)}
	st := &in[2].Run.Strategies[0]
	st.Outcome, st.FirstFailure, st.Signal = result.OutcomeCrashed, nil, "SIGSEGV"
	size := float64(in[1].Run.Strategies[1].SizeBytes)
	in[1].Run.Strategies[1].HostBytesPerBuffer += 0.5 * size // half a buffer more host memory per buffer
	in[1].Run.Strategies[1].Fit = &result.Fit{OK: true}
	for i := range in {
		in[i].Run.Strategies[1].Fit = &result.Fit{OK: true}
	}
	f := Merge(in, 0.1)
	if r := rowOf(f, st.Strategy, "c"); r == nil || !r.Outlier || !strings.Contains(r.Why, "crashed where the group") {
		t.Errorf("a crash among failures must be an outlier: %+v", r)
	}
	if r := rowOf(f, in[1].Run.Strategies[1].Strategy, "b"); r == nil || !r.Outlier || !strings.Contains(r.Why, "host cost per buffer") {
		t.Errorf("a node that costs half a buffer more per buffer must be an outlier: %+v", r)
	}
	if f.Outliers != 2 {
		t.Errorf("%d outliers, want 2", f.Outliers)
	}
}

func TestMergeRendersEveryFormat(t *testing.T) {
	in := []FleetInput{node(t, "n1", 1), node(t, "n2", 1), node(t, "=cmd|' /C calc'!A0", 0.5)}
	f := Merge(in, 0.1)
	for _, name := range Names(KindFleet) {
		var b bytes.Buffer
		if err := Render(&b, name, f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch name {
		case "json":
			var back Fleet
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
				want += len(j.Rows)
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
			if !strings.Contains(b.String(), fmt.Sprint(f.Outliers)+" OUTLIER") {
				t.Errorf("%s does not say how many outliers: %s", name, b.String())
			}
		}
	}
}
