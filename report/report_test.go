package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files from the renderers' output")

// testdata/run-v1.json is a result of schema version 1 written by clmemprobe itself (faultcl, 2 devices,
// 64 MiB host budget, 256 MiB per device). It is kept as it was written: later versions must read it.
func loadFixture(t *testing.T) *Run {
	t.Helper()
	r, err := Load(filepath.Join("testdata", "run-v1.json"))
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
	for _, c := range []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"table", func(b *bytes.Buffer) error { return WriteTable(b, r) }},
		{"markdown", func(b *bytes.Buffer) error { return WriteMarkdown(b, r) }},
		{"csv", func(b *bytes.Buffer) error { return WriteCSV(b, r) }},
		{"compare", func(b *bytes.Buffer) error { return WriteComparison(b, Compare(r, r, 0.1)) }},
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

func TestJSONRoundTripKeepsEveryField(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, loadFixture(t)); err != nil {
		t.Fatal(err)
	}
	var a, z any
	_ = json.Unmarshal(raw, &a)
	_ = json.Unmarshal(b.Bytes(), &z)
	ab, _ := json.Marshal(a)
	zb, _ := json.Marshal(z)
	if !bytes.Equal(ab, zb) {
		t.Errorf("loading and writing run-v1.json lost or changed fields")
	}
}

func TestLoadRejectsWhatIsNotAResult(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not-json.json":   "hello",
		"other.json":      `{"name": "something else"}`,
		"schema-2.json":   `{"schema_version": 2, "tool": {"name": "clmemprobe"}}`,
		"wrong-type.json": `{"schema_version": 1, "tool": {"name": "clmemprobe"}, "strategies": "x"}`,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		var nr *ErrNotAResult
		if _, err := Load(path); err == nil || !asNotAResult(err, &nr) {
			t.Errorf("%s: %v, want ErrNotAResult", name, err)
		}
	}
}

func asNotAResult(err error, target **ErrNotAResult) bool {
	e, ok := err.(*ErrNotAResult)
	if ok {
		*target = e
	}
	return ok
}

// The verdict is computed from the numbers of the fixture: budgets of 64 MiB host and 256 MiB per device.
func TestVerdictsFromNumbers(t *testing.T) {
	r := loadFixture(t)
	v := strings.Join(Verdicts(r), "\n")
	var sh, pd *Strategy
	for i := range r.Strategies {
		switch r.Strategies[i].Strategy {
		case "shared":
			sh = &r.Strategies[i]
		case "per-device":
			pd = &r.Strategies[i]
		}
	}
	for _, want := range []string{
		"shared failed first: buffer #64 (after 64 MiB) got CL_OUT_OF_HOST_MEMORY (-6) at create",
		"per-device reached 512 buffers, 8.00x as many buffers as shared (64)",
		fmt.Sprintf("the shared context costs %.2fx the device memory per buffer", *sh.ReplicationFactor / *pd.ReplicationFactor),
		"device-list is not supported here",
		"CL_OUT_OF_HOST_MEMORY (shared, migrate-first, per-device) does not prove host memory ran out",
		// 64 buffers of 1 MiB on each of the two devices of the shared context: a quarter of 256 MiB.
		"shared: when it failed, device 0 held 64 MiB, 25.0% of its 256 MiB global memory: far below",
		"per-device: when it failed, device 0 held 256 MiB, 100.0% of its 256 MiB global memory: the device's memory ran out",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q:\n%s", want, v)
		}
	}
}

func TestChartsDecode(t *testing.T) {
	r := loadFixture(t)
	var b bytes.Buffer
	if err := WriteChart(&b, r, "png"); err != nil {
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
	if err := WriteChart(&b, r, "svg"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte("<svg")) || !bytes.Contains(b.Bytes(), []byte("CL_OUT_OF_HOST_MEMORY at #64")) {
		t.Errorf("the SVG lacks the failure label")
	}
	// A sweep draws the threshold against the size.
	sweep := *r
	sweep.Strategies = append([]Strategy{}, r.Strategies...)
	for _, s := range r.Strategies {
		s.SizeBytes *= 2
		s.AllocationsOK /= 2
		sweep.Strategies = append(sweep.Strategies, s)
	}
	b.Reset()
	if err := WriteChart(&b, &sweep, "svg"); err != nil || !bytes.Contains(b.Bytes(), []byte("against buffer size")) {
		t.Errorf("sweep chart: %v", err)
	}
}

func TestCompare(t *testing.T) {
	base := loadFixture(t)
	clone := func(f func(s *Strategy)) *Run {
		n := *base
		n.Strategies = append([]Strategy{}, base.Strategies...)
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
		next      *Run
		change    string
		regressed bool
	}{
		{"equal", clone(func(*Strategy) {}), ChangeEqual, false},
		{"within tolerance", clone(func(s *Strategy) { s.AllocationsOK = s.AllocationsOK * 95 / 100 }), ChangeEqual, false},
		{"improved", clone(func(s *Strategy) { s.AllocationsOK *= 2 }), ChangeImproved, false},
		{"regressed threshold", clone(func(s *Strategy) { s.AllocationsOK /= 2 }), ChangeRegressed, true},
		{"now crashes", clone(func(s *Strategy) { s.Outcome = OutcomeCrashed }), ChangeRegressed, true},
		{"host cost grew", clone(func(s *Strategy) { s.HostBytesPerBuffer *= 2 }), ChangeRegressed, true},
		{"missing", clone(func(s *Strategy) { s.Strategy += "-renamed" }), ChangeMissing, true},
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
	var s []Sample
	for i := 0; i < 1000; i++ {
		s = append(s, Sample{Index: uint64(i)})
	}
	d := Downsample(s, 10)
	if len(d) != 10 || d[0].Index != 0 || d[9].Index != 999 {
		t.Fatalf("got %d samples, first %d, last %d", len(d), d[0].Index, d[len(d)-1].Index)
	}
	if got := Downsample(s[:5], 10); len(got) != 5 {
		t.Fatalf("fewer samples than asked must stay as they are")
	}
}

func TestFormatSizeIsExact(t *testing.T) {
	for in, want := range map[uint64]string{
		1 << 20: "1 MiB", 1<<20 + 4<<10: "1 MiB+4 KiB", 4 << 10: "4 KiB", 1000: "1000 B", 1<<20 + 1: "1 MiB+1 B",
		1<<20 + 4<<10 + 1: "1 MiB+4097 B", 16 << 30: "16 GiB",
	} {
		if got := FormatSize(in); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", in, got, want)
		}
	}
}

// A loop that ends near vm.max_map_count is told apart from one that ran out of memory.
func TestVerdictNamesTheMappingLimit(t *testing.T) {
	r := &Run{Config: Config{Touch: "fill"}, Strategies: []Strategy{{Strategy: "shared", SizeBytes: 1 << 20, Outcome: OutcomeFailed,
		AllocationsOK: 65000, MaxMappings: 65400, MaxMapCount: 65530,
		FirstFailure: &FirstFailure{Index: 65000, Stage: StageTouch, Code: -5, Name: "CL_OUT_OF_RESOURCES"}}}}
	v := strings.Join(Verdicts(r), "\n")
	if !strings.Contains(v, "65400 memory mappings, 100% of vm.max_map_count (65530)") {
		t.Errorf("verdict does not name the mapping limit:\n%s", v)
	}
}
