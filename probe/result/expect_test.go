package result

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// writeJSON writes v as JSON into a file of dir and returns its path.
func writeJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, name, b)
}

// writeFile writes b into a file of dir and returns its path.
func writeFile(t *testing.T, dir, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Expectations taken from a run carry its head, its devices named as DeviceModel and DriverVersions name
// them, its budget, and one job per strategy result in order with how it ended.
func TestExpectationsFromTakesWhatACheckNeeds(t *testing.T) {
	r := loadFixture(t)
	e := ExpectationsFrom(r)
	if e.Kind != ExpectationsKind || e.Version != ExpectationsVersion || e.RecordedBy != r.Tool || e.RecordedFrom != r.Started {
		t.Errorf("head %q v%d by %+v from %q, want the kind, version, tool and start of the run", e.Kind, e.Version, e.RecordedBy, e.RecordedFrom)
	}
	if e.Platform != r.Platform.Name || e.DeviceModel != DeviceModel(r.Devices) || e.DriverVersion != DriverVersions(r.Devices) {
		t.Errorf("platform %q devices %q driver %q, want the run's", e.Platform, e.DeviceModel, e.DriverVersion)
	}
	if !slices.Equal(e.Devices, r.Config.Devices) || e.Touch != r.Config.Touch || e.MaxAllocs != r.Config.MaxAllocs || e.MaxBytes != r.Config.MaxBytes {
		t.Errorf("devices %v touch %q budget %d/%d, want the run's configuration", e.Devices, e.Touch, e.MaxAllocs, e.MaxBytes)
	}
	if len(e.Jobs) != len(r.Jobs) {
		t.Fatalf("%d jobs for %d strategy results", len(e.Jobs), len(r.Jobs))
	}
	for i, j := range e.Jobs {
		s := r.Jobs[i]
		want := ExpectedJob{Strategy: s.Strategy, SizeBytes: s.SizeBytes, Variant: s.Variant, Flags: s.Flags, Outcome: s.Outcome,
			AllocationsOK: s.AllocationsOK, Seconds: s.Seconds}
		if j != want {
			t.Errorf("job %d = %+v, want %+v", i, j, want)
		}
	}
	if !slices.Equal(e.Sizes(), r.Sizes()) || !slices.Equal(e.Strategies(), r.StrategyNames()) {
		t.Errorf("sizes %v strategies %v, want the run's %v %v", e.Sizes(), e.Strategies(), r.Sizes(), r.StrategyNames())
	}
	if empty := ExpectationsFrom(&Run{}); empty.Jobs == nil {
		t.Errorf("a run without jobs gives jobs null, want an empty list")
	}
}

// An expectations file reads back as it was written, and a run.json reads as the expectations taken from
// it.
func TestLoadExpectationsReadsBothKinds(t *testing.T) {
	dir := t.TempDir()
	want := ExpectationsFrom(loadFixture(t))
	got, err := LoadExpectations(writeJSON(t, dir, "expect.json", want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwant %+v", got, want)
	}
	fromRun, err := LoadExpectations(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromRun, want) {
		t.Errorf("from run.json %+v\nwant %+v", fromRun, want)
	}
}

// validExpectations are expectations every check passes: two jobs under the default variant.
func validExpectations() *Expectations {
	return &Expectations{Kind: ExpectationsKind, Version: ExpectationsVersion, Devices: []int{0, 1}, Touch: TouchNone, MaxAllocs: 100,
		Jobs: []ExpectedJob{{Strategy: Shared, SizeBytes: 1 << 20, Outcome: OutcomeCompleted, AllocationsOK: 100, Seconds: 1},
			{Strategy: PerDevice, SizeBytes: 1 << 20, Outcome: OutcomeFailed, AllocationsOK: 40, Seconds: 0.5}}}
}

// Expectations a check could not run or judge are refused with a *NotAResultError: another version, no
// jobs, a budget or device list out of range, words no run writes, a job under a variant the file does not
// set, figures beyond the budget.
func TestLoadExpectationsRefusesWhatACheckCannotRun(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(e *Expectations)
	}{
		{"another version", func(e *Expectations) { e.Version = ExpectationsVersion + 1 }},
		{"no jobs", func(e *Expectations) { e.Jobs = nil }},
		{"no budget", func(e *Expectations) { e.MaxAllocs = 0 }},
		{"a budget beyond exact counts", func(e *Expectations) { e.MaxAllocs = maxExact + 1 }},
		{"no devices", func(e *Expectations) { e.Devices = nil }},
		{"a negative device", func(e *Expectations) { e.Devices = []int{-1} }},
		{"an unknown touch", func(e *Expectations) { e.Touch = "poke" }},
		{"a bad variant name", func(e *Expectations) { e.Variants = []Variant{{Name: "a b"}} }},
		{"a setting that is no variable", func(e *Expectations) {
			e.Variants = []Variant{{Name: DefaultVariant}, {Name: "v", Settings: map[string]string{"1X": "y"}}}
		}},
		{"a job's variant not set", func(e *Expectations) { e.Jobs[1].Variant = "v" }},
		{"the default not set beside variants", func(e *Expectations) { e.Variants = []Variant{{Name: "v"}} }},
		{"an unknown strategy", func(e *Expectations) { e.Jobs[0].Strategy = "scatter" }},
		{"an unknown outcome", func(e *Expectations) { e.Jobs[0].Outcome = "fine" }},
		{"size 0", func(e *Expectations) { e.Jobs[0].SizeBytes = 0 }},
		{"a huge size", func(e *Expectations) { e.Jobs[0].SizeBytes = 1 << 62 }},
		{"more allocations than the budget", func(e *Expectations) { e.Jobs[0].AllocationsOK = e.MaxAllocs + 1 }},
		{"negative seconds", func(e *Expectations) { e.Jobs[0].Seconds = -1 }},
		{"seconds beyond a check", func(e *Expectations) { e.Jobs[0].Seconds = 1e7 }},
	} {
		e := validExpectations()
		c.edit(e)
		_, err := LoadExpectations(writeJSON(t, t.TempDir(), "expect.json", e))
		var nr *NotAResultError
		if !errors.As(err, &nr) {
			t.Errorf("%s: %v, want a NotAResultError", c.name, err)
		}
	}
	e := validExpectations()
	e.Variants = []Variant{{Name: DefaultVariant}, {Name: "v", Settings: map[string]string{"POCL_MEMORY_LIMIT": "1"}}}
	e.Jobs[1].Variant = "v"
	if _, err := LoadExpectations(writeJSON(t, t.TempDir(), "expect.json", e)); err != nil {
		t.Errorf("jobs under the default and a set variant: %v", err)
	}
}

// Files that are neither expectations nor a run, or are broken ones, are refused with a *NotAResultError
// and no panic: truncated JSON, another kind, an unknown field (a typo would go unnoticed), a run of
// another schema version, an empty file, a directory.
func TestLoadExpectationsRefusesHostileFiles(t *testing.T) {
	valid, err := json.Marshal(validExpectations())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		content []byte
	}{
		{"truncated", valid[:len(valid)/2]},
		{"not JSON", []byte("kind: clmemprobe-expectations")},
		{"an array", []byte(`[{"kind": "clmemprobe-expectations"}]`)},
		{"empty", nil},
		{"another kind", []byte(`{"kind": "something-else", "version": 1}`)},
		{"no kind", []byte(`{"version": 1, "jobs": []}`)},
		{"an unknown field", append([]byte(`{"max_alocs": 5, `), valid[1:]...)},
		{"a field of the wrong type", append([]byte(`{"max_allocs": "many", `), valid[1:]...)},
		{"a run of another schema", []byte(`{"schema_version": 2, "tool": {"name": "clmemprobe"}}`)},
		{"a run that does not check", []byte(`{"schema_version": 1, "tool": {"name": "clmemprobe"}, "strategies": [{"strategy": "x"}]}`)},
	} {
		_, err := LoadExpectations(writeFile(t, t.TempDir(), "expect.json", c.content))
		var nr *NotAResultError
		if !errors.As(err, &nr) {
			t.Errorf("%s: %v, want a NotAResultError", c.name, err)
		}
	}
	var nr *NotAResultError
	if _, err := LoadExpectations(t.TempDir()); !errors.As(err, &nr) {
		t.Errorf("a directory: %v, want a NotAResultError", err)
	}
	if _, err := LoadExpectations(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want it not to exist", err)
	}
}

// A trace document is neither a run.json nor an expectations file, so LoadExpectations (whose doc reads
// only those two) and Load (which reads a run.json, turning away what is not a result) refuse it.
func TestRunLoadersRefuseATraceDocument(t *testing.T) {
	tr := &Trace{SchemaVersion: TraceSchemaVersion, Kind: TraceKind, Tool: Tool{Name: "clmemprobe"}, Program: "./app",
		Devices: []TraceDevice{{Index: 0, Name: "GPU"}}, Judgement: Judgement{Verdict: []string{}}}
	path := writeJSON(t, t.TempDir(), "trace.json", tr)
	var nr *NotAResultError
	if _, err := LoadExpectations(path); !errors.As(err, &nr) {
		t.Errorf("LoadExpectations(trace.json): %v, want a NotAResultError", err)
	}
	if _, err := Load(path); !errors.As(err, &nr) {
		t.Errorf("Load(trace.json): %v, want a NotAResultError", err)
	}
}
