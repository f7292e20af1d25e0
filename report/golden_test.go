package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// goldenDoc is one fixed document the golden files show in every text format that renders it.
type goldenDoc struct {
	name string
	doc  func(t *testing.T) any // a judged run or trace, or another document
	// proseOnly keeps a large document to the formats that are sentences and tables: its samples in JSON,
	// CSV, Prometheus or a timeline would be megabytes that smaller documents show as well.
	proseOnly bool
}

// dataFormats are the formats that write every sample.
var dataFormats = map[string]bool{"json": true, "csv": true, "prom": true, "timeline": true}

// example is a path under docs/examples, where the README's own outputs are.
func example(parts ...string) string {
	return filepath.Join(append([]string{"..", "docs", "examples"}, parts...)...)
}

// judgedExample loads a saved document under docs/examples with load and judges it as report does.
func judgedExample[T any](load func(string) (T, error), judge func(T) any, parts ...string) func(t *testing.T) any {
	return func(t *testing.T) any {
		doc, err := load(example(parts...))
		if err != nil {
			t.Fatal(err)
		}
		return judge(doc)
	}
}

func exampleRun(parts ...string) func(t *testing.T) any {
	return judgedExample(result.Load, func(r *result.Run) any { return findings.Judge(r) }, parts...)
}

func exampleTrace(parts ...string) func(t *testing.T) any {
	return judgedExample(result.LoadTrace, func(tr *result.Trace) any { return findings.JudgeTrace(tr) }, parts...)
}

// jsonDoc reads a document that no loader of its own reads (largest, remedy, exchange) as its type, and
// judges it.
func jsonDoc[T, J any](judge func(*T) J, path string) func(t *testing.T) any {
	return func(t *testing.T) any {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc := new(T)
		if err := json.Unmarshal(b, doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return judge(doc)
	}
}

// goldenDocs are a run of each kind (a failure, a sweep, one that completed, a shared GPU), a trace of each
// kind (a failure, a leak with call sites), the largest buffer, a remedy, an exchange, a comparison, a merge
// and a check: the documents whose prose the golden files hold, so that a test need not look for phrases.
var goldenDocs = []goldenDoc{
	{"run-case-a", exampleRun("faultcl-case-a", "run.json"), false},
	{"run-sweep", exampleRun("faultcl-sweep", "run.json"), true},
	{"run-pocl", exampleRun("pocl", "run.json"), true},
	{"run-h200-default", exampleRun("h200-verdict", "default", "run.json"), false},
	{"run-h200-flags", exampleRun("h200-verdict", "flags-fill-shared-per-device", "run.json"), true},
	{"run-h200-shared", exampleRun("nvidia-h200-shared", "run.json"), true},
	{"trace-fill", exampleTrace("h200-trace", "trace-fill", "trace.json"), false},
	{"trace-leak", exampleTrace("h100-ledger", "leak", "trace.json"), true},
	{"largest-cgroup", jsonDoc(findings.JudgeLargest, example("h100-cgroup", "largest-cgroup.json")), false},
	{"largest-interrupted", jsonDoc(findings.JudgeLargest, example("h100-cgroup", "largest-interrupted.json")), false},
	{"remedy", jsonDoc(findings.JudgeRemedy, filepath.Join("testdata", "golden-input", "remedy.json")), false},
	{"exchange", jsonDoc(findings.JudgeExchange, example("nvidia-h200-x2", "exchange", "exchange.json")), false},
	{"compare", func(t *testing.T) any {
		return comparison.Compare(fixture.Run(t), fixture.Node(t, "next", 0.5), 0.1)
	}, false},
	{"compare-across-variants", func(t *testing.T) any {
		// The new run ran every job only under a variant that halves a budget: nothing is compared.
		next := fixture.Node(t, "next", 0.5)
		next.Config.Variants = []result.Variant{{Name: "small", Settings: map[string]string{"FAULTCL_HOST_BUDGET": "33554432"}}}
		for i := range next.Jobs {
			next.Jobs[i].Variant, next.Jobs[i].VariantSettings = "small", next.Config.Variants[0].Settings
		}
		return comparison.Compare(fixture.Run(t), next, 0.1)
	}, false},
	{"merge", func(t *testing.T) any {
		return comparison.Merge(inputs(fixture.Nodes(t, map[string][]float64{"1.0": {1, 1, 1, 0.5}, "2.0": {1, 1.02}})...), 0.1)
	}, false},
	{"check", func(t *testing.T) any {
		rec := fixture.Run(t)
		return comparison.CheckHealth(result.ExpectationsFrom(rec), fixture.Node(t, "worse", 0.5), 0.1, 0)
	}, false},
}

// Every text format of every golden document matches its file under testdata/golden; `go test ./report
// -run TestGolden -update` rewrites them after a deliberate change, and the diff is the review.
func TestGoldenDocuments(t *testing.T) {
	if *update {
		if err := os.MkdirAll(filepath.Join("testdata", "golden"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range goldenDocs {
		doc := g.doc(t)
		kind, err := kindOf(doc)
		if err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		for _, name := range Names(kind) {
			f, err := Lookup(name, kind)
			if err != nil || f.Binary || g.proseOnly && dataFormats[name] {
				continue
			}
			variants := map[string]Options{"": {}}
			if name == "table" {
				variants[".all"] = Options{AllFindings: true, MoreHint: "-v lists them"}
				variants[".narrow"] = Options{Width: 80}
			}
			for suffix, opts := range variants {
				t.Run(g.name+"."+name+suffix, func(t *testing.T) {
					var b bytes.Buffer
					if err := RenderWith(&b, name, doc, opts); err != nil {
						// A document a format refuses (a trace without a failure to repeat) says why in
						// one line: that line is the output.
						b.Reset()
						b.WriteString("error: " + err.Error() + "\n")
					}
					golden(t, filepath.Join("golden", g.name+"."+name+suffix), b.Bytes())
				})
			}
		}
	}
}

// The ticket (ISSUE.md) of each golden run and trace, as bundle writes it beside a reproducer and a
// kernel log, matches its golden file.
func TestGoldenTickets(t *testing.T) {
	opts := IssueOptions{HasRepro: true, KernelLogFile: "kernel-log.txt", Files: []string{"run.json", "report.md"}}
	for _, g := range goldenDocs {
		t.Run(g.name, func(t *testing.T) {
			var got []byte
			switch d := g.doc(t).(type) {
			case findings.Judged:
				got = IssueRun(d, opts)
			case findings.JudgedTrace:
				o := opts
				o.APILogFile = "api-calls.log"
				got = IssueTrace(d, o)
			default:
				t.Skip("not a run or a trace: no ticket")
			}
			golden(t, filepath.Join("golden", g.name+".ISSUE.md"), got)
		})
	}
}
