package main

// End-to-end tests of timeline.json (report/timeline): what run --out and trace --out write beside their
// result, on PoCL, is the result's timeline, and report --format timeline renders the same from the file.

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// timelineFileOf reads the timeline.json in dir, checks it is what report --format timeline renders from
// the folder's result (the same bytes), and returns its events.
func timelineFileOf(t *testing.T, env []string, dir, resultName string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "timeline.json"))
	if err != nil {
		t.Fatalf("timeline.json: %v", err)
	}
	var doc struct {
		TraceEvents     []map[string]any  `json:"traceEvents"`
		DisplayTimeUnit string            `json:"displayTimeUnit"`
		OtherData       map[string]string `json:"otherData"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.DisplayTimeUnit != "ms" || len(doc.TraceEvents) == 0 {
		t.Fatalf("timeline.json is no trace event document (%v): %.300s", err, b)
	}
	if r := runTool(t, env, "report", "--format", "timeline", filepath.Join(dir, resultName)); r.code != 0 || r.stdout != string(b) {
		t.Errorf("report --format timeline %s: exit %d (%s), and not timeline.json's bytes", resultName, r.code, r.stderr)
	}
	return doc.TraceEvents
}

// eventsOf are the events of a phase, and of a name where name is not "".
func eventsOf(events []map[string]any, ph, name string) []map[string]any {
	var out []map[string]any
	for _, e := range events {
		if e["ph"] == ph && (name == "" || e["name"] == name) {
			out = append(out, e)
		}
	}
	return out
}

// wroteLine is the line that names the files a command wrote into dir, in order.
func wroteLine(prefix, dir string, names ...string) string {
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join(dir, n)
	}
	return prefix + strings.Join(paths, ", ") + "\n"
}

// us is seconds as the timeline writes them: microseconds, to the nanosecond.
func us(s float64) float64 { return math.Round(s*1e9) / 1e3 }

// run --out writes timeline.json: a slice per job, as long as the job took, on a process of its own, with
// the worker's RSS and the buffers it had made as counters, and the machine's available memory.
func TestTimelineOfARun(t *testing.T) {
	env := PoCLEnv(t)
	r, res, dir := runOut(t, env, "--strategies", "shared,per-device", "--max-allocs", "20", "--size", "64KiB")
	if res.code != 0 || len(r.Jobs) != 2 || res.stderr != wroteLine("clmemprobe: wrote ", dir, "run.json", "samples.jsonl", "run.png", "timeline.json") {
		t.Fatalf("run: exit %d, %d jobs; stderr %s", res.code, len(r.Jobs), res.stderr)
	}
	events := timelineFileOf(t, env, dir, "run.json")
	slices := eventsOf(events, "X", "")
	if len(slices) != len(r.Jobs) {
		t.Fatalf("%d slices for %d jobs: %v", len(slices), len(r.Jobs), slices)
	}
	for i, s := range r.Jobs {
		pid := float64(2 + i)
		sl := slices[i]
		if sl["name"] != string(s.Strategy)+" 64 KiB" || sl["pid"] != pid || sl["dur"] != us(s.Seconds) {
			t.Errorf("job %d's slice %v; the job: %s for %v s", i, sl, s.Strategy, s.Seconds)
		}
		for _, name := range []string{"RSS", "buffers"} {
			var n int
			for _, c := range eventsOf(events, "C", name) {
				if c["pid"] == pid {
					n++
				}
			}
			if n == 0 || n > len(s.Samples) {
				t.Errorf("job %d: %d %s counter events for %d samples", i, n, name, len(s.Samples))
			}
		}
	}
	if len(eventsOf(events, "C", "available memory")) == 0 || len(eventsOf(events, "i", "")) != 0 {
		t.Errorf("no available memory counter, or instants in a run where every job completed: %v", eventsOf(events, "i", ""))
	}
}

// trace --out writes timeline.json: the program's slice from the trace's start to its end, its contexts,
// and its first failure (traceprog mixed makes a buffer larger than PoCL's largest allocation) as an
// instant at the failure's time with its code's name and index.
func TestTimelineOfATrace(t *testing.T) {
	env := traceEnv(PoCLEnv(t))
	dir := t.TempDir()
	if res := runTool(t, env, "trace", "--out", dir, "--", Traceprog(t), "mixed", "4096"); res.code != 0 ||
		!slices.Contains(strings.SplitAfter(res.stderr, "\n"), wroteLine("wrote ", dir, "trace.json", "timeline.json", "live-at-exit.pb.gz", "live-at-failure.pb.gz")) {
		t.Fatalf("trace: exit %d: %s", res.code, res.stderr)
	}
	tr, err := result.LoadTrace(filepath.Join(dir, "trace.json"))
	if err != nil || tr == nil || tr.FirstFailure == nil {
		t.Fatalf("trace.json: %v, %+v", err, tr)
	}
	events := timelineFileOf(t, env, dir, "trace.json")
	prog := eventsOf(events, "X", "traceprog")
	if len(prog) != 1 || prog[0]["ts"] != 0.0 || prog[0]["dur"] != us(tr.Seconds) {
		t.Errorf("the program's slice %v; the trace took %v s", prog, tr.Seconds)
	}
	if n := len(eventsOf(events, "X", "")); n != 1+len(tr.Contexts) {
		t.Errorf("%d slices: want the program's and one per context (%d)", n, len(tr.Contexts))
	}
	f := tr.FirstFailure
	fail := eventsOf(events, "i", "first failure: "+f.CodeName)
	if len(fail) != 1 || fail[0]["ts"] != us(f.Seconds) || fail[0]["s"] != "p" {
		t.Fatalf("first failure instants %v; the trace's failure %+v", fail, f)
	}
	if args := fail[0]["args"].(map[string]any); args["index"] != float64(f.Index) || args["code"] != float64(f.Code) {
		t.Errorf("the failure's args %v; the trace's failure %+v", args, f)
	}
	// The trace's bundle holds the same timeline (--keep-identity: nothing taken out of it).
	out := filepath.Join(t.TempDir(), "ticket.tar.gz")
	if r := runTool(t, env, "bundle", "-q", "--keep-identity", "-o", out, dir); r.code != 0 {
		t.Fatalf("bundle: exit %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "timeline.json")); string(untar(t, out)["timeline.json"]) != string(b) {
		t.Errorf("the bundle's timeline.json is not the trace's")
	}
}
