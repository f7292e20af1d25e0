package keep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What Write keeps, Read takes back; a link, a file too long or not of the shape asked for keeps nothing.
func TestReadTakesOnlyWhatWriteKept(t *testing.T) {
	dir := t.TempDir()
	type answer struct{ Key, Value string }
	Write(dir, "a.json", []answer{{"k", "v"}})
	var got []answer
	if !Read(dir, "a.json", &got) || len(got) != 1 || got[0] != (answer{"k", "v"}) {
		t.Fatalf("read back %+v", got)
	}
	if err := os.Symlink(filepath.Join(dir, "a.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if Read(dir, "link.json", &got) {
		t.Error("a link was followed")
	}
	if err := os.WriteFile(filepath.Join(dir, "long.json"), []byte(`["`+strings.Repeat("x", Limit)+`"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	var long []string
	if Read(dir, "long.json", &long) {
		t.Error("a file over the limit was read")
	}
	var other map[string]int
	if Read(dir, "a.json", &other) {
		t.Error("an answer of another shape was taken")
	}
	if Identity(filepath.Join(dir, "a.json")) == "" || Identity(filepath.Join(dir, "none")) != "" {
		t.Error("Identity of a file, or of a missing one")
	}
}
