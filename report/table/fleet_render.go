package table

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// FleetSummary is merge's first line.
func FleetSummary(f *comparison.Fleet) string {
	return fmt.Sprintf("clmemprobe merge: %d %s in %d %s, tolerance %.0f%%", f.Results, Plural(f.Results, "result", "results"), len(f.Groups),
		Plural(len(f.Groups), "group", "groups"), 100*f.Tolerance)
}

// FleetVerdict is merge's last line.
func FleetVerdict(f *comparison.Fleet) string {
	if f.Outliers == 0 {
		return fmt.Sprintf("no outliers beyond the tolerance of %.0f%%", 100*f.Tolerance)
	}
	return fmt.Sprintf("%d %s beyond the tolerance of %.0f%%", f.Outliers, Plural(f.Outliers, "OUTLIER", "OUTLIERS"), 100*f.Tolerance)
}

// Plural is one or many, as n asks.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// GroupTitle says what the runs of a group share.
func GroupTitle(g *comparison.FleetGroup, st render.Style) string {
	budget := fmt.Sprintf("budget %d buffers", g.MaxAllocs)
	if g.MaxBytes > 0 {
		budget += " or " + units.Bytes(g.MaxBytes)
	}
	return fmt.Sprintf("%s, driver %s (%s), touch %s, %s: %d %s", st.Text(g.DeviceModel), st.Text(g.DriverVersion), st.Text(g.Platform),
		g.Touch, budget, g.Nodes, Plural(g.Nodes, "result", "results"))
}

// FleetTable writes one group's jobs: a median row for each job, then a row for each node. A terminal
// narrower than 160 columns gets where and how far off, not what it cost; one still too narrow for that
// loses the outcome too (an outlier's verdict says how it is off).
func FleetTable(w io.Writer, g *comparison.FleetGroup, st render.Style) error {
	keep := []bool{true, true, true, true, true, true, true, true, true, true, true}
	narrow := !st.Markdown && st.Width > 0 && !st.Wide
	if narrow && st.Width < 160 {
		keep = []bool{true, true, false, true, false, true, true, true, false, false, true}
	}
	var b bytes.Buffer
	for _, drop := range []int{5, -1} {
		b.Reset()
		if err := fleetRows(&b, g, st, keep); err != nil {
			return err
		}
		if !narrow || Widest(b.String()) <= st.Width || drop < 0 {
			break
		}
		keep[drop] = false
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	hidden := 0
	for _, k := range keep {
		if !k {
			hidden++
		}
	}
	return hiddenNote(w, hidden, "--wide")
}

// fleetRows draws the kept columns of one group's table.
func fleetRows(w io.Writer, g *comparison.FleetGroup, st render.Style, keep []bool) error {
	headers := []string{"Strategy", "Size", "Variant", "Node", "Result", "Outcome", "Buffers", "vs median", "Host/buffer", "Device/buffer", "Verdict"}
	pick := func(cells []string) []string {
		var out []string
		for i, c := range cells {
			if keep[i] {
				out = append(out, c)
			}
		}
		return out
	}
	t := st.Table(w)
	t.Header(pick(headers))
	cost := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return units.SignedBytes(*v)
	}
	for _, j := range g.Jobs {
		spread := fmt.Sprintf("spread %.1f%% (%d-%d)", 100*j.Spread, j.MinAllocs, j.MaxAllocs)
		if err := t.Append(pick([]string{st.Text(render.JobName(j.Strategy, j.Flags)), units.Size(j.SizeBytes), st.Text(j.Variant),
			fmt.Sprintf("median of %d", j.Count()), "", string(j.Outcome), units.Count(j.MedianAllocs), spread,
			cost(j.MedianHostCost), cost(j.MedianDeviceCost), ""})); err != nil {
			return err
		}
		rows, healthy := shownRows(&j, st.AllRows)
		labels := nodeLabels(rows, !keep[4])
		for ri, r := range rows {
			verdict := "ok"
			if r.Outlier {
				verdict = "OUTLIER: " + st.Text(r.Why)
			}
			if err := t.Append(pick([]string{"", "", "", st.Text(labels[ri]), st.Text(r.Source), string(r.Outcome), strconv.FormatUint(r.AllocationsOK, 10),
				fmt.Sprintf("%+.1f%%", 100*r.Deviation), cost(r.HostCost), cost(r.DeviceCost), verdict})); err != nil {
				return err
			}
		}
		if healthy > 0 {
			if err := t.Append(pick([]string{"", "", "", fmt.Sprintf("and %s healthy %s", grouped(healthy), Plural(healthy, "node", "nodes")),
				"", "", "", "", "", "", ""})); err != nil {
				return err
			}
		}
	}
	return t.Render()
}

// nodeLabels names each row's node. Where the table hides the file column and one host name stands for
// several files (runs of one machine, or of VMs all called "vm"), a node is followed by as much of its
// file's path as tells those files apart.
func nodeLabels(rows []comparison.FleetRow, sourceHidden bool) []string {
	labels := make([]string, len(rows))
	sources := map[string][]string{}
	for i, r := range rows {
		labels[i] = r.Node
		sources[r.Node] = append(sources[r.Node], r.Source)
	}
	if !sourceHidden {
		return labels
	}
	for i, r := range rows {
		if same := sources[r.Node]; len(same) > 1 {
			labels[i] = r.Node + string(render.Glue) + "(" + distinctTail(r.Source, same) + ")" // one unbroken cell line
		}
	}
	return labels
}

// distinctTail is the fewest trailing path elements of source that no other of sources ends in.
func distinctTail(source string, sources []string) string {
	parts := strings.Split(source, "/")
	for k := 1; k < len(parts); k++ {
		tail := strings.Join(parts[len(parts)-k:], "/")
		clash := false
		for _, o := range sources {
			clash = clash || o != source && (o == tail || strings.HasSuffix(o, "/"+tail))
		}
		if !clash {
			return tail
		}
	}
	return source
}

// FleetRowLimit is how many nodes a job of a table shows one by one; a job with more shows its outliers
// and a count of the healthy rest (merge --all shows every one). A terminal or a ticket stays readable
// at 100,000 nodes, and the fleets of a rack or two are shown whole as before.
const FleetRowLimit = 25

// shownRows are the rows of a job a table shows, and how many healthy ones it leaves out.
func shownRows(j *comparison.FleetJob, all bool) ([]comparison.FleetRow, int) {
	if all || j.Count() <= FleetRowLimit {
		return slices.Collect(j.All()), 0
	}
	out := slices.Collect(j.Outliers())
	return out, j.Count() - len(out)
}

// grouped writes a count with a comma between thousands: 100,000 nodes.
func grouped(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// OutlierLines are the outliers, one sentence each.
func OutlierLines(f *comparison.Fleet, st render.Style) []string {
	var out []string
	for gi := range f.Groups {
		g := &f.Groups[gi]
		for _, j := range g.Jobs {
			for r := range j.Outliers() {
				out = append(out, fmt.Sprintf("%s (%s): %s at %s, variant %s, on %s driver %s: %s.", st.Text(r.Node), st.Code(r.Source),
					st.Text(render.JobName(j.Strategy, j.Flags)), units.Size(j.SizeBytes), st.Text(j.Variant), st.Text(g.DeviceModel), st.Text(g.DriverVersion), st.Text(r.Why)))
			}
		}
	}
	return out
}

// WriteFleetText renders merge's answer for a terminal.
func WriteFleetText(w io.Writer, f *comparison.Fleet, opts render.Options) error {
	st := render.Terminal(opts)
	// Every line of text, as the run table's verdict bullets, is wrapped at the terminal's width (st.Width
	// is 0 in a pipe: one line each, for scripts that grep whole sentences).
	fmt.Fprintln(w, wrapWords("", FleetSummary(f), st.Width))
	for gi := range f.Groups {
		fmt.Fprintf(w, "\n%s\n", wrapWords("", GroupTitle(&f.Groups[gi], st), st.Width))
		if err := FleetTable(w, &f.Groups[gi], st); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	for _, l := range OutlierLines(f, st) {
		fmt.Fprintln(w, bullet("OUTLIER "+l, st.Width))
	}
	_, err := fmt.Fprintln(w, wrapWords("", FleetVerdict(f), st.Width))
	return err
}
