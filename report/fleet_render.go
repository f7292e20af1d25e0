package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
)

// fleetSummary is merge's first line.
func fleetSummary(f *comparison.Fleet) string {
	return fmt.Sprintf("clmemprobe merge: %d %s in %d %s, tolerance %.0f%%", f.Results, Plural(f.Results, "result", "results"), len(f.Groups),
		Plural(len(f.Groups), "group", "groups"), 100*f.Tolerance)
}

// fleetVerdict is merge's last line.
func fleetVerdict(f *comparison.Fleet) string {
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

// groupTitle says what the runs of a group share.
func groupTitle(g *comparison.FleetGroup, st style) string {
	budget := fmt.Sprintf("budget %d buffers", g.MaxAllocs)
	if g.MaxBytes > 0 {
		budget += " or " + units.Bytes(g.MaxBytes)
	}
	return fmt.Sprintf("%s, driver %s (%s), touch %s, %s: %d %s", st.text(g.DeviceModel), st.text(g.DriverVersion), st.text(g.Platform),
		g.Touch, budget, g.Nodes, Plural(g.Nodes, "result", "results"))
}

// fleetTable writes one group's jobs: a median row for each job, then a row for each node. A terminal
// narrower than 160 columns gets where and how far off, not what it cost; one still too narrow for that
// loses the outcome too (an outlier's verdict says how it is off).
func fleetTable(w io.Writer, g *comparison.FleetGroup, st style) error {
	keep := []bool{true, true, true, true, true, true, true, true, true, true, true}
	narrow := !st.markdown && st.Width > 0 && !st.Wide
	if narrow && st.Width < 160 {
		keep = []bool{true, true, false, true, false, true, true, true, false, false, true}
	}
	var b bytes.Buffer
	for _, drop := range []int{5, -1} {
		b.Reset()
		if err := fleetRows(&b, g, st, keep); err != nil {
			return err
		}
		if !narrow || widest(b.String()) <= st.Width || drop < 0 {
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
func fleetRows(w io.Writer, g *comparison.FleetGroup, st style, keep []bool) error {
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
	t := st.table(w)
	t.Header(pick(headers))
	cost := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return units.SignedBytes(*v)
	}
	for _, j := range g.Jobs {
		spread := fmt.Sprintf("spread %.1f%% (%d-%d)", 100*j.Spread, j.MinAllocs, j.MaxAllocs)
		if err := t.Append(pick([]string{st.text(jobName(j.Strategy, j.Flags)), units.Size(j.SizeBytes), st.text(j.Variant),
			fmt.Sprintf("median of %d", j.Count()), "", string(j.Outcome), units.Count(j.MedianAllocs), spread,
			cost(j.MedianHostCost), cost(j.MedianDeviceCost), ""})); err != nil {
			return err
		}
		rows, healthy := shownRows(&j, st.AllRows)
		labels := nodeLabels(rows, !keep[4])
		for ri, r := range rows {
			verdict := "ok"
			if r.Outlier {
				verdict = "OUTLIER: " + st.text(r.Why)
			}
			if err := t.Append(pick([]string{"", "", "", st.text(labels[ri]), st.text(r.Source), string(r.Outcome), strconv.FormatUint(r.AllocationsOK, 10),
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
			labels[i] = r.Node + string(glue) + "(" + distinctTail(r.Source, same) + ")" // one unbroken cell line
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

// outlierLines are the outliers, one sentence each.
func outlierLines(f *comparison.Fleet, st style) []string {
	var out []string
	for gi := range f.Groups {
		g := &f.Groups[gi]
		for _, j := range g.Jobs {
			for r := range j.Outliers() {
				out = append(out, fmt.Sprintf("%s (%s): %s at %s, variant %s, on %s driver %s: %s.", st.text(r.Node), st.code(r.Source),
					st.text(jobName(j.Strategy, j.Flags)), units.Size(j.SizeBytes), st.text(j.Variant), st.text(g.DeviceModel), st.text(g.DriverVersion), st.text(r.Why)))
			}
		}
	}
	return out
}

// writeFleetText renders merge's answer for a terminal.
func writeFleetText(w io.Writer, f *comparison.Fleet, opts Options) error {
	st := terminal(opts)
	// Every line of text, as the run table's verdict bullets, is wrapped at the terminal's width (st.Width
	// is 0 in a pipe: one line each, for scripts that grep whole sentences).
	fmt.Fprintln(w, wrapWords("", fleetSummary(f), st.Width))
	for gi := range f.Groups {
		fmt.Fprintf(w, "\n%s\n", wrapWords("", groupTitle(&f.Groups[gi], st), st.Width))
		if err := fleetTable(w, &f.Groups[gi], st); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	for _, l := range outlierLines(f, st) {
		fmt.Fprintln(w, bullet("OUTLIER "+l, st.Width))
	}
	_, err := fmt.Fprintln(w, wrapWords("", fleetVerdict(f), st.Width))
	return err
}

// writeFleetMarkdown renders merge's answer for a ticket or a wiki page.
func writeFleetMarkdown(w io.Writer, f *comparison.Fleet, opts Options) error {
	st := markdown
	st.AllRows = opts.AllRows
	fmt.Fprintf(w, "# %s\n\n**%s.**\n", fleetSummary(f), fleetVerdict(f))
	for gi := range f.Groups {
		fmt.Fprintf(w, "\n## %s\n\n", groupTitle(&f.Groups[gi], st))
		if err := fleetTable(w, &f.Groups[gi], st); err != nil {
			return err
		}
	}
	if lines := outlierLines(f, st); len(lines) > 0 {
		fmt.Fprint(w, "\n## Outliers\n\n")
		for _, l := range lines {
			fmt.Fprintf(w, "- %s\n", l)
		}
	}
	return nil
}

// writeFleetCSV writes one row per node and job, with its group and the job's median.
func writeFleetCSV(w io.Writer, f *comparison.Fleet, _ Options) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"platform", "device_model", "driver_version", "touch", "max_allocs", "max_bytes", "strategy", "size_bytes", "variant",
		"flags", "node", "source", "outcome", "allocations_ok", "median_allocations_ok", "deviation", "host_bytes_per_buffer", "device_bytes_per_buffer",
		"outlier", "why"}); err != nil {
		return err
	}
	num := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	for _, g := range f.Groups {
		for _, j := range g.Jobs {
			for r := range j.All() {
				row := []string{csvText(g.Platform), csvText(g.DeviceModel), csvText(g.DriverVersion), string(g.Touch), strconv.FormatUint(g.MaxAllocs, 10),
					strconv.FormatUint(g.MaxBytes, 10), string(j.Strategy), strconv.FormatUint(j.SizeBytes, 10), csvText(j.Variant),
					csvText(j.Flags), csvText(r.Node), csvText(r.Source), string(r.Outcome), strconv.FormatUint(r.AllocationsOK, 10),
					strconv.FormatFloat(j.MedianAllocs, 'f', -1, 64), strconv.FormatFloat(r.Deviation, 'f', 6, 64), num(r.HostCost), num(r.DeviceCost),
					strconv.FormatBool(r.Outlier), csvText(r.Why)}
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvText keeps a foreign string from being read as a formula by a spreadsheet: a cell that starts with
// =, +, -, @ or a control character gets a leading apostrophe.
func csvText(s string) string {
	s = plain(s)
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// writeFleetPNG draws each node's threshold, nodes grouped by driver version (and device model), one
// colour per job, outliers ringed.
func writeFleetPNG(w io.Writer, f *comparison.Fleet, _ Options) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cannot draw the chart: %v", p)
		}
	}()
	p := plot.New()
	p.Title.Text = "clmemprobe merge: buffers reached per node, by driver version"
	p.Y.Label.Text = "buffers reached"
	p.Y.Tick.Marker = plot.TickerFunc(countTicks)
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	l := layOutFleet(f)
	p.X.Tick.Marker = plot.ConstantTicks(l.ticks)
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	p.X.Min, p.X.Max = -0.5, math.Max(l.width-0.5, 0.5)
	// Headroom: the group labels sit just above the highest point, the legend above them.
	p.Y.Min, p.Y.Max = 0, l.maxY*1.7
	if err := plotFleetJobs(p, f, l); err != nil {
		return err
	}
	if err := plotFleetGroups(p, l); err != nil {
		return err
	}
	c := vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(110))
	p.Draw(draw.New(c))
	_, err = vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}

// fleetSlot is one node of one group on the chart: a result, by the file it came from.
type fleetSlot struct {
	group  int
	source string
}

// fleetLayout is where the chart puts each node: one x position per node, groups side by side with a gap
// between them, each labelled with its device model and driver.
type fleetLayout struct {
	xOf         map[fleetSlot]float64
	ticks       []plot.Tick
	dividers    []float64
	groupLabels plotter.XYLabels
	width, maxY float64
}

func layOutFleet(f *comparison.Fleet) *fleetLayout {
	l := &fleetLayout{xOf: map[fleetSlot]float64{}, maxY: 1}
	x := 0.0
	for gi, g := range f.Groups {
		if gi > 0 {
			x++
			l.dividers = append(l.dividers, x-1)
		}
		first := x
		for _, j := range g.Jobs {
			for r := range j.All() {
				l.maxY = math.Max(l.maxY, float64(r.AllocationsOK))
				k := fleetSlot{gi, r.Source}
				if _, ok := l.xOf[k]; !ok {
					l.xOf[k] = x
					l.ticks = append(l.ticks, plot.Tick{Value: x, Label: shortLabel(plain(r.Node), 18)})
					x++
				}
			}
		}
		l.groupLabels.XYs = append(l.groupLabels.XYs, plotter.XY{X: first})
		l.groupLabels.Labels = append(l.groupLabels.Labels, shortLabel(plain(g.DeviceModel), 28)+"\ndriver "+shortLabel(plain(g.DriverVersion), 24))
	}
	l.width = x
	return l
}

// plotFleetJobs adds a series of points per job (one colour per job name, over every group) and rings the
// outliers.
func plotFleetJobs(p *plot.Plot, f *comparison.Fleet, l *fleetLayout) error {
	series := map[string]int{}
	var outliers plotter.XYs
	for gi, g := range f.Groups {
		for _, j := range g.Jobs {
			name := fmt.Sprintf("%s %s", j.Strategy, units.Size(j.SizeBytes))
			if j.Flags != result.FlagsName("") {
				name += " " + plain(j.Flags)
			}
			if j.Variant != result.DefaultVariant {
				name += " " + plain(j.Variant)
			}
			idx, seen := series[name]
			if !seen {
				idx = len(series)
				series[name] = idx
			}
			var pts plotter.XYs
			// Each job sits a little to the side within a node's slot, so equal thresholds stay visible.
			shift := 0.12 * (float64(idx) - float64(len(g.Jobs)-1)/2)
			for r := range j.All() {
				pt := plotter.XY{X: l.xOf[fleetSlot{gi, r.Source}] + shift, Y: float64(r.AllocationsOK)}
				pts = append(pts, pt)
				if r.Outlier {
					outliers = append(outliers, pt)
				}
			}
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			sc.Color, sc.Shape, sc.Radius = palette[idx%len(palette)], draw.CircleGlyph{}, vg.Points(3.5)
			p.Add(sc)
			if !seen {
				p.Legend.Add(shortLabel(name, 40), sc)
			}
		}
	}
	if len(outliers) > 0 {
		ring, err := plotter.NewScatter(outliers)
		if err != nil {
			return err
		}
		ring.Color, ring.Shape, ring.Radius = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, draw.RingGlyph{}, vg.Points(7)
		p.Add(ring)
		p.Legend.Add("outlier", ring)
	}
	return nil
}

// plotFleetGroups draws the dashed lines between groups and the groups' labels above the points.
func plotFleetGroups(p *plot.Plot, l *fleetLayout) error {
	for _, d := range l.dividers {
		line, err := plotter.NewLine(plotter.XYs{{X: d, Y: 0}, {X: d, Y: l.maxY * 1.3}})
		if err != nil {
			return err
		}
		line.Dashes, line.Color = []vg.Length{vg.Points(4), vg.Points(3)}, color.Gray{Y: 0x80}
		p.Add(line)
	}
	for i := range l.groupLabels.XYs {
		l.groupLabels.XYs[i].Y = l.maxY * 1.08
	}
	if len(l.groupLabels.XYs) == 0 {
		return nil
	}
	labels, err := plotter.NewLabels(l.groupLabels)
	if err != nil {
		return err
	}
	p.Add(labels)
	return nil
}

// shortLabel cuts a label to n runes, with an ellipsis.
func shortLabel(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// jobName is a strategy with its buffers' flags where they are not the default: "shared use-host-ptr".
func jobName(st result.Strategy, flags string) string {
	if flags == "" || flags == result.FlagsName("") {
		return string(st)
	}
	return string(st) + " " + flags
}
