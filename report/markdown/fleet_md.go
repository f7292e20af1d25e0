package markdown

import (
	"fmt"
	"io"

	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// WriteFleetMarkdown renders merge's answer for a ticket or a wiki page.
func WriteFleetMarkdown(w io.Writer, f *comparison.Fleet, opts render.Options) error {
	st := render.Markdown
	st.AllRows = opts.AllRows
	fmt.Fprintf(w, "# %s\n\n**%s.**\n", table.FleetSummary(f), table.FleetVerdict(f))
	for gi := range f.Groups {
		fmt.Fprintf(w, "\n## %s\n\n", table.GroupTitle(&f.Groups[gi], st))
		if err := table.FleetTable(w, &f.Groups[gi], st); err != nil {
			return err
		}
	}
	if lines := table.OutlierLines(f, st); len(lines) > 0 {
		fmt.Fprint(w, "\n## Outliers\n\n")
		for _, l := range lines {
			fmt.Fprintf(w, "- %s\n", l)
		}
	}
	return nil
}
