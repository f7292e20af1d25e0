package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/units"
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

// Two runs on PoCL killed at their memory cgroup's limit, 512 MiB and then 448 MiB: the second made fewer
// buffers because its limit was lower, which is no regression of the runtime. compare says that the limits
// differ and does not judge the job (before: REGRESSED, exit 1).
func TestCompareOfRunsKilledAtDifferentCgroupLimits(t *testing.T) {
	const first, second = 512 << 20, 448 << 20
	procs, version := memoryCgroup(t, first)
	env := PoCLEnv(t)
	run := func() string {
		dir := t.TempDir()
		res := inCgroup(t, procs, env, "run", "--strategies", "shared", "--touch", "fill", "--max-allocs", "2000",
			"--host-reserve", "off", "--attribution", "per-buffer", "--out", dir, "-q")
		if res.code != exitWorkerFault {
			t.Fatalf("exit %d, want %d (the worker killed at the limit): %s", res.code, exitWorkerFault, res.stderr)
		}
		return filepath.Join(dir, "run.json")
	}
	base := run()
	limitFile := "memory.max"
	if version == 1 {
		limitFile = "memory.limit_in_bytes" // lowered before memsw's: v1 keeps memsw at or above it
	}
	cg := filepath.Dir(procs)
	if err := os.WriteFile(filepath.Join(cg, limitFile), []byte(strconv.Itoa(second)), 0); err != nil {
		t.Fatalf("lowering the cgroup's limit: %v", err)
	}
	if version == 1 {
		_ = os.WriteFile(filepath.Join(cg, "memory.memsw.limit_in_bytes"), []byte(strconv.Itoa(second)), 0)
	}
	next := run()
	cmp, code := compareJSON(t, env, base, next)
	if len(cmp.Rows) != 1 {
		t.Fatalf("exit %d, rows %+v; want one row", code, cmp.Rows)
	}
	row := cmp.Rows[0]
	if row.NewAllocations >= row.BaseAllocations {
		t.Fatalf("%d -> %d buffers: the lower limit should have ended the job sooner", row.BaseAllocations, row.NewAllocations)
	}
	limits := units.Bytes(first) + " -> " + units.Bytes(second)
	if code != 0 || cmp.Regressed || row.Change != comparison.ChangeInconclusive || !strings.Contains(row.Why, limits) {
		t.Errorf("exit %d, regressed %v, %s (%s); want exit 0, not judged, naming the limits %s", code, cmp.Regressed, row.Change, row.Why, limits)
	}
}
