package markdown

import (
	"fmt"
	"io"

	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// WriteComparisonMarkdown renders a comparison for a ticket or a pull request: a heading, the same table in
// Markdown, and the verdict.
func WriteComparisonMarkdown(w io.Writer, c *comparison.Comparison, _ render.Options) error {
	if _, err := fmt.Fprint(w, "# clmemprobe compare\n\n"); err != nil {
		return err
	}
	return table.ComparisonTable(w, c, render.Markdown)
}
