package report

import (
	"bytes"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/result"
)

var update = flag.Bool("update", false, "rewrite the golden files from the renderers' output")

// testdata/run-v1.json is a result of schema version 1 written by clmemprobe itself (faultcl, 2 devices,
// 64 MiB host budget, 256 MiB per device). It is kept as it was written: later versions must read it.
func loadFixture(t *testing.T) *result.Run {
	t.Helper()
	r, err := result.Load(filepath.Join("result", "testdata", "run-v1.json"))
	if err != nil {
		t.Fatalf("a schema 1 result must stay readable: %v", err)
	}
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (go test ./report -update regenerates it after a deliberate change)\n--- got ---\n%s", name, path, got)
	}
}

func TestRenderersMatchGoldenFiles(t *testing.T) {
	r := loadFixture(t)
	findings.Apply(r) // as report does: the goldens show what this build says of the numbers
	for _, c := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"table", func(b *bytes.Buffer) error { return Render(b, "table", r) }},
		{"markdown", func(b *bytes.Buffer) error { return Render(b, "markdown", r) }},
		{"csv", func(b *bytes.Buffer) error { return Render(b, "csv", r) }},
		{"compare", func(b *bytes.Buffer) error { return Render(b, "table", Compare(r, r, 0.1)) }},
		{"compare-changes", func(b *bytes.Buffer) error { return Render(b, "table", Compare(changedRuns(r))) }},
		// A terminal 100 columns wide keeps the columns that say where and why, and wraps; --wide keeps all.
		{"table-narrow", func(b *bytes.Buffer) error { return RenderWith(b, "table", r, Options{Width: 100}) }},
		{"table-narrow-wide", func(b *bytes.Buffer) error { return RenderWith(b, "table", r, Options{Width: 100, Wide: true}) }},
		{"table-ascii", func(b *bytes.Buffer) error { return RenderWith(b, "table", r, Options{ASCII: true}) }},
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
	if err := Render(&b, "png", r); err != nil {
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
	if err := Render(&b, "svg", r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte("<svg")) || !bytes.Contains(b.Bytes(), []byte("CL_OUT_OF_HOST_MEMORY at #64")) {
		t.Errorf("the SVG lacks the failure label")
	}
	// A sweep draws the threshold against the size.
	sweep := *r
	sweep.Strategies = append([]result.StrategyResult{}, r.Strategies...)
	for _, s := range r.Strategies {
		s.SizeBytes *= 2
		s.AllocationsOK /= 2
		sweep.Strategies = append(sweep.Strategies, s)
	}
	b.Reset()
	if err := Render(&b, "svg", &sweep); err != nil || !bytes.Contains(b.Bytes(), []byte("against buffer size")) {
		t.Errorf("sweep chart: %v", err)
	}
}

func TestCompare(t *testing.T) {
	base := loadFixture(t)
	clone := func(f func(s *result.StrategyResult)) *result.Run {
		n := *base
		n.Strategies = append([]result.StrategyResult{}, base.Strategies...)
		for i := range n.Strategies {
			f(&n.Strategies[i])
		}
		return &n
	}
	shared := func(c *Comparison) ComparisonRow {
		for _, r := range c.Rows {
			if r.Strategy == "shared" {
				return r
			}
		}
		t.Fatal("no shared row")
		return ComparisonRow{}
	}
	cases := []struct {
		name      string
		next      *result.Run
		change    string
		regressed bool
	}{
		{"equal", clone(func(*result.StrategyResult) {}), ChangeEqual, false},
		{"within tolerance", clone(func(s *result.StrategyResult) { s.AllocationsOK = s.AllocationsOK * 95 / 100 }), ChangeEqual, false},
		{"improved", clone(func(s *result.StrategyResult) { s.AllocationsOK *= 2 }), ChangeImproved, false},
		{"regressed threshold", clone(func(s *result.StrategyResult) { s.AllocationsOK /= 2 }), ChangeRegressed, true},
		{"now crashes", clone(func(s *result.StrategyResult) { s.Outcome = result.OutcomeCrashed }), ChangeRegressed, true},
		{"host cost grew", clone(func(s *result.StrategyResult) { s.HostBytesPerBuffer *= 2 }), ChangeRegressed, true},
		{"missing", clone(func(s *result.StrategyResult) { s.Strategy += "-renamed" }), ChangeMissing, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmp := Compare(base, c.next, 0.10)
			if got := shared(cmp).Change; got != c.change || cmp.Regressed != c.regressed {
				t.Errorf("change %q regressed %v; want %q %v", got, cmp.Regressed, c.change, c.regressed)
			}
		})
	}
}

func TestDownsampleKeepsEnds(t *testing.T) {
	var s []result.Sample
	for i := 0; i < 1000; i++ {
		s = append(s, result.Sample{Index: uint64(i)})
	}
	d := Downsample(s, 10)
	if len(d) != 10 || d[0].Index != 0 || d[9].Index != 999 {
		t.Fatalf("got %d samples, first %d, last %d", len(d), d[0].Index, d[len(d)-1].Index)
	}
	if got := Downsample(s[:5], 10); len(got) != 5 {
		t.Fatalf("fewer samples than asked must stay as they are")
	}
}

// changedRuns makes a baseline and a new run from the fixture in which every kind of row appears: shared
// regressed (half the buffers), per-device improved (twice), migrate-first missing, a 2 MiB shared row that
// is inconclusive (the new run completed a budget below the baseline's threshold) and a row only the new run
// has (added).
func changedRuns(r *result.Run) (*result.Run, *result.Run, float64) {
	base, next := *r, *r
	base.Strategies, next.Strategies = nil, nil
	for _, s := range r.Strategies {
		base.Strategies = append(base.Strategies, s)
		switch s.Strategy {
		case result.Shared:
			s.AllocationsOK /= 2
		case result.PerDevice:
			s.AllocationsOK *= 2
		case result.MigrateFirst:
			continue
		}
		next.Strategies = append(next.Strategies, s)
	}
	big := r.Strategies[0]
	big.SizeBytes, big.Outcome, big.AllocationsOK = 2<<20, result.OutcomeFailed, 100
	base.Strategies = append(base.Strategies, big)
	big.Outcome, big.AllocationsOK, big.FirstFailure = result.OutcomeCompleted, 50, nil
	next.Strategies = append(next.Strategies, big)
	added := r.Strategies[0]
	added.SizeBytes = 4 << 20
	next.Strategies = append(next.Strategies, added)
	return &base, &next, 0.10
}

// On a terminal of a given width, the threshold table fits in it.
func TestNarrowTableFits(t *testing.T) {
	r := loadFixture(t)
	findings.Apply(r)
	for _, width := range []int{80, 100, 120} {
		var b bytes.Buffer
		if err := RenderWith(&b, "table", r, Options{Width: width}); err != nil {
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

// Runs on other devices, or with another touch mode, are not compared; another driver is what compare is for.
func TestCompareRefusesRunsThatAreNotAlike(t *testing.T) {
	base := loadFixture(t)
	for name, change := range map[string]func(r *result.Run){
		"devices": func(r *result.Run) { r.Devices[0].Name = "another GPU" },
		"touch":   func(r *result.Run) { r.Config.Touch = result.TouchKernel },
	} {
		next := loadFixture(t)
		change(next)
		if c := Compare(base, next, 0.1); c.Incomparable == "" {
			t.Errorf("%s differ: compared all the same", name)
		}
	}
	next := loadFixture(t)
	next.Devices[0].DriverVersion = "99.0"
	if c := Compare(base, next, 0.1); c.Incomparable != "" {
		t.Errorf("another driver: %q, want it compared", c.Incomparable)
	}
}
