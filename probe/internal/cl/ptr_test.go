package cl

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestOnlyPtrGoImportsUnsafe holds the package to its rule (ptr.go): one file converts pointers for C. A
// conversion written in another file, its tests included, imports unsafe there and fails this test with
// the file's name.
func TestOnlyPtrGoImportsUnsafe(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the package's files: %v, %v", files, err)
	}
	var importers []string
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == "unsafe" {
				importers = append(importers, name)
			}
		}
	}
	if !slices.Equal(importers, []string{"ptr.go"}) {
		t.Errorf("files importing unsafe: %v; want only ptr.go", importers)
	}
}
