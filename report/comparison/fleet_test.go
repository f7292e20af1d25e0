package comparison

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// node is the fixture as one node's result to merge (fixture.Node).
func node(t *testing.T, name string, scale float64) FleetInput {
	r := fixture.Node(t, name, scale)
	return FleetInput{Source: fixture.Source(r), Run: r}
}

// inputs are results to merge, each from its node's folder.
func inputs(runs []*result.Run) []FleetInput {
	out := make([]FleetInput, len(runs))
	for i, r := range runs {
		out[i] = FleetInput{Source: fixture.Source(r), Run: r}
	}
	return out
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

// fleetJobOf is the first job of the strategy in the merge.
func fleetJobOf(f *Fleet, strategy result.Strategy) *FleetJob {
	for gi := range f.Groups {
		for ji := range f.Groups[gi].Jobs {
			if j := &f.Groups[gi].Jobs[ji]; j.Strategy == strategy {
				return j
			}
		}
	}
	return &FleetJob{}
}

func TestMergeFindsTheNodeThatDiffers(t *testing.T) {
	base := fixture.Run(t)
	in := []FleetInput{node(t, "n1", 1), node(t, "n2", 1), node(t, "n3", 1.05), node(t, "n4", 0.97), node(t, "slow", 0.8)}
	f := merged(in, 0.10)
	if len(f.Groups) != 1 || f.Groups[0].Nodes != 5 {
		t.Fatalf("want one group of 5 results, got %d groups", len(f.Groups))
	}
	g := f.Groups[0]
	if g.DeviceModel != result.DeviceModel(base.Devices) || g.DriverVersion != base.Devices[0].DriverVersion || g.Touch != base.Config.Touch {
		t.Errorf("group %q driver %q touch %s, want the fixture's", g.DeviceModel, g.DriverVersion, g.Touch)
	}
	if len(g.Jobs) != len(base.Jobs) {
		t.Fatalf("%d jobs, want one per strategy of the fixture (%d)", len(g.Jobs), len(base.Jobs))
	}
	for _, j := range g.Jobs {
		var want uint64
		for _, s := range base.Jobs {
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
	first := base.Jobs[0]
	dev := math.Round(float64(first.AllocationsOK)*0.8)/float64(first.AllocationsOK) - 1
	if r := rowOf(f, first.Strategy, "slow"); r == nil || !r.Outlier || math.Abs(r.Deviation-dev) > 1e-12 {
		t.Errorf("the outlier must be %+.4f off its median: %+v", dev, r)
	}
	// A wider tolerance forgives it.
	if f := merged(in, 0.25); f.Outliers != 0 {
		t.Errorf("%d outliers at 25%% tolerance, want 0", f.Outliers)
	}
}

func TestMergeNeverGroupsRunsThatAskedForDifferentThings(t *testing.T) {
	a, b, c, d := node(t, "a", 1), node(t, "b", 1), node(t, "c", 1), node(t, "d", 1)
	b.Run.Config.Touch = result.TouchFill
	c.Run.Config.MaxAllocs++
	d.Run.Devices[0].DriverVersion = "2.0"
	f := merged([]FleetInput{a, b, c, d}, 0.1)
	if len(f.Groups) != 4 || f.Outliers != 0 {
		t.Fatalf("touch, budget and driver differ: want 4 groups and no outlier, got %d groups, %d outliers", len(f.Groups), f.Outliers)
	}
	// The size is part of every job: a job at another size is another row, never another node of the same job.
	e := node(t, "e", 1)
	for i := range e.Run.Jobs {
		e.Run.Jobs[i].SizeBytes *= 2
	}
	f = merged([]FleetInput{a, e}, 0.1)
	for _, j := range f.Groups[0].Jobs {
		if len(j.Rows) != 1 {
			t.Errorf("%s at %d: %d rows, want 1", j.Strategy, j.SizeBytes, len(j.Rows))
		}
	}
}

func TestMergeOutcomeAndCostOutliers(t *testing.T) {
	in := []FleetInput{node(t, "a", 1), node(t, "b", 1), node(t, "c", 1)}
	st := &in[2].Run.Jobs[0]
	st.Outcome, st.FirstFailure, st.Signal = result.OutcomeCrashed, nil, "SIGSEGV"
	size := float64(in[1].Run.Jobs[1].SizeBytes)
	in[1].Run.Jobs[1].HostBytesPerBuffer += 0.5 * size // half a buffer more host memory per buffer
	for i := range in {
		in[i].Run.Jobs[1].Fit = &result.Fit{OK: true}
	}
	f := merged(in, 0.1)
	if r, j := rowOf(f, st.Strategy, "c"), fleetJobOf(f, st.Strategy); r == nil || !r.Outlier || r.Outcome != result.OutcomeCrashed || j.Outcome == result.OutcomeCrashed {
		t.Errorf("a crash among failures must be an outlier: %+v", r)
	}
	cost := in[1].Run.Jobs[1]
	if r, j := rowOf(f, cost.Strategy, "b"), fleetJobOf(f, cost.Strategy); r == nil || !r.Outlier || r.HostCost == nil || j.MedianHostCost == nil ||
		!CostMoved(*r.HostCost, *j.MedianHostCost, 0.1, cost.SizeBytes) || r.AllocationsOK != cost.AllocationsOK {
		t.Errorf("a node that costs half a buffer more per buffer must be an outlier: %+v", r)
	}
	if f.Outliers != 2 {
		t.Errorf("%d outliers, want 2", f.Outliers)
	}
}

// A node that wrote its default variant "default" is the same job as the nodes that wrote "": one row
// each, in one job named "default".
func TestMergeKeysTheDefaultVariantOnce(t *testing.T) {
	in := []FleetInput{node(t, "a", 1), node(t, "b", 1)}
	for i := range in[1].Run.Jobs {
		in[1].Run.Jobs[i].Variant = result.DefaultVariant
	}
	f := merged(in, 0.1)
	for _, j := range f.Groups[0].Jobs {
		if len(j.Rows) != 2 || j.Variant != result.DefaultVariant {
			t.Errorf("%s: %d rows under variant %q, want 2 under %q", j.Strategy, len(j.Rows), j.Variant, result.DefaultVariant)
		}
	}
}

// The merger, fed one node at a time in any order, finds the groups, medians, ranges and outliers the
// inputs themselves give, and the same fleet as Merge of the whole list.
func TestFleetMergerAgreesWithItsInputs(t *testing.T) {
	scales := map[string][]float64{"1.0": {1, 1.02, 0.99, 1.01, 0.7}, "2.0": {1, 1, 1.03, 0.98}}
	in := inputs(fixture.Nodes(t, scales))
	want := expanded(Merge(slices.Clone(in), 0.1))
	for seed := range uint64(5) {
		shuffled := slices.Clone(in)
		rand.New(rand.NewPCG(seed, 0)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		var m FleetMerger
		for _, n := range shuffled {
			m.Add(NodeOf(n.Source, n.Run))
		}
		if m.Results() != len(in) {
			t.Fatalf("Results %d, want %d", m.Results(), len(in))
		}
		if got := expanded(m.Fleet(0.1)); !reflect.DeepEqual(got, want) {
			t.Fatalf("order %d: the merger's fleet differs from Merge's", seed)
		}
	}
	if want.Results != len(in) || len(want.Groups) != len(scales) {
		t.Fatalf("%d results in %d groups, want %d in %d", want.Results, len(want.Groups), len(in), len(scales))
	}
	outliers := 0
	for _, g := range want.Groups {
		if g.Nodes != len(scales[g.DriverVersion]) || len(g.Jobs) != len(in[0].Run.Jobs) {
			t.Errorf("driver %s: %d nodes and %d jobs, want %d and %d", g.DriverVersion, g.Nodes, len(g.Jobs), len(scales[g.DriverVersion]), len(in[0].Run.Jobs))
		}
		for _, j := range g.Jobs {
			outliers += agreesWithInputs(t, g.DriverVersion, &j, in)
		}
	}
	if want.Outliers != outliers || outliers == 0 {
		t.Errorf("%d outliers, the inputs give %d (and must give some)", want.Outliers, outliers)
	}
}

// agreesWithInputs checks one merged job against the counts its inputs hold, and returns how many of its
// nodes the inputs make outliers.
func agreesWithInputs(t *testing.T, driver string, j *FleetJob, in []FleetInput) int {
	t.Helper()
	var counts []float64
	for _, in := range in {
		for _, s := range in.Run.Jobs {
			if s.Strategy == j.Strategy && in.Run.Devices[0].DriverVersion == driver {
				counts = append(counts, float64(s.AllocationsOK))
			}
		}
	}
	med := Median(counts)
	if j.MedianAllocs != med || float64(j.MinAllocs) != slices.Min(counts) || float64(j.MaxAllocs) != slices.Max(counts) || len(j.Rows) != len(counts) {
		t.Errorf("%s %s: median %v range %d-%d rows %d; the inputs give %v, %v-%v, %d", driver, j.Strategy,
			j.MedianAllocs, j.MinAllocs, j.MaxAllocs, len(j.Rows), med, slices.Min(counts), slices.Max(counts), len(counts))
	}
	outliers := 0
	for _, r := range j.Rows {
		off := math.Abs(float64(r.AllocationsOK)-med) > 0.1*med
		if r.Outlier != off {
			t.Errorf("%s %s on %s: %d against %v, outlier %v (%s)", driver, j.Strategy, r.Node, r.AllocationsOK, med, r.Outlier, r.Why)
		}
		if off {
			outliers++
		}
	}
	return outliers
}

// What a merge keeps of a result can reach nothing of the run: no struct of the result model, so neither
// the samples nor the environment, and a 100,000-node merge holds rows, not files.
func TestWhatAMergeKeepsHoldsNoRun(t *testing.T) {
	model := reflect.TypeFor[result.Run]().PkgPath()
	seen := map[reflect.Type]bool{}
	var walk func(path string, ty reflect.Type)
	walk = func(path string, ty reflect.Type) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		if ty.PkgPath() == model && ty.Kind() != reflect.String {
			t.Errorf("%s is a %s: a merge would keep part of a run", path, ty)
			return
		}
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(path+"[]", ty.Elem())
		case reflect.Map:
			walk(path+"{key}", ty.Key())
			walk(path+"{}", ty.Elem())
		case reflect.Struct:
			for i := range ty.NumField() {
				walk(path+"."+ty.Field(i).Name, ty.Field(i).Type)
			}
		case reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
			t.Errorf("%s is a %s, which could hold anything", path, ty)
		}
	}
	walk("FleetNode", reflect.TypeFor[FleetNode]())
	walk("FleetMerger", reflect.TypeFor[FleetMerger]())
	walk("Fleet", reflect.TypeFor[Fleet]())
	if !seen[reflect.TypeFor[FleetRow]()] {
		t.Error("the walk never reached FleetRow")
	}
}

// Merge reads files with the lean scan (result.Loader.LoadLean): on generated runs of every shape, with
// and without fits, it gives what the full load gives, the same rows or the same error.
func TestLeanLoadGivesTheRowsOfTheFullLoad(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(43, 2))
	var lean result.Loader
	loaded := 0
	for i := range 300 {
		r := fixture.Random(rng)
		if i%2 == 1 {
			r = fixture.RandomSweep(rng)
		}
		r.SchemaVersion, r.Tool.Name, r.Environment.Hostname = result.SchemaVersion, "clmemprobe", fmt.Sprintf("node-%d", i)
		for k := range r.Jobs {
			if rng.IntN(3) == 0 {
				r.Jobs[k].Fit = result.JudgeFit(rng.IntN(20), 0, uint64(rng.IntN(100)), r.Jobs[k].AllocationsOK)
			}
		}
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("%d.json", i))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		want, werr := result.Load(path)
		got, gerr := lean.LoadLean(path)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Fatalf("run %d: the full load says %v, the lean one %v", i, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(NodeOf(path, want), NodeOf(path, got)) {
			t.Fatalf("run %d: the lean load gives other rows than the full load", i)
		}
		if werr == nil {
			loaded++
		}
	}
	if loaded < 100 {
		t.Errorf("%d of 300 generated runs loaded; the test needs results to compare rows", loaded)
	}
}
