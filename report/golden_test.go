package report

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/report/findings"
	goldenset "github.com/clmemprobe/clmemprobe/report/internal/golden"
)

// registry is report's registry as the golden check takes it.
var registry = goldenset.Registry{TextFormats: TextFormats, Render: RenderWith}

// Every text format of every golden document matches its file under testdata/golden; `go test ./report
// -run TestGolden -update` rewrites them after a deliberate change, and the diff is the review. Each format's
// package runs the same check for its own formats.
func TestGoldenDocuments(t *testing.T) {
	goldenset.Check(t, registry, func(string) bool { return true }, *update, "./report")
}

// The ticket (ISSUE.md) of each golden run and trace, as bundle writes it beside a reproducer and a
// kernel log, matches its golden file.
func TestGoldenTickets(t *testing.T) {
	opts := IssueOptions{HasRepro: true, KernelLogFile: "kernel-log.txt", Files: []string{"run.json", "report.md"}}
	for _, g := range goldenset.Docs {
		t.Run(g.Name, func(t *testing.T) {
			var got []byte
			switch d := g.Doc(t).(type) {
			case findings.Judged:
				got = IssueRun(d, opts)
			case findings.JudgedTrace:
				o := opts
				o.APILogFile = "api-calls.log"
				got = IssueTrace(d, o)
			default:
				t.Skip("not a run or a trace: no ticket")
			}
			goldenset.File(t, g.Name+".ISSUE.md", got, *update, "./report")
		})
	}
}
