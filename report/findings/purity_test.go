package findings

import (
	"encoding/json"
	"go/ast"
	"go/token"
	"go/types"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The package only reads runs: no statement of its own code writes into a result.Run or a
// result.JobResult, through a pointer or on a copy (result.Run.WithFindings, on a copy, is the one
// place that stores what Derive returns). This is the vet-style half of the rule: every assignment, increment, delete and
// clear whose target is reached through a value of those types is refused.
func TestFindingsNeverWriteIntoARun(t *testing.T) {
	fset, files, info, _ := typeCheck(t, ".")
	checked := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			var targets []ast.Expr
			switch n := n.(type) {
			case *ast.AssignStmt:
				if n.Tok != token.DEFINE {
					targets = n.Lhs
				}
			case *ast.IncDecStmt:
				targets = []ast.Expr{n.X}
			case *ast.RangeStmt:
				if n.Tok == token.ASSIGN {
					targets = []ast.Expr{n.Key, n.Value}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && len(n.Args) > 0 {
					if b, ok := info.Uses[id].(*types.Builtin); ok && (b.Name() == "delete" || b.Name() == "clear") {
						targets = []ast.Expr{n.Args[0]}
					}
				}
			}
			for _, e := range targets {
				if e == nil {
					continue
				}
				checked++
				if via := runValueIn(info, e); via != "" {
					t.Errorf("%s: writes into a run through %s (a %s); findings only read runs: return what you derive", fset.Position(e.Pos()), types.ExprString(e), via)
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no assignment found: the check looks at nothing")
	}
}

// runValueIn names the type of the run or strategy a write target is reached through, or "" when none:
// anything the target selects a field of, indexes or dereferences on its way. A variable assigned as a
// whole (a pointer set to another run, a view's field set to another strategy) writes into no run.
func runValueIn(info *types.Info, e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
			continue
		default:
			return ""
		}
		if name := runType(info.Types[e].Type); name != "" {
			return name
		}
	}
}

// runType is "result.Run" or "result.JobResult" (or a pointer to one) for t, else "".
func runType(t types.Type) string {
	if t == nil {
		return ""
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != "github.com/clmemprobe/clmemprobe/probe/result" {
		return ""
	}
	switch n.Obj().Name() {
	case "Run", "JobResult":
		return "result." + n.Obj().Name()
	}
	return ""
}

// The other half: whatever the code does through aliases the syntax cannot see, Derive leaves every run as
// it found it, down to the last sample, for the fixture and for random runs under one and two variants.
func TestDeriveLeavesTheRunAsItWas(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	runs := []*result.Run{loadFixture(t)}
	for n := 0; n < 500; n++ {
		r := randomRun(rng)
		withLedger(rng, r)
		if n%2 == 0 {
			r.Jobs = append(r.Jobs, underVariant(r.Jobs, "pool-off", rng)...)
		}
		runs = append(runs, r)
	}
	for n, r := range runs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var judged, want result.Run
		if err := json.Unmarshal(b, &judged); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		fs, limits := Derive(&judged)
		if !reflect.DeepEqual(judged, want) {
			t.Fatalf("run %d: Derive changed the run it read", n)
		}
		if len(fs) == 0 || len(limits) != len(want.Jobs) {
			t.Fatalf("run %d: %d findings and %d limits for %d strategies", n, len(fs), len(limits), len(want.Jobs))
		}
		// Judge leaves the run as it was too, and holds what Derive returns.
		j := Judge(&judged)
		if !reflect.DeepEqual(judged, want) {
			t.Fatalf("run %d: Judge changed the run it read", n)
		}
		if !reflect.DeepEqual(j.Findings(), fs) || !reflect.DeepEqual(j.limits, limits) || !reflect.DeepEqual(j.Run().Findings, fs) {
			t.Fatalf("run %d: Judge's findings or limits differ from Derive's", n)
		}
	}
}

// underVariant is the strategies again, under a variant that moved their thresholds at random.
func underVariant(ss []result.JobResult, name string, rng *rand.Rand) []result.JobResult {
	var out []result.JobResult
	for _, s := range ss {
		s.Variant, s.VariantSettings = name, map[string]string{"POOL": "0"}
		s.AllocationsOK = uint64(float64(s.AllocationsOK) * 2 * rng.Float64())
		out = append(out, s)
	}
	return out
}
