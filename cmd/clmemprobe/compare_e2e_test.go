package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/comparison"
)

func TestCompareExitCodes(t *testing.T) {
	env := FaultEnv(t, fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", 64<<20))
	_, _, base := runOut(t, env, "--strategies", "shared", "--max-allocs", "1000")
	_, _, same := runOut(t, env, "--strategies", "shared", "--max-allocs", "1000")
	_, _, worse := runOut(t, FaultEnv(t, fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", 32<<20)), "--strategies", "shared", "--max-allocs", "1000")
	notResult := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(notResult, []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	j := func(dir string) string { return filepath.Join(dir, "run.json") }
	for _, c := range []struct {
		name       string
		base, next string
		code       int
		change     string
		from, to   uint64
	}{
		{"same runtime", base, same, 0, comparison.ChangeEqual, 64, 64},
		{"half the budget", base, worse, exitRegression, comparison.ChangeRegressed, 64, 32},
		{"twice the budget", worse, base, 0, comparison.ChangeImproved, 32, 64},
	} {
		cmp, code := compareJSON(t, env, j(c.base), j(c.next))
		if len(cmp.Rows) != 1 || code != c.code {
			t.Fatalf("%s: exit %d, rows %+v; want %d and one row", c.name, code, cmp.Rows, c.code)
		}
		if row := cmp.Rows[0]; row.Change != c.change || row.BaseAllocations != c.from || row.NewAllocations != c.to || cmp.Regressed != (c.code == exitRegression) {
			t.Errorf("%s: %+v (regressed %v), want %s from %d to %d buffers", c.name, row, cmp.Regressed, c.change, c.from, c.to)
		}
	}
	oneLineError(t, runTool(t, env, "compare", j(base), notResult), exitUsage, "not a clmemprobe result")
}

// A plain run against one run only under a variant that halves the runtime's budget: the runs asked
// different things, so every job is "not-comparable" with both settings named, the line under the table
// counts them, and the exit code is not a regression's.
func TestCompareAcrossVariantsIsNotComparable(t *testing.T) {
	env := FaultEnv(t, fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", 64<<20))
	_, _, base := runOut(t, env, "--strategies", "shared,per-device", "--max-allocs", "1000")
	_, _, variant := runOut(t, env, "--strategies", "shared,per-device", "--max-allocs", "1000", "--no-default-variant",
		"--variant", fmt.Sprintf("small:FAULTCL_HOST_BUDGET=%d", 32<<20))
	cmp, code := compareJSON(t, env, filepath.Join(base, "run.json"), filepath.Join(variant, "run.json"))
	if code != 0 || cmp.Regressed || len(cmp.Rows) != 2 {
		t.Fatalf("exit %d, regressed %v, %d rows; want 0, no regression, one row per strategy", code, cmp.Regressed, len(cmp.Rows))
	}
	// Each row puts the two jobs side by side, not judged, and says how they were asked: the default
	// settings against the variant's (the table's words, no change figure, the line under it: report's
	// golden compare-across-variants).
	why := fmt.Sprintf("asked differently: the base ran it under the default settings, flags read-write, 1 MiB buffers, "+
		"the new run under variant small (FAULTCL_HOST_BUDGET=%d), flags read-write, 1 MiB buffers", 32<<20)
	for _, row := range cmp.Rows {
		if row.Change != comparison.ChangeNotComparable || row.Why != why {
			t.Errorf("row %+v: want not-comparable, why %q", row, why)
		}
	}
}

// compareJSON runs compare --format json and decodes its answer.
func compareJSON(t *testing.T, env []string, base, next string) (*comparison.Comparison, int) {
	t.Helper()
	res := runTool(t, env, "compare", "--format", "json", base, next)
	var c comparison.Comparison
	if err := json.Unmarshal([]byte(res.stdout), &c); err != nil {
		t.Fatalf("compare's JSON (exit %d): %v; stderr: %s", res.code, err, res.stderr)
	}
	return &c, res.code
}
