package result

import (
	"reflect"
	"slices"
	"testing"
)

// Settings are listed as KEY=VALUE in key order, whatever order the map gives them in; none gives none.
func TestAssignmentsAreInKeyOrder(t *testing.T) {
	got := Assignments(map[string]string{"ZED": "1", "ALPHA": "a=b", "MID": ""})
	if want := []string{"ALPHA=a=b", "MID=", "ZED=1"}; !slices.Equal(got, want) {
		t.Errorf("Assignments = %q, want %q", got, want)
	}
	if got := Assignments(nil); len(got) != 0 {
		t.Errorf("Assignments(nil) = %q, want none", got)
	}
}

// The default variant is "" on a job and "default" everywhere else; the two conversions are inverse, and
// other names pass through both unchanged.
func TestVariantNamesConvertBetweenJobAndKey(t *testing.T) {
	for _, c := range []struct {
		name      string
		key, wire string
	}{
		{"the default", DefaultVariant, ""},
		{"a named variant", "big-pool", "big-pool"},
	} {
		if got := JobVariant(c.key); got != c.wire {
			t.Errorf("%s: JobVariant(%q) = %q, want %q", c.name, c.key, got, c.wire)
		}
		if got := VariantName(c.wire); got != c.key {
			t.Errorf("%s: VariantName(%q) = %q, want %q", c.name, c.wire, got, c.key)
		}
		if got := VariantName(JobVariant(c.key)); got != c.key {
			t.Errorf("%s: VariantName(JobVariant(%q)) = %q, want it back", c.name, c.key, got)
		}
	}
}

// A run's sizes, variants, strategies and flags are each listed once, in the order the jobs first ran them.
func TestRunListsDistinctValuesInRunOrder(t *testing.T) {
	r := &Run{Jobs: []JobResult{
		{Strategy: PerDevice, SizeBytes: 4096, Variant: "", Flags: ""},
		{Strategy: Shared, SizeBytes: 1 << 20, Variant: "v2", Flags: "use-host-ptr"},
		{Strategy: PerDevice, SizeBytes: 1 << 20, Variant: "", Flags: "use-host-ptr"},
		{Strategy: MigrateFirst, SizeBytes: 4096, Variant: "v2", Flags: ""},
	}}
	if got, want := r.Sizes(), []uint64{4096, 1 << 20}; !slices.Equal(got, want) {
		t.Errorf("Sizes() = %v, want %v", got, want)
	}
	if got, want := r.VariantNames(), []string{"", "v2"}; !slices.Equal(got, want) {
		t.Errorf("VariantNames() = %q, want %q", got, want)
	}
	if got, want := r.StrategyNames(), []Strategy{PerDevice, Shared, MigrateFirst}; !slices.Equal(got, want) {
		t.Errorf("StrategyNames() = %v, want %v", got, want)
	}
	if got, want := r.FlagNames(), []string{"", "use-host-ptr"}; !slices.Equal(got, want) {
		t.Errorf("FlagNames() = %q, want %q", got, want)
	}
	if empty := (&Run{}); len(empty.Sizes()) != 0 || len(empty.StrategyNames()) != 0 {
		t.Errorf("a run without jobs lists sizes %v and strategies %v", empty.Sizes(), empty.StrategyNames())
	}
}

// A run has flags when a job recorded any or the configuration asked for flag sets; a run of the default
// read-write alone has none.
func TestHasFlags(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Run
		want bool
	}{
		{"default only", Run{Jobs: []JobResult{{Strategy: Shared}, {Strategy: PerDevice}}}, false},
		{"a job's flags", Run{Jobs: []JobResult{{Strategy: Shared}, {Strategy: Shared, Flags: "read-only"}}}, true},
		{"configured flag sets, no job yet", Run{Config: Config{FlagSets: []string{"use-host-ptr"}}}, true},
		{"no jobs at all", Run{}, false},
	} {
		if got := c.r.HasFlags(); got != c.want {
			t.Errorf("%s: HasFlags() = %v, want %v", c.name, got, c.want)
		}
	}
}

// The fit rule wants FitMinSamples samples spanning FitMinBuffers buffers and half of those reached; a
// fit that fails says why, and the span is never negative.
func TestJudgeFitAppliesTheFitRule(t *testing.T) {
	for _, c := range []struct {
		name                  string
		samples               int
		lo, hi, reached, span uint64
		ok                    bool
	}{
		{"enough of everything", FitMinSamples, 0, 100, 100, 100, true},
		{"one sample short", FitMinSamples - 1, 0, 100, 100, 100, false},
		{"span one buffer short", FitMinSamples, 10, 10 + FitMinBuffers - 1, FitMinBuffers, FitMinBuffers - 1, false},
		{"span exactly the minimum", FitMinSamples, 10, 10 + FitMinBuffers, FitMinBuffers, FitMinBuffers, true},
		{"span exactly half of those reached", FitMinSamples, 0, 500, 1000, 500, true},
		{"span under half of those reached", FitMinSamples, 0, 499, 1000, 499, false},
		{"samples out of order", FitMinSamples, 50, 10, 100, 0, false},
	} {
		f := JudgeFit(c.samples, c.lo, c.hi, c.reached)
		if f.OK != c.ok || f.Samples != c.samples || f.Spanned != c.span {
			t.Errorf("%s: %+v, want ok %v over %d samples spanning %d", c.name, *f, c.ok, c.samples, c.span)
		}
		if f.OK == (f.Why != "") {
			t.Errorf("%s: ok %v with reason %q: a failed fit says why, a good one does not", c.name, f.OK, f.Why)
		}
	}
}

// A recorded fit is kept; a result written before fits were judged is judged from its kept samples: their
// count, the span from the lowest to the highest index, and the buffers the job reached.
func TestJudgedFitJudgesOlderResults(t *testing.T) {
	recorded := &Fit{Samples: 3, OK: true}
	if got := (&JobResult{Fit: recorded}).JudgedFit(); got != recorded {
		t.Errorf("JudgedFit() = %+v, want the recorded fit", got)
	}
	var smp []Sample
	for _, i := range []uint64{40, 5, 10, 20, 30, 60, 50, 45} {
		smp = append(smp, Sample{Index: i})
	}
	s := &JobResult{Samples: smp, AllocationsOK: 100}
	want := JudgeFit(len(smp), 5, 60, 100)
	if got := s.JudgedFit(); !reflect.DeepEqual(got, want) {
		t.Errorf("JudgedFit() = %+v, want %+v (8 samples from 5 to 60 of 100)", got, want)
	}
	if got := s.JudgedFit(); got.Spanned != 55 || !got.OK {
		t.Errorf("JudgedFit() = %+v, want a good fit spanning 55 buffers", got)
	}
	if got := (&JobResult{}).JudgedFit(); got.OK || got.Samples != 0 {
		t.Errorf("a job without samples judged %+v, want no fit", got)
	}
}

// The replication factor counts only where device memory was placed: absent or below PlacedFraction it is
// no replication at all.
func TestReplicationNeedsPlacedMemory(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name   string
		factor *float64
		want   float64
		ok     bool
	}{
		{"absent", nil, 0, false},
		{"near zero, from before the rule", f(0.001), 0, false},
		{"at the placed fraction", f(PlacedFraction), PlacedFraction, true},
		{"one replica per device of two", f(2), 2, true},
	} {
		got, ok := (&JobResult{ReplicationFactor: c.factor}).Replication()
		if got != c.want || ok != c.ok {
			t.Errorf("%s: Replication() = %g, %v; want %g, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// WithFindings gives a copy holding the findings and leaves the run it copied as it was, strategies
// included.
func TestWithFindingsLeavesTheRunAlone(t *testing.T) {
	r := &Run{Jobs: []JobResult{{Strategy: Shared}}, Judgement: Judgement{Verdict: []string{"old"}}}
	cp := r.WithFindings([]Finding{{Kind: FindingHeadline, Sentence: "new"}}, []JobLimit{{Limit: LimitContext}})
	if cp == r || !slices.Equal(cp.Verdict, []string{"new"}) || cp.Jobs[0].Limit != LimitContext {
		t.Errorf("copy: verdict %q limit %q, want the new findings in a copy", cp.Verdict, cp.Jobs[0].Limit)
	}
	if !slices.Equal(r.Verdict, []string{"old"}) || r.Findings != nil || r.Jobs[0].Limit != "" {
		t.Errorf("run: verdict %q findings %v limit %q, want it as it was", r.Verdict, r.Findings, r.Jobs[0].Limit)
	}
}

// A strategy's budget is MaxAllocs, or MaxBytes divided by the size where that is smaller; a byte budget
// of 0 is none, and a size of 0 leaves the count alone.
func TestBudgetTakesTheSmallerLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		c    Config
		size uint64
		want uint64
	}{
		{"bytes bind", Config{MaxAllocs: 100000, MaxBytes: 1 << 30}, 1 << 20, (1 << 30) / (1 << 20)},
		{"count binds", Config{MaxAllocs: 100, MaxBytes: 1 << 30}, 1 << 20, 100},
		{"no byte budget", Config{MaxAllocs: 2000}, 1 << 20, 2000},
		{"size of 0", Config{MaxAllocs: 7, MaxBytes: 10}, 0, 7},
		{"buffer beyond the byte budget", Config{MaxAllocs: 7, MaxBytes: 10}, 11, 0},
	} {
		if got := c.c.Budget(c.size); got != c.want {
			t.Errorf("%s: Budget(%d) = %d, want %d", c.name, c.size, got, c.want)
		}
	}
}

// Devices are named by model, a repeated model once with its count, in the order models first appear;
// their driver versions are listed each once.
func TestDeviceModelAndDriverVersions(t *testing.T) {
	h200 := Device{Name: "NVIDIA H200", DriverVersion: "550.1"}
	a100 := Device{Name: "NVIDIA A100", DriverVersion: "535.2"}
	for _, c := range []struct {
		name           string
		devs           []Device
		model, drivers string
	}{
		{"none", nil, "no devices", ""},
		{"one", []Device{h200}, "NVIDIA H200", "550.1"},
		{"two of a kind", []Device{h200, h200}, "2x NVIDIA H200", "550.1"},
		{"mixed", []Device{h200, a100}, "NVIDIA H200, NVIDIA A100", "550.1, 535.2"},
		{"interleaved", []Device{a100, h200, a100}, "2x NVIDIA A100, NVIDIA H200", "535.2, 550.1"},
	} {
		if got := DeviceModel(c.devs); got != c.model {
			t.Errorf("%s: DeviceModel = %q, want %q", c.name, got, c.model)
		}
		if got := DriverVersions(c.devs); got != c.drivers {
			t.Errorf("%s: DriverVersions = %q, want %q", c.name, got, c.drivers)
		}
	}
}

// A snapshot keeps the jobs it was taken with while the run goes on appending.
func TestSnapshotKeepsItsJobs(t *testing.T) {
	r := &Run{Jobs: make([]JobResult, 1, 4)}
	snap := r.Snapshot()
	r.Jobs = append(r.Jobs, JobResult{Strategy: Shared})
	r.Jobs[0].AllocationsOK = 9
	if len(snap.Jobs) != 1 || snap.Jobs[0].AllocationsOK != 0 {
		t.Errorf("the snapshot's jobs became %+v", snap.Jobs)
	}
}
