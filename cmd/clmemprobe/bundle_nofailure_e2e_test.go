package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
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
	// The judge finds no failure: the headline is about jobs that completed, and the reproducer follows one.
	j := findings.Judge(r)
	h, ok := j.Headline()
	repro, err := report.ReproJob(j, "", "", "")
	if !ok || h.About != result.FindingCompleted || err != nil || repro.Outcome != result.OutcomeCompleted || repro.AllocationsOK != budget {
		t.Fatalf("headline %+v; reproducer's job %+v (%v): want a run that completed its budget of %d", h, repro, err, budget)
	}
	// The README and the report are what bundle writes of that result: no failure claimed, the report's
	// table described as where each strategy ended, the reproducer's loop and how it ended (the prose:
	// TestBundleReadmesMatchGoldenFiles, readme-run-completed); the report links run.png beside it.
	if !bytes.Equal(files["README.md"], bundledReadme(t, files)) {
		t.Errorf("README.md is not the README of the result:\n%s", files["README.md"])
	}
	var md bytes.Buffer
	if err := report.RenderWith(&md, "markdown", findings.Judge(bundledRun(t, files)), report.Options{Chart: "run.png"}); err != nil || md.String() != string(files["report.md"]) {
		t.Errorf("report.md is not the result's report with its chart linked (%v)", err)
	}
}
