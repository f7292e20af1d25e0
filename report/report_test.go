package report

import (
	"bytes"
	"flag"
	"image/png"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

var update = flag.Bool("update", false, "rewrite the golden files from the renderers' output")

func loadFixture(t *testing.T) *result.Run { return fixture.Run(t) }

func golden(t *testing.T, name string, got []byte) { fixture.Golden(t, name, got, *update, "./report") }

func TestRenderersMatchGoldenFiles(t *testing.T) {
	r := loadFixture(t)
	// Rendered judged, as report does: the goldens show what this build says of the numbers.
	for _, c := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"table", func(b *bytes.Buffer) error { return Render(b, "table", judged(r)) }},
		{"markdown", func(b *bytes.Buffer) error { return Render(b, "markdown", judged(r)) }},
		{"csv", func(b *bytes.Buffer) error { return Render(b, "csv", judged(r)) }},
		{"compare", func(b *bytes.Buffer) error { return Render(b, "table", comparison.Compare(r, r, 0.1)) }},
		{"compare-changes", func(b *bytes.Buffer) error { return Render(b, "table", comparison.Compare(changedRuns(r))) }},
		// A terminal 100 columns wide keeps the columns that say where and why, and wraps; --wide keeps all.
		{"table-narrow", func(b *bytes.Buffer) error { return RenderWith(b, "table", judged(r), Options{Width: 100}) }},
		{"table-narrow-wide", func(b *bytes.Buffer) error {
			return RenderWith(b, "table", judged(r), Options{Width: 100, Wide: true})
		}},
		{"table-ascii", func(b *bytes.Buffer) error { return RenderWith(b, "table", judged(r), Options{ASCII: true}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := c.render(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
}

func TestChartsDecode(t *testing.T) {
	r := loadFixture(t)
	var b bytes.Buffer
	if err := Render(&b, "png", judged(r)); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("the PNG does not decode: %v", err)
	}
	// 26 cm wide at 110 dpi, two panels (host and device memory) at 15/1.4 cm each.
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != 1126 || h < 900 || b.Len() < 20_000 {
		t.Errorf("PNG %dx%d, %d bytes: want 1126 wide, two panels tall, not empty", w, h, b.Len())
	}
	b.Reset()
	if err := Render(&b, "svg", judged(r)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte("<svg")) || !bytes.Contains(b.Bytes(), []byte("CL_OUT_OF_HOST_MEMORY at #64")) {
		t.Errorf("the SVG lacks the failure label")
	}
	// A sweep draws the threshold against the size.
	sweep := *r
	sweep.Jobs = append([]result.JobResult{}, r.Jobs...)
	for _, s := range r.Jobs {
		s.SizeBytes *= 2
		s.AllocationsOK /= 2
		sweep.Jobs = append(sweep.Jobs, s)
	}
	b.Reset()
	if err := Render(&b, "svg", judged(&sweep)); err != nil || !bytes.Contains(b.Bytes(), []byte("against buffer size")) {
		t.Errorf("sweep chart: %v", err)
	}
}

// changedRuns makes a baseline and a new run from the fixture in which every kind of row appears: shared
// regressed (half the buffers), per-device improved (twice), migrate-first missing, a 2 MiB shared row that
// is inconclusive (the new run completed a budget below the baseline's threshold) and a row only the new run
// has (added).
func changedRuns(r *result.Run) (*result.Run, *result.Run, float64) {
	base, next := *r, *r
	base.Jobs, next.Jobs = nil, nil
	for _, s := range r.Jobs {
		base.Jobs = append(base.Jobs, s)
		switch s.Strategy {
		case result.Shared:
			s.AllocationsOK /= 2
		case result.PerDevice:
			s.AllocationsOK *= 2
		case result.MigrateFirst:
			continue
		}
		next.Jobs = append(next.Jobs, s)
	}
	big := r.Jobs[0]
	big.SizeBytes, big.Outcome, big.AllocationsOK = 2<<20, result.OutcomeFailed, 100
	base.Jobs = append(base.Jobs, big)
	big.Outcome, big.AllocationsOK, big.FirstFailure = result.OutcomeCompleted, 50, nil
	next.Jobs = append(next.Jobs, big)
	added := r.Jobs[0]
	added.SizeBytes = 4 << 20
	next.Jobs = append(next.Jobs, added)
	return &base, &next, 0.10
}

// On a terminal of a given width, the threshold table fits in it.
func TestNarrowTableFits(t *testing.T) {
	r := loadFixture(t)
	for _, width := range []int{80, 100, 120} {
		var b bytes.Buffer
		if err := RenderWith(&b, "table", judged(r), Options{Width: width}); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(line, "│") || strings.HasPrefix(line, "┌") {
				if n := utf8.RuneCountInString(line); n > width {
					t.Errorf("width %d: a table line of %d columns: %s", width, n, line)
				}
			}
		}
	}
}
