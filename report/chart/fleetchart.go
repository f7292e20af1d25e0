package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// WriteFleetPNG draws each node's threshold, nodes grouped by driver version (and device model), one
// colour per job, outliers ringed.
func WriteFleetPNG(w io.Writer, f *comparison.Fleet, _ render.Options) (err error) {
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
					l.ticks = append(l.ticks, plot.Tick{Value: x, Label: shortLabel(render.Plain(r.Node), 18)})
					x++
				}
			}
		}
		l.groupLabels.XYs = append(l.groupLabels.XYs, plotter.XY{X: first})
		l.groupLabels.Labels = append(l.groupLabels.Labels, shortLabel(render.Plain(g.DeviceModel), 28)+"\ndriver "+shortLabel(render.Plain(g.DriverVersion), 24))
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
				name += " " + render.Plain(j.Flags)
			}
			if j.Variant != result.DefaultVariant {
				name += " " + render.Plain(j.Variant)
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
