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
