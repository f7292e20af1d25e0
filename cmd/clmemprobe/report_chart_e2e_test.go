package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Markdown report written into the run's folder, beside the run.png that run --out wrote, links the chart;
// one written elsewhere does not link a file that is not there.
func TestReportLinksTheChartBesideIt(t *testing.T) {
	_, _, dir := runOut(t, PoCLEnv(t), "--strategies", "shared", "--touch", "fill", "--max-allocs", "40")
	if _, err := os.Stat(filepath.Join(dir, chartFile)); err != nil {
		t.Fatalf("run --out wrote no chart: %v", err)
	}
	beside, elsewhere := filepath.Join(dir, "report.md"), filepath.Join(t.TempDir(), "report.md")
	for _, c := range []struct {
		out  string
		link bool
	}{{beside, true}, {elsewhere, false}} {
		if res := runTool(t, Env(), "report", "--format", "markdown", "--output", c.out, dir); res.code != 0 {
			t.Fatalf("report --output %s: exit %d: %s", c.out, res.code, res.stderr)
		}
		b, err := os.ReadFile(c.out)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), "("+chartFile+")"); got != c.link {
			t.Errorf("report at %s links %s: %v, want %v", c.out, chartFile, got, c.link)
		}
	}
}
