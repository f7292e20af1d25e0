package table

import (
	"bytes"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

var update = flag.Bool("update", false, "rewrite the golden files from the renderers' output")

func golden(t *testing.T, name string, got []byte) {
	fixture.Golden(t, name, got, *update, "./report/table")
}

// TestVerdictLinesFitInScreenColumns: a verdict sentence with wide characters (a device named in CJK) is
// wrapped so that every line fits the terminal in screen columns, as the table's renderer counts them: by
// runes, a line of wide characters came out nearly twice the terminal's width.
func TestVerdictLinesFitInScreenColumns(t *testing.T) {
	const width = 30
	text := "device 0 (" + strings.Repeat("計算機 ", 6) + ") was full at buffer #80550"
	for _, l := range strings.Split(bullet(text, width), "\n") {
		if w := twwidth.Width(l); w > width {
			t.Errorf("a line of %d columns on a terminal of %d: %q", w, width, l)
		}
	}
}

func TestGroupedCounts(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 9996: "9,996", 100000: "100,000", 1234567: "1,234,567"} {
		if got := grouped(n); got != want {
			t.Errorf("grouped(%d) = %q, want %q", n, got, want)
		}
	}
}

// check names a job one way in its one line and in -v's lines: strategy, size, flags and "variant NAME".
func TestCheckNamesAJobOneWay(t *testing.T) {
	const variant, flags = "as", "alloc-host-ptr"
	h := &comparison.Health{Healthy: true, Tolerance: 0.1, Budget: 50, Jobs: []comparison.HealthJob{
		{Strategy: result.Shared, SizeBytes: 1 << 20, Variant: variant, Flags: flags, Healthy: true, Outcome: result.OutcomeFailed,
			AllocationsOK: 100, ExpectedAllocs: 100, ExpectedOutcome: result.OutcomeFailed}}}
	want := fmt.Sprintf("%s %s %s variant %s", result.Shared, units.Size(1<<20), flags, variant)
	var line, verbose bytes.Buffer
	if err := WriteHealthText(&line, h, render.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteHealthJobs(&verbose, h); err != nil {
		t.Fatal(err)
	}
	if got := healthJobName(&h.Jobs[0]); got != want {
		t.Errorf("the job is named %q, want %q", got, want)
	}
	// Both outputs name it so: the golden files.
	golden(t, "check-job-name.line", line.Bytes())
	golden(t, "check-job-name.verbose", verbose.Bytes())
}

// A worker killed with a batch in flight made its buffers, but the device confirmed only the first of them:
// the Buffers OK cell gives the range, as the First failure cell does, and Bytes OK says "up to".
func TestBuffersOKOfAKilledBatchIsARange(t *testing.T) {
	const confirmed, made = 976, 1040
	c := uint64(confirmed)
	s := &result.JobResult{Strategy: result.Shared, SizeBytes: 1 << 20, Outcome: result.OutcomeCrashed, AllocationsOK: made,
		BytesOK: made << 20, ConfirmedOK: &c}
	row := jobRow{JobResult: s}
	if thresholdColumns[4].header != "Buffers OK" {
		t.Fatalf("column 4 is %q", thresholdColumns[4].header)
	}
	if got, want := thresholdColumns[4].cell(row, render.Style{}), fmt.Sprintf("%d-%d", confirmed, made); got != want {
		t.Errorf("Buffers OK %q, want %q", got, want)
	}
	if got, want := bytesOKCell(row, render.Style{}), "up to "+units.Bytes(made<<20); got != want {
		t.Errorf("Bytes OK %q, want %q", got, want)
	}
	s.ConfirmedOK = nil
	if got, want := thresholdColumns[4].cell(row, render.Style{}), fmt.Sprint(made); got != want {
		t.Errorf("Buffers OK of a job with nothing in flight %q, want %q", got, want)
	}
}

// A comparison none of whose jobs regressed but one could not be told (a range across the tolerance) does
// not close on "no regression": it says how many could not be told. Before, the footer passed a change a
// per-buffer rerun showed was -12.6%.
func TestCompareFooterCountsWhatCouldNotBeTold(t *testing.T) {
	c := &comparison.Comparison{Tolerance: 0.1, Rows: []comparison.ComparisonRow{
		{Strategy: result.Shared, SizeBytes: 1 << 20, BaseOutcome: result.OutcomeCrashed, NewOutcome: result.OutcomeCrashed, BaseAllocations: 1031,
			NewAllocations: 897, Change: comparison.ChangeInconclusive, Why: "a batch was in flight"},
		{Strategy: result.PerDevice, SizeBytes: 1 << 20, BaseOutcome: result.OutcomeFailed, NewOutcome: result.OutcomeFailed, BaseAllocations: 500,
			NewAllocations: 500, Change: comparison.ChangeEqual}}}
	var out bytes.Buffer
	if err := ComparisonTable(&out, c, render.Style{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if got, want := lines[len(lines)-1], "no job regressed beyond the tolerance of 10%, but 1 job of 2 could not be told either way (each row says why)"; got != want {
		t.Errorf("footer %q, want %q", got, want)
	}
}
