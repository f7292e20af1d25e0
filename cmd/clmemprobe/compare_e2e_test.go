package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if res := runTool(t, env, "compare", j(base), j(same)); res.code != 0 || !strings.Contains(res.stdout, "equal") {
		t.Errorf("same runtime: exit %d\n%s", res.code, res.stdout)
	}
	if res := runTool(t, env, "compare", j(base), j(worse)); res.code != exitRegression || !strings.Contains(res.stdout, "64 -> 32 buffers") {
		t.Errorf("half the budget: exit %d\n%s", res.code, res.stdout)
	}
	if res := runTool(t, env, "compare", j(worse), j(base)); res.code != 0 || !strings.Contains(res.stdout, "improved") {
		t.Errorf("twice the budget: exit %d\n%s", res.code, res.stdout)
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
	res := runTool(t, env, "compare", filepath.Join(base, "run.json"), filepath.Join(variant, "run.json"), "--wide")
	if res.code != 0 || strings.Contains(res.stdout, "REGRESSED") {
		t.Fatalf("exit %d, want 0 and no regression:\n%s%s", res.code, res.stdout, res.stderr)
	}
	if n := strings.Count(res.stdout, "not-comparable: asked differently: the base ran it under the default settings"); n != 2 {
		t.Errorf("%d rows say the runs asked different things, want 2 (one per strategy):\n%s", n, res.stdout)
	}
	if !strings.Contains(res.stdout, fmt.Sprintf("variant small (FAULTCL_HOST_BUDGET=%d)", 32<<20)) || !strings.Contains(res.stdout, "nothing compared: the two runs asked them differently") ||
		strings.Contains(res.stdout, "%") && strings.Contains(res.stdout, "-50.0%") {
		t.Errorf("the variant's settings or the count are not said:\n%s", res.stdout)
	}
}
