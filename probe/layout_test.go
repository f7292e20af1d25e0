package probe

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTheEngineImportsNothingOfReport: the engine owns the result model (probe/result) and the judge and
// the renderers import it, never the other way: no file under probe/, tests included, imports a package
// under report/. Before the model moved here, 50 files of the engine and 29 of its tests imported
// report/result, report/result/clcode or report/units.
func TestTheEngineImportsNothingOfReport(t *testing.T) {
	const report = "github.com/clmemprobe/clmemprobe/report"
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == report || strings.HasPrefix(p, report+"/") {
				t.Errorf("probe/%s imports %s", path, p)
			}
		}
		return nil
	})
	if err != nil || files < 100 {
		t.Fatalf("read %d files of the engine: %v", files, err)
	}
}
