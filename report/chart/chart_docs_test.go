package chart_test

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"testing"

	"github.com/clmemprobe/clmemprobe/report"
	goldenset "github.com/clmemprobe/clmemprobe/report/internal/golden"
)

// Every golden document a chart format renders (the runs, the sweep, the merge) is drawn: the PNG decodes
// to an image of the chart's size, the SVG is an XML document whose root is an svg element.
func TestChartsOfTheGoldenDocuments(t *testing.T) {
	drawn := 0
	for _, g := range goldenset.Docs {
		doc := g.Doc(t)
		kind, err := report.KindOf(doc)
		if err != nil {
			t.Fatalf("%s: %v", g.Name, err)
		}
		for _, format := range report.Names(kind) {
			var b bytes.Buffer
			switch format {
			case "png":
				if err := report.Render(&b, format, doc); err != nil {
					t.Fatalf("%s: png: %v", g.Name, err)
				}
				img, err := png.Decode(&b)
				if err != nil || img.Bounds().Dx() < 100 || img.Bounds().Dy() < 100 {
					t.Errorf("%s: png: %v (an image of %v)", g.Name, err, img)
				}
				drawn++
			case "svg":
				if err := report.Render(&b, format, doc); err != nil {
					t.Fatalf("%s: svg: %v", g.Name, err)
				}
				var root struct{ XMLName xml.Name }
				if err := xml.NewDecoder(&b).Decode(&root); err != nil || root.XMLName.Local != "svg" {
					t.Errorf("%s: svg: %v, root element %q", g.Name, err, root.XMLName.Local)
				}
				drawn++
			}
		}
	}
	if drawn < 10 {
		t.Errorf("%d charts drawn; the golden runs and the merge give more", drawn)
	}
}
