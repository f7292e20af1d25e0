package markdown

import (
	"io"

	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// WriteExchangeMarkdown renders an exchange run for a ticket.
func WriteExchangeMarkdown(w io.Writer, e findings.JudgedExchange, _ render.Options) error {
	return table.WriteExchange(w, e, render.Markdown)
}
