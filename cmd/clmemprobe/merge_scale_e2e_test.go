package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/comparison"
)

// fleetFolder writes n copies of the schema 1 fixture under root as node-NN/run.json, each with its own
// host name; node odd reaches half the shared strategy's buffers of the others.
func fleetFolder(t *testing.T, root string, n, odd int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), "probe", "result", "testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		doc["environment"].(map[string]any)["hostname"] = fmt.Sprintf("node-%02d", i)
		if i == odd {
			s := doc["strategies"].([]any)[0].(map[string]any)
			s["allocations_ok"] = s["allocations_ok"].(float64) / 2
		}
		out, _ := json.Marshal(doc)
		dir := filepath.Join(root, fmt.Sprintf("node-%02d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "run.json"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A fleet larger than a table shows: its outliers and a count of the healthy others, every node with
// --all, every row in json and csv. Files that do not load are named in the order they were found, though
// the files are loaded in parallel.
func TestMergeOfAFleetBeyondTheRowLimit(t *testing.T) {
	const n, odd = report.FleetRowLimit + 5, 13
	root := t.TempDir()
	fleetFolder(t, root, n, odd)
	var broken []string
	for _, name := range []string{"a-broken", "node-10-broken", "zz-broken"} {
		path := filepath.Join(root, name, "run.json")
		broken = append(broken, path)
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := runTool(t, Env(), "merge", root)
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	if res.code != exitUsage || len(lines) != len(broken)+1 {
		t.Fatalf("three broken files: exit %d, stderr %q; want exit 2, a line for each and the summary", res.code, res.stderr)
	}
	for i, path := range broken {
		if !strings.HasPrefix(lines[i], "clmemprobe: "+path+" is not a clmemprobe result: ") {
			t.Errorf("line %d of stderr is %q, want the broken files in the order found (%s)", i+1, lines[i], path)
		}
	}
	for _, path := range broken {
		_ = os.RemoveAll(filepath.Dir(path))
	}
	res = runTool(t, Env(), "merge", root)
	all := runTool(t, Env(), "merge", "--all", "--format", "markdown", root)
	var f comparison.Fleet
	js := runTool(t, Env(), "merge", "--format", "json", root)
	if err := json.Unmarshal([]byte(js.stdout), &f); err != nil || f.Results != n || f.Outliers != 1 {
		t.Fatalf("json: %v, %d results, %d outliers; want %d and 1", err, f.Results, f.Outliers, n)
	}
	for _, j := range f.Groups[0].Jobs {
		if len(j.Rows) != n {
			t.Errorf("json: %s has %d rows, want every node (%d)", j.Strategy, len(j.Rows), n)
		}
		for _, r := range j.Rows {
			if r.Outlier != (r.Source == filepath.Join(root, fmt.Sprintf("node-%02d", odd), "run.json") && j.Strategy == result.Shared) {
				t.Errorf("json: %s on %s: outlier %v, want node-%02d's shared alone", j.Strategy, r.Source, r.Outlier, odd)
			}
		}
	}
	// The table (the outlier, then a count of the healthy nodes, none by name) and --all's Markdown (every
	// node) are the renderers' of that merge: report's golden merge-outliers-first and merge-all-rows.
	for _, c := range []struct {
		res    invocation
		format string
		opts   report.Options
	}{{res, "table", report.Options{}}, {all, "markdown", report.Options{AllRows: true}}} {
		var want bytes.Buffer
		if err := report.RenderWith(&want, c.format, &f, c.opts); err != nil || c.res.code != exitRegression || c.res.stdout != want.String() {
			t.Errorf("merge --format %s: exit %d, %v:\n%s\nwant:\n%s", c.format, c.res.code, err, c.res.stdout, want.String())
		}
	}
	rows, err := csv.NewReader(strings.NewReader(runTool(t, Env(), "merge", "--format", "csv", root).stdout)).ReadAll()
	if want := 1 + n*len(f.Groups[0].Jobs); err != nil || len(rows) != want {
		t.Errorf("csv: %d rows (%v), want a header and a row per node and job (%d)", len(rows), err, want)
	}
}
