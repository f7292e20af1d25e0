package table

import (
	"fmt"
	"io"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// WriteComparison renders a comparison as a table.
func WriteComparison(w io.Writer, c *comparison.Comparison, opts render.Options) error {
	return ComparisonTable(w, c, render.Terminal(opts))
}

// ComparisonTable writes the rows of a comparison in the style, then its verdict. A terminal too narrow for
// every column loses the host cost first, then the outcomes (the verdict cell says what changed).
func ComparisonTable(w io.Writer, c *comparison.Comparison, st render.Style) error {
	headers := []string{"Strategy", "Size", "Base", "New", "Buffers base -> new", "Change", "Host/buffer base -> new", "Verdict"}
	var rows [][]string
	for _, r := range c.Rows {
		change := "-"
		if r.BaseAllocations > 0 && r.NewOutcome != "" && r.Change != comparison.ChangeNotComparable {
			change = r.ChangeRange()
		}
		verdict := r.Change
		if r.Why != "" {
			verdict += ": " + st.Text(r.Why)
		}
		// A side the row does not have (missing, added) shows "-", not zeros.
		side := func(outcome result.Outcome, f string) string {
			if outcome == "" {
				return "-"
			}
			return f
		}
		buffers := side(r.BaseOutcome, comparison.Made(r.BaseAllocations, r.BaseConfirmed)) + " -> " + side(r.NewOutcome, comparison.Made(r.NewAllocations, r.NewConfirmed))
		host := side(r.BaseOutcome, units.SignedBytes(r.BaseHostPerBuf)) + " -> " + side(r.NewOutcome, units.SignedBytes(r.NewHostPerBuf))
		name := string(r.Strategy)
		if r.Flags != "" {
			name += " " + st.Text(r.Flags)
		}
		if r.Variant != "" {
			name += " (" + st.Text(r.Variant) + ")"
		}
		rows = append(rows, []string{name, units.Size(r.SizeBytes), render.OrDash(string(r.BaseOutcome)), render.OrDash(string(r.NewOutcome)),
			buffers, change, host, verdict})
	}
	if err := fittedTable(w, st, headers, rows, []int{6, 2, 3}, "--wide"); err != nil {
		return err
	}
	if st.Markdown {
		// A line right under a Markdown table would be read as one more of its rows.
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	apart := 0
	for _, r := range c.Rows {
		if r.Change == comparison.ChangeNotComparable {
			apart++
		}
	}
	if apart > 0 {
		what := fmt.Sprintf("%s of %d not comparable", units.Counted(uint64(apart), "job"), len(c.Rows))
		if apart == len(c.Rows) {
			what = "nothing compared"
		}
		if _, err := fmt.Fprintln(w, wrapWords("", what+": the two runs asked them differently (each row says how); run both with the same --variant, --flags and --size to compare them", st.Width)); err != nil {
			return err
		}
		if apart == len(c.Rows) {
			return nil
		}
	}
	if c.Regressed {
		_, err := fmt.Fprintf(w, "REGRESSED beyond the tolerance of %.0f%%\n", 100*c.Tolerance)
		return err
	}
	if n := inconclusive(c); n > 0 {
		// "No regression" would pass a job whose change could not be told (a range across the tolerance, a
		// stop before any limit): say how many, and that their rows say why.
		_, err := fmt.Fprintf(w, "no job regressed beyond the tolerance of %.0f%%, but %s of %d could not be told either way (each row says why)\n",
			100*c.Tolerance, units.Counted(uint64(n), "job"), len(c.Rows))
		return err
	}
	_, err := fmt.Fprintf(w, "no regression beyond the tolerance of %.0f%%\n", 100*c.Tolerance)
	return err
}

// inconclusive counts the comparison's rows whose change could not be told.
func inconclusive(c *comparison.Comparison) int {
	n := 0
	for _, r := range c.Rows {
		if r.Change == comparison.ChangeInconclusive {
			n++
		}
	}
	return n
}
