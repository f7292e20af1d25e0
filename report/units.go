package report

import (
	"fmt"
	"io"
	"math"
	"strings"

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

// Downsample keeps at most n samples (n >= 2), evenly spread over the run, the first and the last among them.
func Downsample(s []Sample, n int) []Sample {
	if n < 2 || len(s) <= n {
		return s
	}
	out := make([]Sample, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, s[i*(len(s)-1)/(n-1)])
	}
	return out
}

// FormatSize writes a buffer size exactly, as a user would type it: "1 MiB", "1 MiB+4 KiB", "1000 B".
// Sizes near pool thresholds differ by a few KiB, so a rounded figure would hide the difference.
func FormatSize(n uint64) string {
	units := []struct {
		v    uint64
		name string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}}
	var parts []string
	rest := n
	for _, u := range units {
		if rest >= u.v && len(parts) < 2 {
			q := rest / u.v
			if len(parts) == 1 && rest%u.v != 0 {
				break
			}
			parts = append(parts, fmt.Sprintf("%d %s", q, u.name))
			rest -= q * u.v
		}
	}
	if rest != 0 || len(parts) == 0 {
		if len(parts) == 0 || len(parts) == 2 {
			return fmt.Sprintf("%d B", n)
		}
		parts = append(parts, fmt.Sprintf("%d B", rest))
	}
	return strings.Join(parts, "+")
}

// FormatNanos writes a duration given in nanoseconds with a unit that keeps three significant digits.
func FormatNanos(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3g s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}
