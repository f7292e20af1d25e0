package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The bundle of a run in which nothing failed says what the run found, not that it holds a failure; its
// report links the chart that sits beside it and is described by what its table holds (where each strategy
// ended); its reproducer follows the job the headline names.
func TestBundleOfARunWithoutAFailure(t *testing.T) {
	env := FaultEnv(t, hostBudget(64))
	const budget = 40 // far below the 64 MiB host budget: every strategy completes
	r, _, dir := runOut(t, env, "--strategies", "shared,per-device", "--max-allocs", "40")
	for _, s := range r.Jobs {
		if s.AllocationsOK != budget {
			t.Fatalf("%s reached %d buffers, want the budget of %d", s.Strategy, s.AllocationsOK, budget)
		}
	}
	out := filepath.Join(t.TempDir(), "ticket.tar.gz")
	if res := runTool(t, Env(), "bundle", "--output", out, filepath.Join(dir, "run.json")); res.code != 0 {
		t.Fatalf("bundle: exit %d: %s", res.code, res.stderr)
	}
	files := untar(t, out)
	readme := string(files["README.md"])
	if strings.Contains(readme, "allocation failure") || strings.Contains(readme, "repeats the first failure") || strings.Contains(readme, "where each strategy failed") {
		t.Errorf("README.md claims a failure the run did not have:\n%s", readme)
	}
	if !strings.Contains(readme, r.Verdict[0]) {
		t.Errorf("README.md does not say what the run found (%q):\n%s", r.Verdict[0], readme)
	}
	if !strings.Contains(string(files["report.md"]), "](run.png)") {
		t.Errorf("report.md does not link run.png, which sits beside it in the bundle")
	}
	// The reproducer repeats a job that completed: the README says which, and how it ended.
	if !strings.Contains(readme, "repeats the loop of ") || !strings.Contains(readme, fmt.Sprintf("reached its budget of %d buffers without a failure", budget)) ||
		!strings.Contains(readme, "where each strategy ended") {
		t.Errorf("README.md should say the reproducer repeats a loop that completed:\n%s", readme)
	}
	// "with the OpenCL API alone" qualifies the program, not the loop's budget.
	if strings.Contains(readme, "without a failure with the OpenCL API alone") || !strings.Contains(readme, "with the OpenCL API alone, repeats the loop of ") {
		t.Errorf("README.md's repro.c line should read \"a C program that, with the OpenCL API alone, repeats ...\":\n%s", readme)
	}
}
