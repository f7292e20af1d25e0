// Package golden holds the documents whose words report's golden files (report/testdata/golden) hold, and
// the check that each text format of each matches its file. The root's test runs it for every format; each
// format's package runs it for its own formats, so that the coverage `go test -cover` gives a package is
// that of its own code under the same documents.
package golden

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// reportDir is the report package's folder, where the golden files are, whichever package's test asks.
func reportDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Inputs are results to merge, each from its node's folder.
func Inputs(runs ...*result.Run) []comparison.FleetInput {
	out := make([]comparison.FleetInput, len(runs))
	for i, r := range runs {
		out[i] = comparison.FleetInput{Source: fixture.Source(r), Run: r}
	}
	return out
}

// Doc is one fixed document the golden files show in every text format that renders it.
type Doc struct {
	Name string
	Doc  func(t *testing.T) any // a judged run or trace, or another document
	// proseOnly keeps a large document to the formats that are sentences and tables: its samples in JSON,
	// CSV, Prometheus or a timeline would be megabytes that smaller documents show as well.
	ProseOnly bool
}

// DataFormats are the formats that write every sample.
var DataFormats = map[string]bool{"json": true, "csv": true, "prom": true, "timeline": true}

// example is a path under docs/examples, where the README's own outputs are.
func example(parts ...string) string {
	return filepath.Join(append([]string{reportDir(), "..", "docs", "examples"}, parts...)...)
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

// Docs are a run of each kind (a failure, a sweep, one that completed, a shared GPU), a trace of each
// kind (a failure, a leak with call sites), the largest buffer, a remedy, an exchange, a comparison, a merge
// and a check: the documents whose prose the golden files hold, so that a test need not look for phrases.
var Docs = []Doc{
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
	{"remedy", jsonDoc(findings.JudgeRemedy, filepath.Join(reportDir(), "testdata", "golden-input", "remedy.json")), false},
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
		return comparison.Merge(Inputs(fixture.Nodes(t, map[string][]float64{"1.0": {1, 1, 1, 0.5}, "2.0": {1, 1.02}})...), 0.1)
	}, false},
	{"check", func(t *testing.T) any {
		rec := fixture.Run(t)
		return comparison.CheckHealth(result.ExpectationsFrom(rec), fixture.Node(t, "worse", 0.5), 0.1, 0)
	}, false},
}

// Registry is what the check needs of report's registry: the formats that render a document (text ones
// only: binary formats have no golden file) and the rendering.
type Registry struct {
	TextFormats func(doc any) ([]string, error)
	Render      func(w io.Writer, format string, doc any, opts render.Options) error
}

// Check holds every text format that want takes, of every document, to its golden file; with update it
// writes them instead. pkg is the package whose -update flag rewrites them, for the message.
func Check(t *testing.T, reg Registry, want func(format string) bool, update bool, pkg string) {
	checked := 0
	for _, g := range Docs {
		doc := g.Doc(t)
		names, err := reg.TextFormats(doc)
		if err != nil {
			t.Fatalf("%s: %v", g.Name, err)
		}
		for _, name := range names {
			if !want(name) || g.ProseOnly && DataFormats[name] {
				continue
			}
			variants := map[string]render.Options{"": {}}
			if name == "table" {
				variants[".all"] = render.Options{AllFindings: true, MoreHint: "-v lists them"}
				variants[".narrow"] = render.Options{Width: 80}
			}
			for suffix, opts := range variants {
				checked++
				t.Run(g.Name+"."+name+suffix, func(t *testing.T) {
					var b bytes.Buffer
					if err := reg.Render(&b, name, doc, opts); err != nil {
						// A document a format refuses (a trace without a failure to repeat) says why in
						// one line: that line is the output.
						b.Reset()
						b.WriteString("error: " + err.Error() + "\n")
					}
					File(t, g.Name+"."+name+suffix, b.Bytes(), update, pkg)
				})
			}
		}
	}
	if checked == 0 {
		t.Fatal("no golden document is rendered in the formats asked for")
	}
}

// File holds got to report/testdata/golden/NAME.golden, or writes it there with update.
func File(t *testing.T, name string, got []byte, update bool, pkg string) {
	t.Helper()
	fixture.GoldenAt(t, filepath.Join(reportDir(), "testdata", "golden", name+".golden"), got, update, pkg)
}
