// Package chart draws the png and svg charts of a run (memory against buffers, or a sweep) and the png of
// a merge's fleet.
package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Chart sizes, for a picture that reads well in a bug ticket.
const chartWidth, chartHeight = 26 * vg.Centimeter, 15 * vg.Centimeter

var palette = []color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, {R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, {R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, {R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

// WritePNG draws the run's chart as PNG.
func WritePNG(w io.Writer, j findings.Judged, _ render.Options) error {
	return writeChart(w, j.Run(), "png")
}

// WriteSVG draws the run's chart as SVG.
func WriteSVG(w io.Writer, j findings.Judged, _ render.Options) error {
	return writeChart(w, j.Run(), "svg")
}

// writeChart draws the run as PNG or SVG (format "png" or "svg"). The plotting library panics on some
// degenerate data; that becomes an error here, never a crash of the command. A run at one buffer size shows host memory
// (solid) and device memory summed over the devices (dashed, where sampled) against buffers allocated, one
// colour per strategy, each first failure marked and labelled. A sweep over several sizes shows the
// threshold (buffers reached) against the buffer size instead.
func writeChart(w io.Writer, r *result.Run, format string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cannot draw the chart: %v", p)
		}
	}()
	var panels []*plot.Plot
	if len(r.Sizes()) > 1 {
		var p *plot.Plot
		p, err = thresholdChart(r)
		panels = []*plot.Plot{p}
	} else {
		panels, err = memoryCharts(r)
	}
	if err != nil {
		return err
	}
	var canvas vg.CanvasSizer
	var out io.WriterTo
	height := chartHeight
	if len(panels) > 1 {
		height = chartHeight * vg.Length(len(panels)) / 1.4
	}
	switch format {
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(chartWidth, height), vgimg.UseDPI(110))
		canvas, out = c, vgimg.PngCanvas{Canvas: c}
	case "svg":
		c := vgsvg.New(chartWidth, height)
		canvas, out = c, c
	default:
		return fmt.Errorf("unknown chart format %q (png or svg)", format)
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4),
		PadRight: vg.Points(12), PadY: vg.Points(10)}
	grid := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*plot.Plot{p}
	}
	for i, row := range plot.Align(grid, tiles, dc) {
		panels[i].Draw(row[0])
	}
	_, err = out.WriteTo(w)
	return err
}

func chartTitle(r *result.Run, what string) string {
	return fmt.Sprintf("clmemprobe: %s\n%s, %s buffers, touch %s", what, render.Plain(result.DeviceModel(r.Devices)), render.SizeSummary(r), r.Config.Touch)
}

// byteUnit picks MiB or GiB for the largest value on an axis.
func byteUnit(maxBytes float64) (float64, string) {
	if maxBytes >= 4<<30 {
		return 1 << 30, "GiB"
	}
	return 1 << 20, "MiB"
}

// memoryCharts draws host RSS against buffers, and under it, where device memory was sampled, device
// memory used summed over the devices: each with its own scale, so a runtime that keeps host memory flat
// while devices fill up shows both.
func memoryCharts(r *result.Run) ([]*plot.Plot, error) {
	hasDevice := false
	for _, s := range r.Jobs {
		for _, smp := range s.Samples {
			hasDevice = hasDevice || len(smp.DeviceSamples) > 0
		}
	}
	host, err := memoryPanel(r, "host memory (process RSS)", func(s result.Sample) (float64, bool) { return float64(s.RSSBytes), true })
	if err != nil || !hasDevice {
		return []*plot.Plot{host}, err
	}
	dev, err := memoryPanel(r, "device memory used, all devices", func(s result.Sample) (float64, bool) {
		return float64(deviceUsed(s)), len(s.DeviceSamples) > 0
	})
	if err != nil {
		return nil, err
	}
	host.X.Label.Text = ""
	dev.Title.Text = ""
	return []*plot.Plot{host, dev}, nil
}

func memoryPanel(r *result.Run, what string, value func(result.Sample) (float64, bool)) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = chartTitle(r, "memory against buffers allocated")
	p.X.Label.Text = "buffers allocated"
	// Lines rise from the lower left: the lower right is where the legend hides least.
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.YOffs, p.Legend.XOffs = vg.Points(6), -vg.Points(6)
	p.X.Tick.Marker = plot.TickerFunc(countTicks)
	var maxY float64
	for _, s := range r.Jobs {
		for _, smp := range s.Samples {
			if v, ok := value(smp); ok {
				maxY = math.Max(maxY, v)
			}
		}
	}
	div, unit := byteUnit(maxY)
	p.Y.Label.Text = what + " (" + unit + ")"
	p.Y.Min = 0
	p.Y.Tick.Marker = plot.TickerFunc(countTicks)
	p.Add(plotter.NewGrid())
	for i, s := range r.Jobs {
		c := palette[i%len(palette)]
		pts := make(plotter.XYs, 0, len(s.Samples))
		for _, smp := range s.Samples {
			if v, ok := value(smp); ok {
				pts = append(pts, plotter.XY{X: float64(smp.Index), Y: v / div})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = c, vg.Points(1.5)
		if i > 0 {
			// Strategies often coincide: vary the dashes so every line stays visible.
			l.Dashes = []vg.Length{vg.Points(float64(2 + 2*i)), vg.Points(2)}
		}
		p.Add(l)
		end, err := markEnd(p, &s, c, pts)
		if err != nil {
			return nil, err
		}
		// Jobs that differ by more than the strategy say how (flags, variant), or their lines read alike.
		name := render.JobName(s.Strategy, s.Flags)
		if s.Variant != "" && len(r.VariantNames()) > 1 {
			name += " " + s.Variant
		}
		if end != nil {
			p.Legend.Add(name+": "+endLabel(&s), l, end)
		} else {
			p.Legend.Add(name+": "+string(s.Outcome), l)
		}
	}
	return p, nil
}

// markEnd puts a cross where a strategy ended other than by completing (first failure, crash, hang); the
// legend says what happened there.
func markEnd(p *plot.Plot, s *result.JobResult, c color.RGBA, pts plotter.XYs) (*plotter.Scatter, error) {
	if s.Outcome == result.OutcomeCompleted || s.Outcome == result.OutcomeUnsupported {
		return nil, nil
	}
	sc, err := plotter.NewScatter(plotter.XYs{pts[len(pts)-1]})
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(5), Shape: draw.CrossGlyph{}}
	p.Add(sc)
	return sc, nil
}

func endLabel(s *result.JobResult) string {
	if f := s.FirstFailure; f != nil {
		return fmt.Sprintf("%s at #%d (%s)", f.Name, f.Index, f.Stage)
	}
	return fmt.Sprintf("%s at #%s", s.Outcome, render.MadeAs(s, "-#")) // a killed batch: its range
}

func deviceUsed(s result.Sample) uint64 {
	var sum uint64
	for _, d := range s.DeviceSamples {
		sum += d.UsedBytes
	}
	return sum
}

func thresholdChart(r *result.Run) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = chartTitle(r, "buffers reached against buffer size")
	p.X.Label.Text = "buffer size (log scale)"
	p.Y.Label.Text = "buffers reached (log scale)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = sizeTicks{sizes: r.Sizes()}
	p.Y.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		ticks := plot.LogTicks{}.Ticks(min, max)
		for i := range ticks {
			if ticks[i].Label != "" {
				ticks[i].Label = shortCount(ticks[i].Value)
			}
		}
		return ticks
	})
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	for i, name := range r.StrategyNames() {
		var pts plotter.XYs
		for _, s := range r.Jobs {
			if s.Strategy == name && s.Outcome != result.OutcomeUnsupported {
				pts = append(pts, plotter.XY{X: float64(s.SizeBytes), Y: math.Max(1, float64(s.AllocationsOK))}) // log axis
			}
		}
		sort.Slice(pts, func(a, b int) bool { return pts[a].X < pts[b].X })
		if len(pts) == 0 {
			continue
		}
		lp, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		c := palette[i%len(palette)]
		lp.Color, lp.Width, sc.Color = c, vg.Points(1.5), c
		p.Add(lp, sc)
		p.Legend.Add(string(name), lp, sc)
	}
	// A log axis needs a range above zero that is not a single point: widen it by a factor each way.
	p.X.Min, p.X.Max = logRange(p.X.Min, p.X.Max)
	p.Y.Min, p.Y.Max = logRange(p.Y.Min, p.Y.Max)
	return p, nil
}

// logRange is a range for a log axis around [lo, hi]: positive, and at least a factor of 4 wide.
func logRange(lo, hi float64) (float64, float64) {
	lo, hi = math.Max(lo, 1), math.Max(hi, 1)
	return lo / 2, math.Max(hi*2, lo*2)
}

// countTicks labels five to ten round values (1, 2 or 5 times a power of ten), written short: 100k, 2.5M.
// A range too narrow for its magnitude (where adding a step would not change a float64) gets its two ends.
func countTicks(min, max float64) []plot.Tick {
	if !(max > min) || max-min < math.Abs(max)*1e-12 || math.IsInf(max-min, 0) {
		return []plot.Tick{{Value: min, Label: shortCount(min)}, {Value: max, Label: shortCount(max)}}
	}
	raw := (max - min) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []plot.Tick
	for v, n := math.Ceil(min/step)*step, 0; v <= max+step*1e-9 && n < 40; v, n = v+step, n+1 {
		ticks = append(ticks, plot.Tick{Value: v, Label: shortCount(v)})
		if minor := v + step/2; minor < max {
			ticks = append(ticks, plot.Tick{Value: minor})
		}
	}
	return ticks
}

func shortCount(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", v/1e6), "0"), ".0") + "M"
	case a >= 1e4:
		return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", v/1e3), "0"), ".") + "k"
	case a >= 10 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}

// sizeTicks labels each swept size.
type sizeTicks struct{ sizes []uint64 }

func (t sizeTicks) Ticks(min, max float64) []plot.Tick {
	sizes := append([]uint64(nil), t.sizes...)
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	var ticks []plot.Tick
	last := 0.0
	for _, s := range sizes {
		label := units.Size(s)
		if last > 0 && float64(s) < 1.5*last {
			label = "" // too close to the previous one to print both (1 MiB and 1 MiB+4 KiB)
		} else {
			last = float64(s)
		}
		ticks = append(ticks, plot.Tick{Value: float64(s), Label: label})
	}
	return ticks
}
