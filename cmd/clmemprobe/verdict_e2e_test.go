package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

// verdictBullets is the bullets under a run's table, each joined back into one line.
func verdictBullets(table string) []string {
	var out []string
	for _, line := range strings.Split(table, "\n") {
		switch {
		case strings.HasPrefix(line, "- "):
			out = append(out, strings.TrimPrefix(line, "- "))
		case strings.HasPrefix(line, "  ") && len(out) > 0:
			out[len(out)-1] += " " + strings.TrimSpace(line)
		}
	}
	return out
}

// A sweep of 4 flag sets over 2 strategies on PoCL, on a 120-column terminal, shows at most
// findings.BriefBullets bullets and says how many findings it left to the Markdown, whose verdict keeps
// every one the result holds; -v shows them all under the table.
func TestFlagSweepVerdictFitsItsBudget(t *testing.T) {
	env := append(PoCLEnv(t), "COLUMNS=120")
	args := []string{"--strategies", "shared,per-device", "--flag-sets", "read-write;use-host-ptr;alloc-host-ptr;read-only", "--max-allocs", "1000"}
	r, res, dir := runOut(t, env, args...)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	bullets := verdictBullets(res.stdout)
	if len(bullets) == 0 || len(bullets) > findings.BriefBullets {
		t.Fatalf("%d bullets, want 1 to %d:\n%s", len(bullets), findings.BriefBullets, res.stdout)
	}
	// The table is the renderers' at 120 columns, with the line that says where the other findings are
	// (its words: report's golden run-h200-flags.table); the Markdown is the renderers' (every finding).
	if len(r.Verdict) <= len(bullets) {
		t.Fatalf("%d findings and %d bullets: the sweep was meant to have more findings than the terminal shows", len(r.Verdict), len(bullets))
	}
	if want := renderedRunWith(t, filepath.Join(dir, "run.json"), "table", report.Options{Width: 120, MoreHint: "-v lists them here"}); res.stdout != want {
		t.Errorf("run's table:\n%s\nwant:\n%s", res.stdout, want)
	}
	if md := runTool(t, env, "report", "--format", "markdown", filepath.Join(dir, "run.json")); md.stdout != renderedRun(t, filepath.Join(dir, "run.json"), "markdown") {
		t.Errorf("the Markdown is not the result's:\n%s", md.stdout)
	}
	vdir := t.TempDir()
	verbose := runTool(t, env, append(append([]string{"run", "-v"}, args...), "--out", vdir)...)
	all := renderedRunWith(t, filepath.Join(vdir, "run.json"), "table", report.Options{Width: 120, AllFindings: true, MoreHint: "-v lists them here"})
	if n := len(verdictBullets(verbose.stdout)); n <= findings.BriefBullets || verbose.stdout != all {
		t.Errorf("-v shows %d bullets, want every finding:\n%s\nwant:\n%s", n, verbose.stdout, all)
	}
}

// A flag set the runtime refuses at the first buffer is said once: the headline names it, and neither the
// first failures nor the limits of the other strategies say it again (the table shows each job's).
func TestRefusedFlagsAreSaidOnce(t *testing.T) {
	res := runTool(t, append(PoCLEnv(t), "COLUMNS=120"), "run", "--flags", "0x800000", "--max-allocs", "10")
	n := 0
	for _, b := range verdictBullets(res.stdout) {
		if strings.Contains(b, "CL_INVALID_VALUE (-30)") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d bullets say the refusal, want 1:\n%s", n, res.stdout)
	}
}
