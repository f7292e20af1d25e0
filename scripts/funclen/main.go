// Command funclen lists the Go functions longer than a reader can hold (80 lines by default) under the
// folders it is given, and exits 1 when there is one. Generated files ("Code generated ... DO NOT EDIT.")
// and testdata folders are left out; tests count like any other code. scripts/test.sh runs it as a gate.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// long is one function over the limit.
type long struct {
	pos   token.Position
	name  string
	lines int
}

func main() {
	limit := flag.Int("max", 80, "the most lines a function may have, from its func line to its closing brace")
	flag.Parse()
	roots := flag.Args()
	if len(roots) == 0 {
		roots = []string{"."}
	}
	var found []long
	fset := token.NewFileSet()
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") {
				return nil
			}
			longs, err := longFuncs(fset, path, *limit)
			found = append(found, longs...)
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "funclen:", err)
			os.Exit(2)
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].lines > found[j].lines })
	for _, l := range found {
		fmt.Printf("%s:%d: %s is %d lines (at most %d)\n", l.pos.Filename, l.pos.Line, l.name, l.lines, *limit)
	}
	if len(found) > 0 {
		os.Exit(1)
	}
}

// longFuncs parses one file and returns its functions over the limit; a generated file has none.
func longFuncs(fset *token.FileSet, path string, limit int) ([]long, error) {
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(f) {
		return nil, nil
	}
	var out []long
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		if n := end.Line - start.Line + 1; n > limit {
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				name = fmt.Sprintf("(%s).%s", recvType(fd.Recv.List[0].Type), name)
			}
			out = append(out, long{start, name, n})
		}
	}
	return out, nil
}

// recvType writes a receiver's type as it reads in the source.
func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + recvType(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvType(t.X)
	}
	return "?"
}
