package result

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
	for content, says := range map[string]string{"": "empty", " \n ": "empty", "  [1]": "does not start with {", "\x00{}": "does not start with {"} {
		if _, err := l.Load(write("bad.json", content)); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: %v, want %q", content, err, says)
		}
	}
}
