package markdown

import (
	"fmt"
	"io"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// writeSitesMarkdown writes every site, with its whole stack, for a bug ticket.
func writeSitesMarkdown(w io.Writer, t *result.Trace) {
	l := t.Ledger
	if l == nil || len(l.Sites) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Where the allocations were made\n\n%s\n\n", render.MdText(table.LedgerNote(l)))
	fmt.Fprint(w, "| site | context | created | released | live at failure | live at end | peak | stack |\n|:--|--:|--:|--:|--:|--:|--:|:--|\n")
	for _, s := range l.Sites {
		fmt.Fprintf(w, "| %s%s%s | %d | %d (%s) | %d (%s) | %s | %s | %s | %s |\n", table.SampledMark(s), table.AllocMark(s), render.MdText(s.Name()), s.Context, s.Created, units.Bytes(s.CreatedB),
			s.Released, units.Bytes(s.ReleasedB), table.AtFailureText(t, s), table.LiveText(s.Live, s.LiveB), render.MdText(table.PeakText(s)), render.MdText(table.StackText(s)))
	}
}
