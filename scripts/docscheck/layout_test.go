package docscheck

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryPackageImportsWhatDesignAllows holds the code to docs/DESIGN.md's package table: every package of
// the module has a row, and every import of another package of the module (tests left out) is named in that
// row's "may import" column. A new package or a new import across folders is then a change to the design
// document first, where the next reader sees it.
func TestEveryPackageImportsWhatDesignAllows(t *testing.T) {
	top := root(t)
	rows := designRows(t, top+"/docs/DESIGN.md")
	if len(rows) < 20 {
		t.Fatalf("docs/DESIGN.md: read %d rows of the package table, want every package", len(rows))
	}
	imports := moduleImports(t, top)
	packages := make([]string, 0, len(imports))
	for p := range imports {
		packages = append(packages, p)
	}
	for pkg, imps := range imports {
		row, ok := rowOf(rows, pkg)
		if !ok {
			t.Errorf("%s has no row in docs/DESIGN.md's package table", pkg)
			continue
		}
		if row.anything {
			continue
		}
		for _, imp := range imps {
			if !row.allows(t, imp, packages) {
				t.Errorf("%s imports %s, which its row in docs/DESIGN.md does not name (it names %q)", pkg, imp, strings.Join(row.names, ", "))
			}
		}
	}
}

// designRow is one row of the package table: a package (or, ending in "/...", a folder of them) and the
// packages it may import, by the short names the table uses.
type designRow struct {
	pkg      string
	names    []string
	anything bool
}

var (
	tableRow = regexp.MustCompile("^\\| `([a-z0-9/._]+)` \\|[^|]*\\|([^|]*)\\|$")
	// firstName is the name an item of the "may import" column starts with ("wire (the GPU readings)").
	firstName = regexp.MustCompile(`^([a-z0-9/]+)`)
	// aside is a parenthesis of the column, which may hold commas of its own.
	aside = regexp.MustCompile(`\([^)]*\)`)
)

// designRows reads the table's rows.
func designRows(t *testing.T, path string) []designRow {
	t.Helper()
	var rows []designRow
	for _, l := range lines(t, path) {
		m := tableRow.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		r := designRow{pkg: m[1]}
		column := strings.TrimSpace(m[2])
		switch column {
		case "everything below", "anything (tools)":
			r.anything = true
		case "-":
		default:
			column, _, _ = strings.Cut(aside.ReplaceAllString(column, ""), ";") // "; no renderer": what it may not
			for _, item := range strings.Split(column, ",") {
				if n := firstName.FindString(strings.TrimSpace(item)); n != "" {
					r.names = append(r.names, n)
				}
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// rowOf finds the row of pkg: its own, else the folder row ("scripts/...") it is under.
func rowOf(rows []designRow, pkg string) (designRow, bool) {
	for _, r := range rows {
		if r.pkg == pkg {
			return r, true
		}
	}
	for _, r := range rows {
		if folder, ok := strings.CutSuffix(r.pkg, "/..."); ok && strings.HasPrefix(pkg, folder+"/") {
			return r, true
		}
	}
	return designRow{}, false
}

// allows says whether the row names imp: a short name names the one package of the module whose path is it
// or ends in "/" and it; a name that fits none or several is an error of the document.
func (r designRow) allows(t *testing.T, imp string, packages []string) bool {
	t.Helper()
	for _, n := range r.names {
		var fits []string
		for _, p := range packages {
			if p == n || strings.HasSuffix(p, "/"+n) {
				fits = append(fits, p)
			}
		}
		if len(fits) != 1 {
			t.Errorf("docs/DESIGN.md, the row of %s: %q names %d packages of the module (%s), want one", r.pkg, n, len(fits), strings.Join(fits, ", "))
			continue
		}
		if fits[0] == imp {
			return true
		}
	}
	return false
}

// moduleImports lists every package of the module with the packages of the module it imports (its tests
// left out), both relative to the module.
func moduleImports(t *testing.T, top string) map[string][]string {
	t.Helper()
	touchSources(t, top)
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = top
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	got := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(l)
		pkg, ok := strings.CutPrefix(fields[0], module+"/")
		if !ok {
			pkg = fields[0]
		}
		var own []string
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				own = append(own, rel)
			}
		}
		slices.Sort(own)
		got[pkg] = own
	}
	if len(got) < 20 {
		t.Fatalf("go list ./... gave %d packages", len(got))
	}
	return got
}

// touchSources looks at every Go file and folder of the module: go test keys its cached result by what the
// test itself opened, and go list's reading, in a process of its own, is not that, so without this a
// changed import or a new package would leave a passed result cached.
func touchSources(t *testing.T, top string) {
	t.Helper()
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir():
			_, err := os.ReadDir(path)
			return err
		case strings.HasSuffix(path, ".go"):
			_, err := os.ReadFile(path)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the module's sources: %v", err)
	}
}
