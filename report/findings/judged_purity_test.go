package findings

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// storedJudgement is every field of the model that holds what a judgement said (a stored verdict, findings,
// a job's limit), by type: a run.json, trace.json, largest.json or remedy.json carries them for its readers,
// but a renderer or a command that read them back could print a verdict the numbers no longer support.
var storedJudgement = map[string][]string{
	"Run":       {"Verdict", "Findings"},
	"JobResult": {"Limit", "LimitEvidence"},
	"Trace":     {"Verdict", "Limit", "LimitEvidence"},
	"Largest":   {"Verdict"},
	"Remedy":    {"Verdict"},
}

// judgedOnly is the file that makes Judged and JudgedTrace, the one place that stores findings into a copy
// of a result (WithFindings) and reads them back.
const judgedOnly = "judged.go"

// No renderer, command or finding reads a stored judgement: what a run, a trace, a largest or a remedy says
// is derived each time (Judge, JudgeTrace, LargestVerdicts, RemedyVerdict), and only Judge stores findings
// into a copy with WithFindings. A field may be written (a command fills the JSON it writes), never read.
func TestNothingReadsAStoredJudgement(t *testing.T) {
	checked := 0
	for _, dir := range append(reportPackages(t), filepath.Join("..", "..", "cmd", "clmemprobe")) {
		fset, files, info, pkg := typeCheck(t, dir)
		stored := storedFields(t, pkg)
		for _, f := range files {
			name := filepath.Base(fset.Position(f.Pos()).Filename)
			written := writtenSelectors(f)
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				s, ok := info.Selections[sel]
				if !ok {
					return true
				}
				what, ok := stored[s.Obj()]
				if !ok {
					return true
				}
				checked++
				switch {
				case name == judgedOnly:
				case strings.HasSuffix(what, ".WithFindings"):
					t.Errorf("%s: stores findings with %s; only findings.Judge and JudgeTrace do (judge the result instead)", fset.Position(sel.Pos()), what)
				case !written[sel]:
					t.Errorf("%s: reads the stored %s; derive it (findings.Judge and its Verdict, Findings and Limit)", fset.Position(sel.Pos()), what)
				}
				return true
			})
		}
	}
	if checked == 0 {
		t.Fatal("no use of a stored judgement found, not even judged.go's: the check looks at nothing")
	}
}

// reportPackages are the folders of report and of every package under it whose code imports the model
// (findings itself, the judge, the format packages and the one they share): a renderer moved into a new
// format package is checked without a line here.
func reportPackages(t *testing.T) []string {
	t.Helper()
	dirs := []string{".."}
	subs, err := filepath.Glob(filepath.Join("..", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range subs {
		code, _ := filepath.Glob(filepath.Join(d, "*.go"))
		if slices.ContainsFunc(code, readsTheModel) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) < 10 {
		t.Fatalf("%d packages under report: the folders moved", len(dirs))
	}
	return dirs
}

// readsTheModel says whether name is code (not a test) that imports the result model.
func readsTheModel(name string) bool {
	if strings.HasSuffix(name, "_test.go") {
		return false
	}
	f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
	return err == nil && slices.ContainsFunc(f.Imports, func(s *ast.ImportSpec) bool {
		return s.Path.Value == `"github.com/clmemprobe/clmemprobe/probe/result"`
	})
}

// checked is one file set and one importer for every package the tests type-check, so that the packages
// they share (the model, the findings) are read once. The importer reads the compiler's export data, which
// `go list -export` finds (building what the cache lacks): type-checking every dependency from source,
// the standard library and gonum's plot included, took most of this package's 49 s on CI.
var (
	checkedFiles = token.NewFileSet()
	checkedDeps  types.Importer
	exportOnce   sync.Once
	exportErr    error
)

// exportImporter is the importer of checkedFiles over the export data of the module's report packages,
// its command and everything they import.
func exportImporter(t *testing.T) types.Importer {
	t.Helper()
	exportOnce.Do(func() {
		// go test puts its own toolchain's bin first on the test's PATH.
		cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}",
			"./report/...", "./cmd/clmemprobe")
		cmd.Dir = filepath.Join("..", "..")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			exportErr = fmt.Errorf("go list -export: %v: %s", err, stderr.String())
			return
		}
		exports := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
				exports[path] = file
			}
		}
		checkedDeps = importer.ForCompiler(checkedFiles, "gc", func(path string) (io.ReadCloser, error) {
			file, ok := exports[path]
			if !ok {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(file)
		})
	})
	if exportErr != nil {
		t.Fatal(exportErr)
	}
	return checkedDeps
}

// typeCheck parses and type-checks the package in dir, its test files left out.
func typeCheck(t *testing.T, dir string) (*token.FileSet, []*ast.File, *types.Info, *types.Package) {
	t.Helper()
	fset := checkedFiles
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("%s: no Go files", dir)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: exportImporter(t)}
	pkg, err := conf.Check(files[0].Name.Name, fset, files, info)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return fset, files, info, pkg
}

// storedFields is the objects of storedJudgement's fields and of the WithFindings methods, in the model
// package as pkg imports it (a promoted field is the same object, so a row embedding a job is covered),
// each with its "result.Type.Field" name.
func storedFields(t *testing.T, pkg *types.Package) map[types.Object]string {
	t.Helper()
	var model *types.Package
	for _, p := range pkg.Imports() {
		if p.Path() == "github.com/clmemprobe/clmemprobe/probe/result" {
			model = p
		}
	}
	if model == nil {
		t.Fatalf("%s does not import the model", pkg.Path())
	}
	out := map[types.Object]string{}
	for typ, fields := range storedJudgement {
		obj := model.Scope().Lookup(typ)
		if obj == nil {
			t.Fatalf("result.%s: no such type", typ)
		}
		for _, name := range append(fields, "WithFindings") {
			if f, _, _ := types.LookupFieldOrMethod(types.NewPointer(obj.Type()), true, model, name); f != nil {
				out[f] = "result." + typ + "." + name
			} else if name != "WithFindings" {
				t.Fatalf("result.%s.%s: no such field", typ, name)
			}
		}
	}
	return out
}

// writtenSelectors is every selector f assigns to as a whole (x.Verdict = ...), which writes a field
// without reading it.
func writtenSelectors(f *ast.File) map[*ast.SelectorExpr]bool {
	out := map[*ast.SelectorExpr]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if a, ok := n.(*ast.AssignStmt); ok && a.Tok == token.ASSIGN {
			for _, l := range a.Lhs {
				if sel, ok := l.(*ast.SelectorExpr); ok {
					out[sel] = true
				}
			}
		}
		return true
	})
	return out
}
