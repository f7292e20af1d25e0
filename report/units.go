package report

import (
	"fmt"
	"io"
	"math"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// FormatBytes writes n with a binary unit, short enough for a table cell.
func FormatBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v := float64(n)
	u := 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f %s", v, units[u])
	}
	return fmt.Sprintf("%.2f %s", v, units[u])
}

// FormatSignedBytes formats a fitted per-buffer figure, which can be negative or fractional.
func FormatSignedBytes(v float64) string {
	if v < 0 {
		return "-" + FormatSignedBytes(-v)
	}
	if v < 1024 {
		return fmt.Sprintf("%.0f B", v)
	}
	return FormatBytes(uint64(math.Round(v)))
}

// NewTable is how every table of the tool is made: headers exactly as written (no upper-casing, which
// mangles names such as OpenCL and µs), and Markdown when asked.
func NewTable(w io.Writer, markdown bool, opts ...tablewriter.Option) *tablewriter.Table {
	opts = append([]tablewriter.Option{tablewriter.WithHeaderAutoFormat(tw.Off)}, opts...)
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	return tablewriter.NewTable(w, opts...)
}
