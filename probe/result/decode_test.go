package result

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// decodeSeeds are files that are results, nearly results, or results of another kind of wrong: a head of
// another version or type, a body with a field of the wrong type (with and without a wrong head), a value
// after the object, figures Check refuses.
func decodeSeeds(t testing.TB) [][]byte {
	t.Helper()
	fixture, err := os.ReadFile(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(b []byte, pairs ...string) []byte {
		for i := 0; i < len(pairs); i += 2 {
			b = bytes.Replace(b, []byte(pairs[i]), []byte(pairs[i+1]), 1)
		}
		return b
	}
	const version, body = `"schema_version": 1`, `"strategies": [`
	seeds := [][]byte{
		fixture,
		edit(fixture, version, `"schema_version": 2`),
		edit(fixture, version, `"schema_version": null`),
		edit(fixture, version, `"schema_version": "1"`),
		edit(fixture, version, `"schema_version": 1.5`),
		edit(fixture, version, `"Schema_Version": 1`),
		edit(fixture, version, `"schema_version": 2, "schema_version": 1`),
		edit(fixture, `"clmemprobe"`, `"something else"`),
		edit(fixture, body, `"strategies": 3, "was": [`),
		edit(fixture, version, `"schema_version": 2`, body, `"strategies": 3, "was": [`),
		edit(fixture, `"t": `, `"t": "soon", "was": `),
		edit(fixture, `"outcome": "failed"`, `"outcome": "fine"`),
		edit(fixture, `"stage": "create"`, `"stage": "create\"); system(\"id"`),
		append(bytes.Clone(fixture), " {}"...),
		append(bytes.Clone(fixture), "\n \t"...),
		fixture[:len(fixture)/2],
	}
	for _, s := range []string{`{}`, `{"schema_version": 1}`, `{"schema_version": 1, "tool": {"name": "clmemprobe"}}`,
		`{"schema_version": 1, "tool": {"name": "clmemprobe"}, "strategies": [{"strategy": "shared", "size_bytes": 1, "outcome": "completed", "samples": [{"t": 1e999}]}]}`,
		`{"schema_version": 1, "tool": {"name": "clmemprobe"}, "x": ` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// agree holds the one-pass decode to the head-first one it replaced: the same run, or the same error.
func agree(t *testing.T, b []byte) {
	t.Helper()
	fast, ferr := decodeRun(b, "f.json")
	slow, serr := decodeHeadFirst(b, "f.json")
	if fmt.Sprint(ferr) != fmt.Sprint(serr) {
		t.Errorf("one pass says %v, head first %v", ferr, serr)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("one pass and head first decode different runs")
	}
	agreeLean(t, b, fast)
}

// agreeLean holds the lean scan to the full decode: where it takes a file, the full decode takes it too,
// and gives the same run but for the fields the scan skips.
func agreeLean(t *testing.T, b []byte, full *Run) {
	t.Helper()
	lean, ok := decodeLean(b, "f.json")
	switch {
	case ok && full == nil:
		t.Fatalf("the lean scan takes a file the full decode refuses")
	case ok && !reflect.DeepEqual(lean, withoutSkipped(full)):
		t.Errorf("the lean scan decodes another run than the full decode")
	}
}

// withoutSkipped is a copy of r without the fields the lean scan skips (leanSkipped), each job with the fit
// it is judged to have.
func withoutSkipped(r *Run) *Run {
	cp := *r
	var clearIn func(v reflect.Value, skipped []string)
	clearIn = func(v reflect.Value, skipped []string) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if tag, _, _ := cutTag(f.Tag.Get("json")); f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
				clearIn(v.Field(i), skipped) // an embedded struct's fields are its holder's (FoundLimit's)
			} else if slices.Contains(skipped, tag) {
				v.Field(i).SetZero()
			}
		}
	}
	clear := func(v reflect.Value) { clearIn(v, leanSkipped[v.Type()]) }
	clear(reflect.ValueOf(&cp).Elem())
	cp.Judgement = Judgement{} // the embedded verdict and findings, both skipped
	if r.Environment != nil {
		env := *r.Environment
		clear(reflect.ValueOf(&env).Elem())
		cp.Environment = &env
	}
	cp.Devices = slices.Clone(r.Devices)
	for i := range cp.Devices {
		clear(reflect.ValueOf(&cp.Devices[i]).Elem())
	}
	cp.Jobs = slices.Clone(r.Jobs)
	for i := range cp.Jobs {
		cp.Jobs[i].Fit = cp.Jobs[i].JudgedFit()
		clear(reflect.ValueOf(&cp.Jobs[i]).Elem())
	}
	return &cp
}

// The lean scan takes the results this build writes, and the fixtures of every schema 1 file the tests
// keep, and gives what the full decode gives, fields it skips aside.
func TestLeanDecodeAgreesWithLoad(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	more, _ := filepath.Glob(filepath.Join("..", "..", "docs", "examples", "*", "*", "run.json"))
	taken := 0
	for _, path := range append(paths, more...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		full, err := decodeRun(b, "f.json")
		if _, ok := decodeLean(b, "f.json"); ok {
			taken++
		} else if err == nil {
			t.Errorf("%s: the lean scan gives up on a result of this build", path)
		}
		agreeLean(t, b, full)
	}
	if taken < 5 {
		t.Errorf("the lean scan took %d files; the examples alone are more", taken)
	}
}

func TestOnePassDecodeAgreesWithHeadFirst(t *testing.T) {
	for i, b := range decodeSeeds(t) {
		t.Run(fmt.Sprint(i), func(t *testing.T) { agree(t, b) })
	}
}

func FuzzOnePassDecode(f *testing.F) {
	for _, b := range decodeSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(agree)
}

// A Loader reads file after file through one buffer: each run is what Load gives for its file alone,
// whatever the loader read before, and what it reads keeps to the rules of Load (blanks before the
// object, nothing but an object).
func TestLoaderKeepsNothingOfTheFileBefore(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fixture, _ := os.ReadFile(filepath.Join("testdata", "run-v1.json"))
	big := write("big.json", string(fixture))
	small := write("small.json", " \n\t"+`{"schema_version": 1, "tool": {"name": "clmemprobe"}, "strategies": []}`)
	var l Loader
	for _, path := range []string{big, small, big, small} {
		got, err := l.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Load(path)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s through a loader that read other files first differs from Load", filepath.Base(path))
		}
	}
	if r, _ := l.Load(small); r.Environment != nil || len(r.Jobs) != 0 {
		t.Errorf("the small file picked up the big one's environment or strategies")
	}
	for content, says := range map[string]string{"": "empty", " \n ": "empty", "  [1]": "not JSON: it does not start with {", "\x00{}": "not JSON: it does not start with {"} {
		var nr *NotAResultError
		if _, err := l.Load(write("bad.json", content)); !errors.As(err, &nr) || nr.Why != says {
			t.Errorf("%q: %v, want %q", content, err, says)
		}
	}
}

// Files a byte or a few away from a result (a character changed, dropped or doubled, a key's case changed,
// a key named twice): whatever the lean scan takes, the full decode takes and decodes the same, and what
// it gives up on the full decode answers.
func TestLeanDecodeAgreesOnMutatedFiles(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(43, 1))
	const chars = "{}[],:\"\\/0123456789.eE+-ntfrueals \t\nAZaz\x00\x1f\x7f\xc3\xff"
	taken := 0
	for range 1500 {
		b := bytes.Clone(fixture)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(b))
			switch rng.IntN(5) {
			case 0:
				b[i] = chars[rng.IntN(len(chars))]
			case 1:
				b = append(b[:i:i], b[i+1:]...)
			case 2:
				j := min(len(b), i+1+rng.IntN(40))
				b = append(b[:j:j], b[i:]...)
			case 3:
				k := leanKeys[rng.IntN(len(leanKeys))]
				b = bytes.Replace(b, []byte(`"`+k+`"`), []byte(`"`+strings.ToUpper(k)+`"`), 1)
			default:
				k := leanKeys[rng.IntN(len(leanKeys))]
				b = bytes.Replace(b, []byte(`"`+k+`": `), []byte(`"`+k+`": null, "`+k+`": `), 1)
			}
		}
		full, _ := decodeRun(b, "f.json")
		if _, ok := decodeLean(b, "f.json"); ok {
			taken++
		}
		agreeLean(t, b, full)
	}
	if taken == 0 {
		t.Error("the lean scan took none of the files; some changes leave a result")
	}
}

// leanKeys are keys of a run's fields that the mutations above rename or repeat.
var leanKeys = []string{"schema_version", "name", "hostname", "driver_version", "strategies", "strategy", "outcome",
	"allocations_ok", "size_bytes", "fit", "ok", "host_bytes_per_buffer", "samples", "index", "t", "touch", "max_allocs"}
