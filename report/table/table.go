// Package table writes every document for a terminal: tables (drawn to the terminal's width) and
// sentences. Its tables and sentences take a render.Style, so the Markdown report draws the same ones for a
// ticket: the markdown package imports this one, never the reverse.
package table

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/textwidth"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// WriteTable renders the threshold table a person reads in five seconds: one row per strategy (and size),
// then the verdict sentences.
func WriteTable(w io.Writer, j findings.Judged, opts render.Options) error {
	r := j.Run()
	st := render.Terminal(opts)
	fmt.Fprintln(w, wrapWords("", fmt.Sprintf("clmemprobe %s: %s, platform %s, %s buffers, touch %s", st.Text(r.Tool.Version), deviceSummary(r, st),
		st.Text(r.Platform.Name), render.SizeSummary(r), st.Text(string(r.Config.Touch))), st.Width))
	if err := ThresholdTable(w, j, st); err != nil {
		return err
	}
	lines, left := j.Verdict(), 0
	if !opts.AllFindings {
		b := findings.BriefOf(j, findings.BriefBullets)
		lines, left = b.Lines, b.Left
	}
	for _, v := range lines {
		fmt.Fprintln(w, bullet(st.Text(v), st.Width))
	}
	if left > 0 {
		fmt.Fprintln(w, wrapWords("", moreFindings(left, opts.MoreHint), st.Width))
	}
	return nil
}

// moreFindings is the line under a short verdict that says what it left out and where to find it.
func moreFindings(left int, hint string) string {
	s := units.Counted(uint64(left), "more finding") + " in the Markdown report (--format markdown)"
	if hint != "" {
		s += "; " + hint
	}
	return s + "."
}

// bullet is a verdict line: one line in a pipe (scripts grep whole sentences), wrapped at word boundaries to
// the terminal's width with the continuation indented under the text, so no sentence is cut mid-word by
// the terminal.
func bullet(text string, width int) string { return wrapWords("- ", text, width) }

// wrapWords writes lead and text, broken at spaces into lines of at most width columns (0: one line), each
// line after the first indented as far as lead. A word longer than a line stands alone on its line.
func wrapWords(lead, text string, width int) string {
	if width <= textwidth.Width(lead) || textwidth.Width(lead+text) <= width {
		return lead + strings.ReplaceAll(text, string(render.Glue), " ")
	}
	words := strings.Fields(render.GlueUnits(text))
	for i, word := range words {
		words[i] = strings.ReplaceAll(word, string(render.Glue), " ") // a number and its unit stay on one line
	}
	return strings.Join(textwidth.Hang(lead, words, width), "\n")
}

// column is one column of the threshold table: its header, alignment, cell, and whether a narrow terminal
// keeps it.
type column struct {
	header  string
	align   tw.Align
	compact bool
	cell    func(s jobRow, st render.Style) string
	// short is the column's header and cell on a narrow terminal, where they differ.
	shortHeader string
	short       func(s jobRow, st render.Style) string
}

// jobRow is one job of a judged run as a table row: the job's measurements and what the findings said ended
// it (the judgement's, never a limit stored in the job).
type jobRow struct {
	*result.JobResult
	limit result.JobLimit
}

// jobRows is the judged run's jobs as rows, in the run's order.
func jobRows(j findings.Judged) []jobRow {
	r := j.Run()
	rows := make([]jobRow, len(r.Jobs))
	for i := range r.Jobs {
		rows[i] = jobRow{JobResult: &r.Jobs[i], limit: j.Limit(&r.Jobs[i])}
	}
	return rows
}

// flagsColumn is shown after the strategy when the run's buffers had other flags than read-write.
var flagsColumn = column{header: "Flags", align: tw.AlignLeft, compact: true,
	cell: func(s jobRow, st render.Style) string { return st.Text(result.FlagsName(s.Flags)) }}

// variantColumn is shown after the strategy when the run has variants.
var variantColumn = column{header: "Variant", align: tw.AlignLeft, compact: true,
	cell: func(s jobRow, st render.Style) string { return st.Text(result.VariantName(s.Variant)) }}

var thresholdColumns = []column{
	{header: "Strategy", align: tw.AlignLeft, compact: true, cell: func(s jobRow, st render.Style) string { return st.Text(string(s.Strategy)) }},
	{header: "Size", align: tw.AlignLeft, compact: true, cell: func(s jobRow, _ render.Style) string { return units.Size(s.SizeBytes) }},
	{header: "Devices", align: tw.AlignLeft, cell: func(s jobRow, _ render.Style) string { return JoinInts(s.Devices) }},
	{header: "Outcome", align: tw.AlignLeft, compact: true, cell: func(s jobRow, st render.Style) string { return outcomeCell(s.JobResult, st) }},
	{header: "Buffers OK", shortHeader: "Buffers", align: tw.AlignRight, compact: true,
		cell: func(s jobRow, _ render.Style) string {
			return render.MadeAs(s.JobResult, "-")
		}},
	{header: "Bytes OK", align: tw.AlignRight, cell: bytesOKCell},
	{header: "First failure", align: tw.AlignLeft, compact: true, cell: func(s jobRow, st render.Style) string { return failureCell(s.JobResult, st) },
		short: func(s jobRow, st render.Style) string { return shortFailureCell(s.JobResult, st) }},
	{header: "Limit", align: tw.AlignLeft, compact: true, cell: func(s jobRow, st render.Style) string { return st.Text(render.OrDash(string(s.limit.Limit))) }},
	{header: "Host/buffer", align: tw.AlignRight, cell: func(s jobRow, _ render.Style) string { return hostCostCell(s.JobResult) }},
	{header: "Device/buffer", align: tw.AlignRight, cell: func(s jobRow, _ render.Style) string { return DeviceCostCell(s.JobResult) }},
}

// bytesOKCell is the bytes of the buffers a job made; "up to" them where a batch was in flight when its
// worker died, as the Buffers OK cell gives the range (only the confirmed buffers are known to have held).
func bytesOKCell(s jobRow, _ render.Style) string {
	if from, to := s.MadeRange(); from < to {
		return "up to " + units.Bytes(s.BytesOK)
	}
	return units.Bytes(s.BytesOK)
}

// ThresholdTable writes the table of strategies, as box drawing or as Markdown. On a terminal narrower than
// the whole table, it keeps the columns that say where and why each strategy ended (--wide keeps them all),
// and wraps long cells; where a Flags or a Variant column still leaves it too wide, it leaves out more, by
// narrowDrops' order.
func ThresholdTable(w io.Writer, j findings.Judged, st render.Style) error {
	r, rows := j.Run(), jobRows(j)
	cols := thresholdColumns
	if len(r.VariantNames()) > 1 || len(r.Config.Variants) > 0 {
		cols = append([]column{cols[0], variantColumn}, cols[1:]...)
	}
	if r.HasFlags() {
		cols = append([]column{cols[0], flagsColumn}, cols[1:]...)
	}
	narrow := !st.Markdown && st.Width > 0 && !st.Wide
	hidden := 0
	if narrow && tableWidth(rows, st, cols) > st.Width {
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
		hidden = len(cols) - len(keep)
		cols = keep
	}
	if tableWidth(rows, st, cols) <= st.Width {
		st.Width = 0 // it fits: nothing to wrap
	}
	var b bytes.Buffer
	for drops := narrowDrops(r); ; drops = drops[1:] {
		b.Reset()
		if err := strategyRows(&b, rows, st, cols); err != nil {
			return err
		}
		if !narrow || st.Width == 0 || Widest(b.String()) <= st.Width || len(drops) == 0 {
			break
		}
		if i := slices.IndexFunc(cols, func(c column) bool { return c.header == drops[0] }); i >= 0 {
			cols, hidden = slices.Delete(cols, i, i+1), hidden+1
		}
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	return hiddenNote(w, hidden, "--wide")
}

// narrowDrops are the compact columns a terminal still too narrow leaves out, first to last: the size
// where every job had the same one (the line above the table names it), then the first failure (the
// verdict says it of each strategy), the limit, and the size of a sweep. Strategy, flags, variant, outcome
// and buffers, which say which job reached how far, stay.
func narrowDrops(r *result.Run) []string {
	if len(r.Sizes()) <= 1 {
		return []string{"Size", "First failure", "Limit"}
	}
	return []string{"First failure", "Limit", "Size"}
}

// strategyRows draws the threshold table of these columns, one row per job.
func strategyRows(w io.Writer, rows []jobRow, st render.Style, cols []column) error {
	headers := make([]string, len(cols))
	aligns := make([]tw.Align, len(cols))
	for i, c := range cols {
		headers[i], aligns[i] = c.header, c.align
	}
	t := st.Table(w, tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: aligns}))
	t.Header(headers)
	for _, jr := range rows {
		row := make([]string, len(cols))
		for j, c := range cols {
			row[j] = c.cell(jr, st)
		}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// hiddenNote says under a table that a narrow terminal left columns out, and how to see them, so that a
// reader does not take the table for all there is.
func hiddenNote(w io.Writer, hidden int, shows string) error {
	if hidden == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "%d %s hidden: %s\n", hidden, Plural(hidden, "column", "columns"), shows)
	return err
}

// tableWidth is how wide the table of these columns would be, borders and padding included.
func tableWidth(rows []jobRow, st render.Style, cols []column) int {
	width := 1
	for _, c := range cols {
		w := textwidth.Width(c.header)
		for _, jr := range rows {
			w = max(w, textwidth.Width(c.cell(jr, st)))
		}
		width += w + 3
	}
	return width
}

func deviceSummary(r *result.Run, st render.Style) string {
	var names []string
	for _, d := range r.Devices {
		name := fmt.Sprintf("[%d] %s", d.Index, st.Text(d.Name))
		names = append(names, st.Unbroken(name)) // the header wraps between names, not inside one
	}
	if len(names) == 0 {
		return "no devices"
	}
	return strings.Join(names, ", ")
}

func JoinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ",")
}

func outcomeCell(s *result.JobResult, st render.Style) string {
	switch s.Outcome {
	case result.OutcomeCrashed:
		if s.Signal != "" {
			return "crashed (" + st.Text(s.Signal) + ")"
		}
		if s.ExitCode != nil {
			return fmt.Sprintf("crashed (exit %d)", *s.ExitCode)
		}
	case result.OutcomeStopped:
		if w := s.StopCause.Words(); w != "" {
			return "stopped (" + w + ")"
		}
	}
	return st.Text(string(s.Outcome))
}

func failureCell(s *result.JobResult, st render.Style) string {
	if f := s.FirstFailure; f != nil {
		if f.Name == "" {
			return fmt.Sprintf("#%d at %s", f.Index, st.Text(string(f.Stage)))
		}
		return fmt.Sprintf("#%d %s (%d) at %s, dev %d", f.Index, st.Text(f.Name), f.Code, st.Text(string(f.Stage)), f.Device)
	}
	if s.Outcome == result.OutcomeCrashed || s.Outcome == result.OutcomeHung {
		return fmt.Sprintf("#%s during %s", render.MadeAs(s, "-#"), st.Text(string(s.LastStage)))
	}
	if s.Outcome == result.OutcomeWrong {
		return "#0 fill not written"
	}
	if s.Outcome == result.OutcomeUnsupported {
		return "-"
	}
	return "none"
}

// shortFailureCell is the first failure with its code's number only, for narrow terminals.
func shortFailureCell(s *result.JobResult, st render.Style) string {
	if f := s.FirstFailure; f != nil && f.Name != "" {
		return fmt.Sprintf("#%d: %d at %s, dev %d", f.Index, f.Code, st.Text(string(f.Stage)), f.Device)
	}
	return failureCell(s, st)
}

// tooFewSamples stands where a cost per buffer cannot be fitted.
const tooFewSamples = "too few samples"

// hostCostCell is the fitted host cost per buffer, or why there is none.
func hostCostCell(s *result.JobResult) string {
	if s.Outcome == result.OutcomeUnsupported {
		return "-"
	}
	if !s.JudgedFit().OK {
		return tooFewSamples
	}
	return units.SignedBytes(s.HostBytesPerBuffer)
}

// DeviceCostCell is the fitted device cost per buffer of each device with the replication factor, labelled,
// or why there is none.
func DeviceCostCell(s *result.JobResult) string {
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

// inventoryHeaders are the device table's columns; inventoryDrop the order in which a narrow terminal
// leaves them out, the least telling first (the name, the memory and the device number stay).
var (
	inventoryHeaders = []string{"Device", "Name", "Type", "Global memory", "Max alloc", "Unified", "Version", "Driver", "PCI"}
	inventoryDrop    = []int{8, 7, 6, 5, 2, 4}
)

// WriteInventory lists every platform and its devices, one table per platform.
func WriteInventory(w io.Writer, inv *result.Inventory, opts render.Options) error {
	st := render.Terminal(opts)
	for _, p := range *inv {
		if _, err := fmt.Fprintln(w, wrapWords("", fmt.Sprintf("Platform %d: %s (%s), %s", p.Index, render.Plain(p.Name), render.Plain(p.Vendor), render.Plain(p.Version)), st.Width)); err != nil {
			return err
		}
		if len(p.Devices) == 0 {
			// A table of headers alone reads as output that went missing.
			if _, err := fmt.Fprintln(w, "(no devices)"); err != nil {
				return err
			}
			continue
		}
		var rows [][]string
		for _, d := range p.Devices {
			rows = append(rows, []string{fmt.Sprint(d.Index), st.Unbroken(render.Plain(d.Name)), render.Plain(d.Type), units.Bytes(d.GlobalMemBytes),
				units.Bytes(d.MaxAllocBytes), render.YesNo(d.HostUnified), render.Plain(shortVersion(d.Version)), render.Plain(d.DriverVersion), render.OrDash(render.Plain(d.PCIBusID))})
		}
		if err := fittedTable(w, st, inventoryHeaders, rows, inventoryDrop, "--wide"); err != nil {
			return err
		}
	}
	return nil
}

// renderRows draws a table of the kept columns of rows under headers.
func renderRows(t *tablewriter.Table, headers []string, rows [][]string, keep []int) error {
	t.Header(headers)
	for _, r := range rows {
		if err := t.Append(pickColumns(r, keep)); err != nil {
			return err
		}
	}
	return t.Render()
}

// shortVersion keeps "OpenCL 3.0" of a device version string that runtimes pad with build details.
func shortVersion(v string) string {
	f := strings.Fields(v)
	if len(f) >= 2 {
		return f[0] + " " + f[1]
	}
	return v
}

// fittedTable draws a table of headers and rows as wide as the terminal of st allows: while the drawn table
// is wider, it leaves out the next column of drop (indices, least useful first), and then says under it how
// many columns it left out and what shows them. A pipe, Markdown or --wide gets every column.
func fittedTable(w io.Writer, st render.Style, headers []string, rows [][]string, drop []int, shows string) error {
	gone := map[int]bool{}
	for {
		var keep []int
		for i := range headers {
			if !gone[i] {
				keep = append(keep, i)
			}
		}
		var b bytes.Buffer
		if err := renderRows(st.Table(&b), pickColumns(headers, keep), rows, keep); err != nil {
			return err
		}
		if st.Markdown || st.Width <= 0 || st.Wide || len(gone) == len(drop) || (Widest(b.String()) <= st.Width && !overWrapped(b.String(), len(rows))) {
			if _, err := w.Write(b.Bytes()); err != nil {
				return err
			}
			return hiddenNote(w, len(gone), shows)
		}
		gone[drop[len(gone)]] = true
	}
}

// overWrapped reports whether a drawn table of rows rows had to wrap its cells so far that a row takes
// more than two lines on average (its header two): a name over five lines reads worse than a column left
// out.
func overWrapped(table string, rows int) bool {
	const borders, header = 3, 2
	return strings.Count(strings.TrimSuffix(table, "\n"), "\n")+1 > borders+header+2*rows
}

// Widest is the width of the longest line of s, in screen columns.
func Widest(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, textwidth.Width(l))
	}
	return n
}

// pickColumns is the cells of the kept columns.
func pickColumns(cells []string, keep []int) []string {
	out := make([]string, len(keep))
	for i, k := range keep {
		out[i] = cells[k]
	}
	return out
}
