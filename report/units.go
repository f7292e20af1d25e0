package report

import (
	"io"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// NewTable is how every table of the tool is made: headers exactly as written (no upper-casing, which
// mangles names such as OpenCL and µs), and Markdown when asked.
func NewTable(w io.Writer, markdown bool, opts ...tablewriter.Option) *tablewriter.Table {
	opts = append([]tablewriter.Option{tablewriter.WithHeaderAutoFormat(tw.Off)}, opts...)
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	return tablewriter.NewTable(w, opts...)
}

// Downsample keeps at most n samples (n >= 2), evenly spread over the run, the first and the last among them.
func Downsample(s []result.Sample, n int) []result.Sample {
	if n < 2 || len(s) <= n {
		return s
	}
	out := make([]result.Sample, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, s[i*(len(s)-1)/(n-1)])
	}
	return out
}
