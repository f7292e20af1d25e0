package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// testdata/run-v1.json is a result of schema version 1 written by clmemprobe itself (faultcl, 2 devices,
// 64 MiB host budget, 256 MiB per device). It is kept as it was written: later versions must read it.
func loadFixture(t *testing.T) *Run {
	t.Helper()
	r, err := Load(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatalf("a schema 1 result must stay readable: %v", err)
	}
	return r
}

func TestJSONRoundTripKeepsEveryField(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(loadFixture(t)); err != nil {
		t.Fatal(err)
	}
	var a, z any
	_ = json.Unmarshal(raw, &a)
	_ = json.Unmarshal(b.Bytes(), &z)
	// Fields added since (schema 1 grows only by adding) may appear; none of the file's may go or change.
	if path, ok := contains(z, a, "$"); !ok {
		t.Errorf("loading and writing run-v1.json lost or changed %s", path)
	}
}

// contains reports whether every field and element of want is in got with the same value.
func contains(got, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for k, wv := range w {
			if p, ok := contains(g[k], wv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := contains(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	return path, reflect.DeepEqual(got, want)
}

func TestLoadRejectsWhatIsNotAResult(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not-json.json":   "hello",
		"other.json":      `{"name": "something else"}`,
		"schema-2.json":   `{"schema_version": 2, "tool": {"name": "clmemprobe"}}`,
		"wrong-type.json": `{"schema_version": 1, "tool": {"name": "clmemprobe"}, "strategies": "x"}`,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		var nr *NotAResultError
		if _, err := Load(path); !errors.As(err, &nr) {
			t.Errorf("%s: %v, want a NotAResultError", name, err)
		}
	}
}

// A file that claims another schema version says that version and the one this build reads, with the
// tool's name or without it.
func TestLoadNamesASchemaVersionItDoesNotRead(t *testing.T) {
	dir := t.TempDir()
	const other = 99
	for name, c := range map[string]struct{ content, why string }{
		"bare.json": {fmt.Sprintf(`{"schema_version": %d}`, other),
			fmt.Sprintf("schema version %d and no tool name; this build reads clmemprobe's version %d", other, SchemaVersion)},
		"named.json": {fmt.Sprintf(`{"schema_version": %d, "tool": {"name": "clmemprobe"}}`, other),
			fmt.Sprintf("schema version %d; this build reads version %d", other, SchemaVersion)},
	} {
		content := c.content
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if nr := (*NotAResultError)(nil); !errors.As(err, &nr) || nr.Path != path || nr.Why != c.why {
			t.Errorf("%s: %v, want it to name version %d and this build's %d", name, err, other, SchemaVersion)
		}
	}
}

// An expectations file given where a run belongs is named as what it is, and where it goes.
func TestExpectationsAreNotARun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "expect.json")
	if err := os.WriteFile(path, []byte(`{"kind": "`+ExpectationsKind+`", "version": 1, "devices": [0, 1]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	var nr *NotAResultError
	if !errors.As(err, &nr) || nr.Why != "expectations that check --record wrote, not a run: check --expect takes them" {
		t.Errorf("error %v", err)
	}
}

// oldStyleRun is testdata/run-v1.json with its jobs ended as the given outcomes and reasons, written as a
// build before stop_cause wrote them (cause ""), or as one after it (the cause given).
func oldStyleRun(t *testing.T, jobs [][3]string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	first := doc["strategies"].([]any)[0].(map[string]any)
	var ss []any
	for _, j := range jobs {
		s := map[string]any{}
		for k, v := range first {
			s[k] = v
		}
		s["outcome"], s["reason"] = j[0], j[1]
		if j[0] != string(OutcomeFailed) {
			s["first_failure"] = nil
		}
		if j[2] != "" {
			s["stop_cause"] = j[2]
		}
		ss = append(ss, s)
	}
	doc["strategies"] = ss
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A result written before stop_cause was recorded gets each stopped or hung job's cause from its reason's
// first words on loading, and the rules read it; a cause the file records is kept whatever the reason says.
func TestLoadGivesOldStopsTheirCause(t *testing.T) {
	jobs := [][3]string{
		{"stopped", "host guard: system available memory 1 GiB, less one more buffer, would fall below the reserve 2 GiB", ""},
		{"stopped", "interrupted", ""},
		{"stopped", "timeout: the strategy ran longer than 10m0s", ""},
		{"stopped", "the tool could not map the host memory of buffer #70 (use-host-ptr): cannot allocate memory", ""},
		{"hung", "watchdog: no progress for 30s in stage create", ""},
		{"stopped", "words no build wrote", ""},
		{"failed", "interrupted", ""},
		{"stopped", "host guard: words of a later build", "interrupted"},
	}
	want := []StopCause{StopHostGuard, StopInterrupted, StopTimedOut, StopHostMapping, StopHung, "", "", StopInterrupted}
	r, err := Decode(bytes.NewReader(oldStyleRun(t, jobs)), "old.json")
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range r.Jobs {
		if s.StopCause != want[i] {
			t.Errorf("%s %q: cause %q, want %q", jobs[i][0], jobs[i][1], s.StopCause, want[i])
		}
	}
	if !r.Jobs[0].GuardStopped() || !r.Jobs[1].Interrupted() || r.Jobs[2].Interrupted() || r.Jobs[2].GuardStopped() {
		t.Errorf("the rules do not read the loaded causes: guard %v, interrupted %v, timed out %v/%v",
			r.Jobs[0].GuardStopped(), r.Jobs[1].Interrupted(), r.Jobs[2].Interrupted(), r.Jobs[2].GuardStopped())
	}
}

// A stop cause no build writes is refused, in one line that names it.
func TestLoadRefusesAnUnknownStopCause(t *testing.T) {
	_, err := Decode(bytes.NewReader(oldStyleRun(t, [][3]string{{"stopped", "interrupted", "gremlins"}})), "odd.json")
	var nr *NotAResultError
	if !errors.As(err, &nr) || err.Error() != `odd.json is not a clmemprobe result: strategy 0 ("shared"): stop_cause "gremlins" is not one clmemprobe writes` {
		t.Errorf("error %v, want a NotAResultError naming the cause", err)
	}
}
