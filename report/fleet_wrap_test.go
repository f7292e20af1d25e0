package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// On a terminal, merge's lines of text (the summary, each group's heading, the outliers, the verdict)
// wrap at its width as the run table's verdict bullets do; in a pipe (width 0) each stays one line.
func TestMergeTextWrapsToTheTerminal(t *testing.T) {
	long := fixture.Node(t, "n2", 0.5)
	for i := range long.Devices {
		long.Devices[i].DriverVersion = strings.Repeat("driver-build ", 8) // a group heading far wider than 80
	}
	f := comparison.Merge(inputs(fixture.Node(t, "n1", 1), long, fixture.Node(t, "n3", 1)), 0.1)
	title := table.GroupTitle(&f.Groups[len(f.Groups)-1], render.Terminal(Options{}))
	if utf8.RuneCountInString(title) <= 80 {
		t.Fatalf("the test needs a heading wider than 80 columns: %q", title)
	}
	for _, width := range []int{0, 80} {
		var b bytes.Buffer
		if err := RenderWith(&b, "table", f, Options{Width: width}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if width == 0 && !slices.Contains(strings.Split(out, "\n"), title) {
			t.Errorf("in a pipe the heading %q should be one line:\n%s", title, out)
		}
		for _, l := range strings.Split(out, "\n") {
			table := strings.ContainsAny(l, "│┌└├┬┼┴─") // the table's own width is the table's concern
			if width > 0 && !table && utf8.RuneCountInString(l) > width {
				t.Errorf("at %d columns a line of text is %d wide: %q", width, utf8.RuneCountInString(l), l)
			}
		}
	}
}
