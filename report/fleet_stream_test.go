package report

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/result"
)

// fleetOf is a fleet of the fixture: per driver version, one node per scale of its thresholds.
func fleetOf(t *testing.T, scales map[string][]float64) []FleetInput {
	t.Helper()
	var in []FleetInput
	for _, driver := range slices.Sorted(maps.Keys(scales)) {
		for i, s := range scales[driver] {
			n := node(t, fmt.Sprintf("%s-n%02d", driver, i), s)
			for d := range n.Run.Devices {
				n.Run.Devices[d].DriverVersion = driver
			}
			in = append(in, n)
		}
	}
	return in
}

// medianOf is the median of the counts, the middle one or the mean of the middle two.
func medianOf(xs []uint64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return float64(s[len(s)/2])
	}
	return float64(s[len(s)/2-1]+s[len(s)/2]) / 2
}

// The merger, fed one node at a time in any order, finds the groups, medians, ranges and outliers the
// inputs themselves give, and the same fleet as Merge of the whole list.
func TestFleetMergerAgreesWithItsInputs(t *testing.T) {
	scales := map[string][]float64{"1.0": {1, 1.02, 0.99, 1.01, 0.7}, "2.0": {1, 1, 1.03, 0.98}}
	in := fleetOf(t, scales)
	want := Merge(slices.Clone(in), 0.1)
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
		if got := m.Fleet(0.1); !reflect.DeepEqual(got, want) {
			t.Fatalf("order %d: the merger's fleet differs from Merge's", seed)
		}
	}
	if want.Results != len(in) || len(want.Groups) != len(scales) {
		t.Fatalf("%d results in %d groups, want %d in %d", want.Results, len(want.Groups), len(in), len(scales))
	}
	base := loadFixture(t)
	outliers := 0
	for _, g := range want.Groups {
		if g.Nodes != len(scales[g.DriverVersion]) || len(g.Jobs) != len(base.Strategies) {
			t.Errorf("driver %s: %d nodes and %d jobs, want %d and %d", g.DriverVersion, g.Nodes, len(g.Jobs), len(scales[g.DriverVersion]), len(base.Strategies))
		}
		for _, j := range g.Jobs {
			var counts []uint64
			for _, in := range in {
				for _, s := range in.Run.Strategies {
					if s.Strategy == j.Strategy && in.Run.Devices[0].DriverVersion == g.DriverVersion {
						counts = append(counts, s.AllocationsOK)
					}
				}
			}
			med := medianOf(counts)
			if j.MedianAllocs != med || j.MinAllocs != slices.Min(counts) || j.MaxAllocs != slices.Max(counts) || len(j.Rows) != len(counts) {
				t.Errorf("%s %s: median %v range %d-%d rows %d; the inputs give %v, %d-%d, %d", g.DriverVersion, j.Strategy,
					j.MedianAllocs, j.MinAllocs, j.MaxAllocs, len(j.Rows), med, slices.Min(counts), slices.Max(counts), len(counts))
			}
			for _, r := range j.Rows {
				off := math.Abs(float64(r.AllocationsOK)-med) > 0.1*med
				if r.Outlier != off {
					t.Errorf("%s %s on %s: %d against %v, outlier %v (%s)", g.DriverVersion, j.Strategy, r.Node, r.AllocationsOK, med, r.Outlier, r.Why)
				}
				if off {
					outliers++
				}
			}
		}
	}
	if want.Outliers != outliers || outliers == 0 {
		t.Errorf("%d outliers, the inputs give %d (and must give some)", want.Outliers, outliers)
	}
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

// json is written a group, a job and a row at a time, and reads byte for byte as the whole document
// encoded at once: merged fleets, an empty one, and lists that are empty or null.
func TestFleetJSONIsTheDocumentEncodedWhole(t *testing.T) {
	in := fleetOf(t, map[string][]float64{"1.0": {1, 1.02, 0.5}, "2.0": {1}})
	st := &in[1].Run.Strategies[1]
	st.Fit, st.HostBytesPerBuffer = &result.Fit{OK: true}, 0.6*float64(st.SizeBytes)
	merged := Merge(in, 0.1)
	odd := &Fleet{Tolerance: 0.5, Results: 2, Groups: []FleetGroup{{Platform: "p", Nodes: 1}, {Platform: "q", Jobs: []FleetJob{{Strategy: result.Shared}}}}}
	for name, f := range map[string]*Fleet{"merged": merged, "empty": Merge(nil, 0.1), "null and empty lists": odd} {
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

// A job of more nodes than the limit shows its outliers and a count of the others; --all (AllRows) shows
// every node, and a job within the limit is shown whole either way.
func TestFleetTableShowsOutliersAndCountsTheRest(t *testing.T) {
	scales := make([]float64, FleetRowLimit+15)
	for i := range scales {
		scales[i] = 1 + 0.001*float64(i%5)
	}
	scales[7], scales[31] = 0.5, 0.6
	f := Merge(fleetOf(t, map[string][]float64{"1.0": scales}), 0.1)
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
		if strings.Contains(s, "1.0-n03") || !strings.Contains(all.String(), "1.0-n03") {
			t.Errorf("%s: a healthy node is shown only with AllRows", format)
		}
		if i, k := strings.Index(s, "1.0-n31"), strings.Index(s, healthy); i < 0 || !strings.Contains(s, "1.0-n07") || i > k {
			t.Errorf("%s: the outliers must come first, then the count:\n%s", format, s)
		}
		if strings.Contains(all.String(), "healthy nodes") {
			t.Errorf("%s with AllRows still counts nodes instead of showing them", format)
		}
	}
	small := Merge(fleetOf(t, map[string][]float64{"1.0": scales[:FleetRowLimit]}), 0.1)
	var short, all bytes.Buffer
	_ = RenderWith(&short, "table", small, Options{})
	_ = RenderWith(&all, "table", small, Options{AllRows: true})
	if short.String() != all.String() {
		t.Errorf("a job of %d nodes must be shown whole:\n%s", FleetRowLimit, short.String())
	}
}

func TestGroupedCounts(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 9996: "9,996", 100000: "100,000", 1234567: "1,234,567"} {
		if got := grouped(n); got != want {
			t.Errorf("grouped(%d) = %q, want %q", n, got, want)
		}
	}
}
