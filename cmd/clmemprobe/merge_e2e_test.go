package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
)

// Four nodes that agree and one that does not, run for real on the fault-injection runtime, merged from
// their folders; then a file that is not a result among them.
func TestMergeOfRealRuns(t *testing.T) {
	root := t.TempDir()
	run := func(name string, budget int) {
		dir := filepath.Join(root, name)
		res := runTool(t, FaultEnv(t, hostBudget(budget)), "run", "--max-allocs", "400", "--strategies", "shared,per-device", "--out", dir)
		if res.code != 0 {
			t.Fatalf("%s: exit %d: %s", name, res.code, res.stderr)
		}
	}
	for i := 0; i < 4; i++ {
		run(fmt.Sprintf("node%d", i), 200)
	}
	res := runTool(t, Env(), "merge", "--format", "json", root)
	if res.code != 0 {
		t.Fatalf("four agreeing nodes: exit %d, want 0: %s", res.code, res.stderr)
	}
	var f comparison.Fleet
	if err := json.Unmarshal([]byte(res.stdout), &f); err != nil {
		t.Fatal(err)
	}
	if f.Results != 4 || len(f.Groups) != 1 || f.Groups[0].Nodes != 4 || f.Outliers != 0 {
		t.Fatalf("want 4 results in one group and no outlier: %+v", f)
	}
	for _, j := range f.Groups[0].Jobs {
		want := map[result.Strategy]float64{result.Shared: 200, result.PerDevice: 400}[j.Strategy]
		if j.MedianAllocs != want || j.Spread != 0 || len(j.Rows) != 4 {
			t.Errorf("%s: median %v spread %v rows %d; want %v, 0, 4", j.Strategy, j.MedianAllocs, j.Spread, len(j.Rows), want)
		}
	}
	run("deviant", 150)
	res = runTool(t, Env(), "merge", "--format", "json", root)
	if res.code != exitRegression {
		t.Errorf("a node 25%% below the others: exit %d, want 1", res.code)
	}
	if err := json.Unmarshal([]byte(res.stdout), &f); err != nil {
		t.Fatal(err)
	}
	if f.Outliers != 1 {
		t.Errorf("%d outliers, want 1 (shared on the deviant node)", f.Outliers)
	}
	for _, j := range f.Groups[0].Jobs {
		for _, r := range j.Rows {
			deviant := strings.Contains(r.Source, "deviant") && j.Strategy == result.Shared
			if r.Outlier != deviant {
				t.Errorf("%s on %s: outlier %v (%s)", j.Strategy, r.Source, r.Outlier, r.Why)
			}
		}
	}
	// A broken file is named on its own line; the others are merged all the same.
	if err := os.WriteFile(filepath.Join(root, "node0", "run.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = runTool(t, Env(), "merge", root)
	bad := filepath.Join(root, "node0", "run.json")
	said := "clmemprobe: " + bad + " is not a clmemprobe result: not JSON (invalid character 'n' looking for beginning of object key string)\n" +
		"clmemprobe: 1 input could not be used (named above); the merge shows the 4 results that could\n"
	if res.code != exitUsage || res.stderr != said || !strings.HasPrefix(res.stdout, "clmemprobe merge: 4 results in ") {
		t.Errorf("one bad file: exit %d, stderr %q, stdout %q; want exit 2, the file named, the other 4 merged", res.code, res.stderr, res.stdout)
	}
}
