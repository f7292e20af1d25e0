package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
)

// What a walk-through on a fresh clone found in the rendered text: a slope of descriptors per buffer in
// scientific notation, a compare verdict that Markdown reads as a row of the table above it, and a dry run
// that described a guard --host-reserve 0 had turned off.
func TestLedgerCountsReadAsCounts(t *testing.T) {
	for _, c := range []struct {
		per  float64
		want string // the golden file's name: "0 per buffer", "1.00 per buffer", "0.50 per buffer"
	}{{-6.62e-06, "ledger-per-buffer-0"}, {1, "ledger-per-buffer-1"}, {0.5, "ledger-per-buffer-half"}} {
		r := ticketRun()
		per := c.per
		r.Jobs[0].Resources = &result.Resources{FDs: &result.Resource{AtStart: 12, AtEnd: 12, PerBuffer: &per, Limit: 1024, LimitSource: "ulimit -n"}}
		md := renderMarkdown(t, r, Options{})
		golden(t, c.want, []byte(md))
	}
}

func TestCompareMarkdownVerdictIsNoTableRow(t *testing.T) {
	c := &comparison.Comparison{Tolerance: 0.1, Rows: []comparison.ComparisonRow{{Strategy: result.Shared, SizeBytes: 1 << 20,
		BaseOutcome: result.OutcomeFailed, NewOutcome: result.OutcomeFailed, BaseAllocations: 100, NewAllocations: 100, Change: comparison.ChangeEqual}}}
	var b bytes.Buffer
	if err := Render(&b, "markdown", c); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "no regression") && (i == 0 || strings.HasPrefix(lines[i-1], "|")) {
			t.Errorf("the verdict line follows the table without a blank line:\n%s", b.String())
		}
	}
}

func TestDryRunSaysTheGuardIsOff(t *testing.T) {
	p := &result.DryRun{HostReserve: 0, HostAvailable: 8 << 30, Jobs: []result.DryRunJob{{Strategy: result.Shared, SizeBytes: 1 << 20, Buffers: 10, Bytes: 10 << 20}}}
	var b bytes.Buffer
	if err := Render(&b, "table", p); err != nil {
		t.Fatal(err)
	}
	golden(t, "dry-run-guard-off", b.Bytes()) // "The host guard is off", no reserve of 0 B described
}
