package comparison

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// merged is Merge with every job's rows made whole, for tests that look at rows.
func merged(in []FleetInput, tol float64) *Fleet { return expanded(Merge(in, tol)) }

// expanded is f with every job's rows in Rows, as a fleet read back from JSON has them: what a renderer
// sees through All, with nothing of the compact store left to compare.
func expanded(f *Fleet) *Fleet {
	out := *f
	out.Groups = slices.Clone(f.Groups)
	for gi := range out.Groups {
		g := &out.Groups[gi]
		g.Jobs = slices.Clone(g.Jobs)
		for ji := range g.Jobs {
			j := &g.Jobs[ji]
			j.Rows = slices.Collect(j.All())
			j.rows, j.group = nil, nil
		}
	}
	return &out
}

// referenceMerge is merge as it was before the rows were kept compact (fe3862d): every node's rows as
// FleetRows, sorted and judged at the end. The compact store must give exactly its fleet.
func referenceMerge(in []FleetInput, tol float64) *Fleet {
	f := &Fleet{Tolerance: tol, Results: len(in), Groups: []FleetGroup{}}
	groups, jobs := map[groupKey]*FleetGroup{}, map[groupKey]map[Key]*FleetJob{}
	for _, x := range in {
		n := NodeOf(x.Source, x.Run)
		g := groups[n.group]
		if g == nil {
			gk := n.group
			g = &FleetGroup{Platform: gk.platform, DeviceModel: gk.run.Devices, DriverVersion: gk.driver, Touch: gk.run.Touch, MaxAllocs: gk.maxAllocs, MaxBytes: gk.maxBytes}
			groups[gk], jobs[gk] = g, map[Key]*FleetJob{}
		}
		g.Nodes++
		for _, nj := range n.jobs {
			j := jobs[n.group][nj.key]
			if j == nil {
				j = &FleetJob{Strategy: nj.key.Strategy, SizeBytes: nj.key.Size, Variant: nj.key.Variant, Flags: nj.key.Flags}
				jobs[n.group][nj.key] = j
			}
			j.Rows = append(j.Rows, nj.row)
		}
	}
	keys := slices.Collect(maps.Keys(groups))
	slices.SortFunc(keys, func(a, b groupKey) int {
		return cmp.Or(cmp.Compare(a.run.Devices, b.run.Devices), cmp.Compare(a.driver, b.driver), cmp.Compare(a.platform, b.platform),
			cmp.Compare(a.run.Touch, b.run.Touch), cmp.Compare(a.maxAllocs, b.maxAllocs), cmp.Compare(a.maxBytes, b.maxBytes), cmp.Compare(a.run.Flags, b.run.Flags))
	})
	for _, gk := range keys {
		g := groups[gk]
		for _, k := range slices.SortedFunc(maps.Keys(jobs[gk]), order) {
			j := jobs[gk][k]
			f.Outliers += referenceJudge(j, tol)
			g.Jobs = append(g.Jobs, *j)
		}
		f.Groups = append(f.Groups, *g)
	}
	return f
}

// referenceJudge is fe3862d's FleetJob.judge and summarize.
func referenceJudge(j *FleetJob, tol float64) int {
	slices.SortFunc(j.Rows, func(a, b FleetRow) int { return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Source, b.Source)) })
	var allocs, hosts, devices []float64
	counts := map[result.Outcome]int{}
	j.MinAllocs = math.MaxUint64
	for _, r := range j.Rows {
		allocs = append(allocs, float64(r.AllocationsOK))
		j.MinAllocs, j.MaxAllocs = min(j.MinAllocs, r.AllocationsOK), max(j.MaxAllocs, r.AllocationsOK)
		if r.HostCost != nil {
			hosts = append(hosts, *r.HostCost)
		}
		if r.DeviceCost != nil {
			devices = append(devices, *r.DeviceCost)
		}
		counts[r.Outcome]++
	}
	j.MedianAllocs = Median(allocs)
	if j.MedianAllocs > 0 {
		j.Spread = float64(j.MaxAllocs-j.MinAllocs) / j.MedianAllocs
	}
	j.MedianHostCost, j.MedianDeviceCost = medianOrNil(hosts), medianOrNil(devices)
	for _, o := range result.Outcomes {
		if counts[o] > counts[j.Outcome] {
			j.Outcome = o
		}
	}
	n := 0
	for i := range j.Rows {
		r := &j.Rows[i]
		if why := j.outlier(r, tol); len(why) > 0 {
			r.Outlier, r.Why = true, strings.Join(why, "; ")
			n++
		}
	}
	return n
}

// On generated fleets (random runs of every shape, sweeps, fits or none, outcomes, shared host names, nodes
// of the fixture scaled into outliers, a count past four billion) and at several tolerances, the compact
// store gives the fleet of the FleetRows it replaced: the same groups, jobs, medians and rows, in order.
func TestCompactMergeGivesTheRowsOfTheRowMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 30 {
		in := generatedFleet(t, rng)
		for _, tol := range []float64{0, 0.005, 0.1, 0.5} {
			want := referenceMerge(in, tol)
			var m FleetMerger
			for _, i := range rng.Perm(len(in)) {
				m.Add(NodeOf(in[i].Source, in[i].Run))
			}
			got := m.Fleet(tol)
			if got.Outliers != want.Outliers {
				t.Fatalf("round %d, tolerance %v: %d outliers, the row merge finds %d", round, tol, got.Outliers, want.Outliers)
			}
			if e := expanded(got); !reflect.DeepEqual(e, want) {
				t.Fatalf("round %d, tolerance %v: the compact merge differs from the row merge:\n%s", round, tol, firstDifference(e, want))
			}
			for gi := range got.Groups {
				for ji := range got.Groups[gi].Jobs {
					j, w := &got.Groups[gi].Jobs[ji], &want.Groups[gi].Jobs[ji]
					if j.Count() != len(w.Rows) || len(slices.Collect(j.Outliers())) != countOutliers(w.Rows) {
						t.Fatalf("round %d: job %s counts %d rows, %d outliers; want %d, %d", round, j.Strategy, j.Count(),
							len(slices.Collect(j.Outliers())), len(w.Rows), countOutliers(w.Rows))
					}
				}
			}
		}
	}
}

// generatedFleet is a few dozen results: random runs, the fixture's node scaled, some sharing host names.
func generatedFleet(t *testing.T, rng *rand.Rand) []FleetInput {
	var in []FleetInput
	for i := range 10 + rng.IntN(30) {
		r := fixture.Random(rng)
		if rng.IntN(3) == 0 {
			r = fixture.RandomSweep(rng)
		}
		r.Environment.Hostname = fmt.Sprintf("n%d", rng.IntN(12)) // names repeat: rows then part by file
		for k := range r.Jobs {
			if rng.IntN(3) == 0 {
				r.Jobs[k].Fit = &result.Fit{OK: true}
				r.Jobs[k].HostBytesPerBuffer = rng.Float64() * 1e6
				r.Jobs[k].DeviceBytesPerBuffer = map[string]float64{"0": rng.Float64() * 1e6}
			}
			if rng.IntN(40) == 0 {
				r.Jobs[k].AllocationsOK = math.MaxUint32 + uint64(rng.IntN(1000))
			}
		}
		in = append(in, FleetInput{Source: fmt.Sprintf("f/%d/run.json", i), Run: r})
	}
	scales := []float64{1, 1, 1.02, 0.98, 0.7, 1.3, 1}
	for i := range 5 + rng.IntN(10) {
		r := fixture.Node(t, fmt.Sprintf("s%d", rng.IntN(8)), scales[rng.IntN(len(scales))])
		in = append(in, FleetInput{Source: fmt.Sprintf("s/%d/run.json", i), Run: r})
	}
	return in
}

func countOutliers(rows []FleetRow) int {
	n := 0
	for _, r := range rows {
		if r.Outlier {
			n++
		}
	}
	return n
}

// firstDifference names the first row or job where two fleets differ, for a failure one can read.
func firstDifference(got, want *Fleet) string {
	if len(got.Groups) != len(want.Groups) {
		return fmt.Sprintf("%d groups, want %d", len(got.Groups), len(want.Groups))
	}
	for gi := range got.Groups {
		g, w := got.Groups[gi], want.Groups[gi]
		if len(g.Jobs) != len(w.Jobs) {
			return fmt.Sprintf("group %d: %d jobs, want %d", gi, len(g.Jobs), len(w.Jobs))
		}
		for ji := range g.Jobs {
			a, b := g.Jobs[ji], w.Jobs[ji]
			for ri := range min(len(a.Rows), len(b.Rows)) {
				if !reflect.DeepEqual(a.Rows[ri], b.Rows[ri]) {
					return fmt.Sprintf("group %d job %s row %d: %+v, want %+v", gi, a.Strategy, ri, a.Rows[ri], b.Rows[ri])
				}
			}
			a.Rows, b.Rows = nil, nil
			if !reflect.DeepEqual(a, b) {
				return fmt.Sprintf("group %d job %d: %+v, want %+v", gi, ji, a, b)
			}
		}
	}
	return "the fleets' heads"
}

func TestSourcesGiveBackEachPathByIndex(t *testing.T) {
	var s Sources
	paths := []string{"a/run.json", "", "group-0001/node-0000002/run.json", ""}
	for i, p := range paths {
		if got := s.Add(p); got != i {
			t.Fatalf("Add(%q) = %d, want %d", p, got, i)
		}
	}
	if s.Len() != len(paths) {
		t.Fatalf("Len() = %d, want %d", s.Len(), len(paths))
	}
	for i, p := range paths {
		if got := s.Path(i); got != p {
			t.Errorf("Path(%d) = %q, want %q", i, got, p)
		}
	}
}
