package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// writeTable renders the threshold table a person reads in five seconds: one row per strategy (and size),
// then the verdict sentences.
func writeTable(w io.Writer, r *result.Run, opts Options) error {
	st := terminal(opts)
	fmt.Fprintf(w, "clmemprobe %s: %s, platform %s, %s buffers, touch %s\n", st.text(r.Tool.Version), deviceSummary(r, st),
		st.text(r.Platform.Name), sizeSummary(r), st.text(string(r.Config.Touch)))
	if err := thresholdTable(w, r, st); err != nil {
		return err
	}
	for _, v := range r.Verdict {
		fmt.Fprintf(w, "- %s\n", st.text(v))
	}
	return nil
}

// column is one column of the threshold table: its header, alignment, cell, and whether a narrow terminal
// keeps it.
type column struct {
	header  string
	align   tw.Align
	compact bool
	cell    func(s *result.StrategyResult, st style) string
	// short is the column's header and cell on a narrow terminal, where they differ.
	shortHeader string
	short       func(s *result.StrategyResult, st style) string
}

// variantColumn is shown after the strategy when the run has variants.
var variantColumn = column{header: "Variant", align: tw.AlignLeft, compact: true,
	cell: func(s *result.StrategyResult, st style) string { return st.text(result.VariantName(s.Variant)) }}

var thresholdColumns = []column{
	{header: "Strategy", align: tw.AlignLeft, compact: true, cell: func(s *result.StrategyResult, st style) string { return st.text(string(s.Strategy)) }},
	{header: "Size", align: tw.AlignLeft, compact: true, cell: func(s *result.StrategyResult, _ style) string { return units.Size(s.SizeBytes) }},
	{header: "Devices", align: tw.AlignLeft, cell: func(s *result.StrategyResult, _ style) string { return joinInts(s.Devices) }},
	{header: "Outcome", align: tw.AlignLeft, compact: true, cell: outcomeCell},
	{header: "Buffers OK", shortHeader: "Buffers", align: tw.AlignRight, compact: true,
		cell: func(s *result.StrategyResult, _ style) string { return fmt.Sprint(s.AllocationsOK) }},
	{header: "Bytes OK", align: tw.AlignRight, cell: func(s *result.StrategyResult, _ style) string { return units.Bytes(s.BytesOK) }},
	{header: "First failure", align: tw.AlignLeft, compact: true, cell: failureCell, short: shortFailureCell},
	{header: "Limit", align: tw.AlignLeft, compact: true, cell: func(s *result.StrategyResult, st style) string { return st.text(OrDash(string(s.Limit))) }},
	{header: "Host/buffer", align: tw.AlignRight, cell: func(s *result.StrategyResult, _ style) string { return hostCostCell(s) }},
	{header: "Device/buffer", align: tw.AlignRight, cell: func(s *result.StrategyResult, _ style) string { return deviceCostCell(s) }},
}

// thresholdTable writes the table of strategies, as box drawing or as Markdown. On a terminal narrower than
// the whole table, it keeps the columns that say where and why each strategy ended (--wide keeps them all),
// and wraps long cells.
func thresholdTable(w io.Writer, r *result.Run, st style) error {
	cols := thresholdColumns
	if len(r.VariantNames()) > 1 || len(r.Config.Variants) > 0 {
		cols = append([]column{cols[0], variantColumn}, cols[1:]...)
	}
	if !st.markdown && st.Width > 0 && !st.Wide && tableWidth(r, st, cols) > st.Width {
		var keep []column
		for _, c := range cols {
			if !c.compact {
				continue
			}
			if c.shortHeader != "" {
				c.header = c.shortHeader
			}
			if c.short != nil {
				c.cell = c.short
			}
			keep = append(keep, c)
		}
		cols = keep
	}
	if tableWidth(r, st, cols) <= st.Width {
		st.Width = 0 // it fits: nothing to wrap
	}
	headers := make([]string, len(cols))
	aligns := make([]tw.Align, len(cols))
	for i, c := range cols {
		headers[i], aligns[i] = c.header, c.align
	}
	t := st.table(w, tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: aligns}))
	t.Header(headers)
	for i := range r.Strategies {
		row := make([]string, len(cols))
		for j, c := range cols {
			row[j] = c.cell(&r.Strategies[i], st)
		}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// tableWidth is how wide the table of these columns would be, borders and padding included.
func tableWidth(r *result.Run, st style, cols []column) int {
	width := 1
	for _, c := range cols {
		w := utf8.RuneCountInString(c.header)
		for i := range r.Strategies {
			w = max(w, utf8.RuneCountInString(c.cell(&r.Strategies[i], st)))
		}
		width += w + 3
	}
	return width
}

func deviceSummary(r *result.Run, st style) string {
	var names []string
	for _, d := range r.Devices {
		names = append(names, fmt.Sprintf("[%d] %s", d.Index, st.text(d.Name)))
	}
	if len(names) == 0 {
		return "no devices"
	}
	return strings.Join(names, ", ")
}

func sizeSummary(r *result.Run) string {
	var sizes []string
	for _, size := range r.Sizes() {
		sizes = append(sizes, units.Size(size))
	}
	if len(sizes) == 0 {
		return units.Size(r.Config.SizeBytes)
	}
	return strings.Join(sizes, ", ")
}

func joinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ",")
}

func outcomeCell(s *result.StrategyResult, st style) string {
	switch s.Outcome {
	case result.OutcomeCrashed:
		if s.Signal != "" {
			return "crashed (" + st.text(s.Signal) + ")"
		}
		if s.ExitCode != nil {
			return fmt.Sprintf("crashed (exit %d)", *s.ExitCode)
		}
	case result.OutcomeStopped:
		if i := strings.Index(s.Reason, ":"); i > 0 {
			return "stopped (" + st.text(s.Reason[:i]) + ")"
		}
		if s.Reason != "" {
			return "stopped (" + st.text(s.Reason) + ")"
		}
	}
	return st.text(string(s.Outcome))
}

func failureCell(s *result.StrategyResult, st style) string {
	if f := s.FirstFailure; f != nil {
		if f.Name == "" {
			return fmt.Sprintf("#%d at %s", f.Index, st.text(string(f.Stage)))
		}
		return fmt.Sprintf("#%d %s (%d) at %s, dev %d", f.Index, st.text(f.Name), f.Code, st.text(string(f.Stage)), f.Device)
	}
	if s.Outcome == result.OutcomeCrashed || s.Outcome == result.OutcomeHung {
		return fmt.Sprintf("#%d during %s", s.AllocationsOK, st.text(string(s.LastStage)))
	}
	if s.Outcome == result.OutcomeUnsupported {
		return "-"
	}
	return "none"
}

// shortFailureCell is the first failure with its code's number only, for narrow terminals.
func shortFailureCell(s *result.StrategyResult, st style) string {
	if f := s.FirstFailure; f != nil && f.Name != "" {
		return fmt.Sprintf("#%d: %d at %s, dev %d", f.Index, f.Code, st.text(string(f.Stage)), f.Device)
	}
	return failureCell(s, st)
}

// tooFewSamples stands where a cost per buffer cannot be fitted.
const tooFewSamples = "too few samples"

// hostCostCell is the fitted host cost per buffer, or why there is none.
func hostCostCell(s *result.StrategyResult) string {
	if s.Outcome == result.OutcomeUnsupported {
		return "-"
	}
	if !s.JudgedFit().OK {
		return tooFewSamples
	}
	return units.SignedBytes(s.HostBytesPerBuffer)
}

// deviceCostCell is the fitted device cost per buffer of each device with the replication factor, labelled,
// or why there is none.
func deviceCostCell(s *result.StrategyResult) string {
	switch {
	case s.Outcome == result.OutcomeUnsupported:
		return "-"
	case !s.JudgedFit().OK:
		return tooFewSamples
	case len(s.DeviceBytesPerBuffer) == 0:
		return "not measured"
	}
	var parts []string
	for _, d := range s.Devices {
		if v, ok := s.DeviceBytesPerBuffer[fmt.Sprint(d)]; ok {
			parts = append(parts, fmt.Sprintf("%d: %s", d, units.SignedBytes(v)))
		}
	}
	if rf, ok := s.Replication(); ok {
		parts = append(parts, fmt.Sprintf("replication %.2f", rf))
	} else {
		parts = append(parts, "none placed")
	}
	return strings.Join(parts, " ")
}

// writeInventory lists every platform and its devices, one table per platform.
func writeInventory(w io.Writer, inv *result.Inventory, opts Options) error {
	for _, p := range *inv {
		if _, err := fmt.Fprintf(w, "Platform %d: %s (%s), %s\n", p.Index, plain(p.Name), plain(p.Vendor), plain(p.Version)); err != nil {
			return err
		}
		t := terminal(opts).table(w)
		t.Header("Device", "Name", "Type", "Global memory", "Max alloc", "Unified", "Version", "Driver", "PCI")
		for _, d := range p.Devices {
			if err := t.Append([]string{fmt.Sprint(d.Index), plain(d.Name), plain(d.Type), units.Bytes(d.GlobalMemBytes),
				units.Bytes(d.MaxAllocBytes), YesNo(d.HostUnified), plain(shortVersion(d.Version)), plain(d.DriverVersion), OrDash(plain(d.PCIBusID))}); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return nil
}

// shortVersion keeps "OpenCL 3.0" of a device version string that runtimes pad with build details.
func shortVersion(v string) string {
	f := strings.Fields(v)
	if len(f) >= 2 {
		return f[0] + " " + f[1]
	}
	return v
}
