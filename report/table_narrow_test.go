package report

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// narrowDocs are the documents with tables a terminal shows: a run, a dry run's plan, a device listing.
func narrowDocs(t *testing.T) map[string]any {
	r := loadFixture(t)
	gib := uint64(1) << 30
	plan := &result.DryRun{Platform: r.Platform, Devices: r.Devices, Touch: result.TouchNone, HostReserve: gib, HostAvailable: 20 * gib}
	for _, s := range []result.Strategy{result.Shared, result.PerDevice, result.MigrateFirst, result.DeviceList} {
		plan.Jobs = append(plan.Jobs, result.DryRunJob{Strategy: s, SizeBytes: 1 << 20, Buffers: 100000, Bytes: 100000 << 20,
			WorstHostBytes: 100000 << 20, WorstDeviceBytes: 15 * gib / 2})
	}
	inv := result.Inventory{{Platform: r.Platform, Devices: r.Devices}}
	return map[string]any{"run": r, "plan": plan, "devices": &inv}
}

// splitUnit is a unit that starts a cell's line or a text line: the number it belongs to was left on the
// line before.
var splitUnit = regexp.MustCompile(`(^|│) *(B|KiB|MiB|GiB|TiB)( |,|\)|$)`)

// At any terminal width a table's headers stay whole (two "Worst ca…" headers could not be told apart) and
// every number stays on the line of its unit; from 80 columns up, no line is wider than the terminal.
func TestNarrowTablesKeepHeadersAndNumbersWhole(t *testing.T) {
	for name, doc := range narrowDocs(t) {
		for width := 30; width <= 120; width += 10 {
			var b bytes.Buffer
			if err := RenderWith(&b, "table", judged(doc), Options{Width: width}); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if strings.Contains(out, "…") {
				t.Errorf("%s at %d columns cuts a header or cell short:\n%s", name, width, out)
			}
			for _, l := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(l); width >= 80 && n > width {
					t.Errorf("%s at %d columns has a line %d wide: %q", name, width, n, l)
					break
				}
				if splitUnit.MatchString(l) {
					t.Errorf("%s at %d columns puts a unit on a line apart from its number: %q\n%s", name, width, l, out)
					break
				}
			}
		}
	}
}

// A platform without devices says so instead of drawing a table of headers alone.
func TestInventoryWithoutDevices(t *testing.T) {
	inv := result.Inventory{{Platform: result.Platform{Name: "faultcl"}}}
	var b bytes.Buffer
	if err := RenderWith(&b, "table", &inv, Options{Width: 80}); err != nil {
		t.Fatal(err)
	}
	golden(t, "inventory-no-devices", b.Bytes()) // "(no devices)", not a table of headers alone
}

// Where one host name stands for several files, a narrow merge table (which hides the file column) says
// which file each row is.
func TestMergeRowsNameTheirFileWhereNodesRepeat(t *testing.T) {
	var in []comparison.FleetInput
	for _, dir := range []string{"rack1/vm", "rack2/vm", "rack3/vm"} {
		in = append(in, comparison.FleetInput{Source: dir + "/run.json", Run: fixture.Node(t, "vm", 1)})
	}
	in = append(in, comparison.FleetInput{Source: "n9/run.json", Run: fixture.Node(t, "n9", 1)})
	var b bytes.Buffer
	if err := RenderWith(&b, "table", comparison.Merge(in, 0.1), Options{Width: 120}); err != nil {
		t.Fatal(err)
	}
	golden(t, "merge-repeated-hosts", b.Bytes()) // each "vm" row names its file, n9 alone
}

// Verdicts wrap at spaces to the terminal's width, each continuation indented; without a width each stays
// one line, as scripts reading a pipe expect.
func TestVerdictsWrapToTheTerminal(t *testing.T) {
	r := loadFixture(t)
	for _, width := range []int{0, 60, 80} {
		var b bytes.Buffer
		if err := RenderWith(&b, "table", judged(r), Options{Width: width, AllFindings: true}); err != nil {
			t.Fatal(err)
		}
		bullets := 0
		for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			text := strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "  ")
			if text && width > 0 && len([]rune(l)) > width {
				t.Errorf("at %d columns a line is %d wide: %q", width, len([]rune(l)), l)
			}
			if strings.HasPrefix(l, "- ") {
				bullets++
			}
		}
		if n := len(findings.Judge(r).Verdict()); bullets != n {
			t.Errorf("at %d columns %d lines start a bullet, want one per verdict (%d)", width, bullets, n)
		}
	}
}

// A narrow terminal's table (a run's, a merge's) says how many columns it left out and how to see them;
// --wide and pipes show them all and say nothing.
func TestHiddenColumnsAreNamed(t *testing.T) {
	docs := map[string]any{"run": loadFixture(t), "merge": comparison.Merge(inputs(fixture.Node(t, "n1", 1), fixture.Node(t, "n2", 1)), 0.1)}
	for name, doc := range docs {
		for _, c := range []struct {
			opts Options
			want bool
		}{{Options{Width: 100}, true}, {Options{Width: 100, Wide: true}, false}, {Options{}, false}} {
			var b bytes.Buffer
			if err := RenderWith(&b, "table", judged(doc), c.opts); err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(strings.Split(b.String(), "\n"), "4 columns hidden: --wide"); got != c.want {
				t.Errorf("%s %+v: says columns are hidden: %v, want %v:\n%s", name, c.opts, got, c.want, b.String())
			}
		}
	}
}

// env's block wraps at the terminal's width, as the verdict does: no line of it runs past 80 columns but a
// single word longer than a line.
func TestEnvironmentBlockFitsTheTerminal(t *testing.T) {
	e := &result.Environment{OS: "debian 12.11", Kernel: "6.1.0-28-amd64", CPUs: 2, CPU: "AMD EPYC 7B13 64-Core Processor",
		OpenCLLibrary: "libOpenCL.so.1", ICDVendorsDir: "/etc/OpenCL/vendors", FDLimit: 20000,
		ICDStatus: []result.ICDStatus{{File: "/etc/OpenCL/vendors/intel.icd", Library: "/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so",
			Outcome: result.ICDNoPlatform, Vendor: "Intel's compute-runtime (NEO)", Drivers: "i915 or xe"}},
		EnvVars: map[string]string{"POCL_DEVICES": "pthread pthread"}}
	var b bytes.Buffer
	if err := table.WriteEnvironmentText(&b, e, Options{Width: 80}); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if n := len([]rune(l)); n > 80 && strings.Contains(strings.TrimSpace(l), " ") {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
}

// The run's header wraps between device names, never inside one (up to half the terminal's width).
func TestHeaderKeepsDeviceNamesWhole(t *testing.T) {
	r := loadFixture(t)
	r.Devices[0].Name, r.Devices[1].Name = "pthread-haswell-AMD EPYC 7B13", "NVIDIA GeForce RTX 4090 Laptop"
	for _, width := range []int{70, 80, 100} {
		var b bytes.Buffer
		if err := RenderWith(&b, "table", judged(r), Options{Width: width}); err != nil {
			t.Fatal(err)
		}
		header := strings.SplitN(b.String(), "┌", 2)[0]
		for _, d := range r.Devices {
			if !strings.Contains(header, d.Name) {
				t.Errorf("at %d columns the header breaks %q:\n%s", width, d.Name, header)
			}
		}
	}
}

// The device table leaves columns out before it breaks a device's name over lines (rusticl's
// "llvmpipe (LLVM 15.0.6, 256 bits)" once took five at 80 columns), and in a pipe it writes the name as
// it is; at any width the table fits.
func TestDeviceTableKeepsNamesWhole(t *testing.T) {
	const name = "llvmpipe (LLVM 15.0.6, 256 bits)"
	inv := result.Inventory{{Platform: result.Platform{Name: "rusticl"}, Devices: []result.Device{{Name: name, Type: "CPU",
		GlobalMemBytes: 2 << 30, MaxAllocBytes: 2 << 30, HostUnified: true, Version: "OpenCL 3.0", DriverVersion: "22.3.6"}}}}
	for _, width := range []int{0, 60, 80} {
		var b bytes.Buffer
		if err := RenderWith(&b, "table", &inv, Options{Width: width}); err != nil {
			t.Fatal(err)
		}
		// A name of up to half the terminal's width stays whole; at 60 columns this one may wrap.
		if width != 60 && !strings.Contains(b.String(), name) {
			t.Errorf("at %d columns the name is broken:\n%s", width, b.String())
		}
		if width > 0 && table.Widest(b.String()) > width {
			t.Errorf("at %d columns the table is %d wide", width, table.Widest(b.String()))
		}
	}
}

// run --variant-preset list wraps at the terminal's width; only a word longer than a line (a URL, a
// variant to copy) runs past it.
func TestPresetListFitsTheTerminal(t *testing.T) {
	l := &table.PresetList{Presets: []table.PresetEntry{{Name: "nofile", Runtime: "any", Purpose: strings.Repeat("raise the descriptor limit and see the threshold move ", 4),
		Variants: []result.Variant{{Name: "nofile", Settings: map[string]string{"RLIMIT_NOFILE": "65536"}}}, Source: "getrlimit(2), and " + strings.Repeat("a long source ", 8)}}}
	var b bytes.Buffer
	if err := table.WritePresetsText(&b, l, Options{Width: 80}); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if len([]rune(line)) > 80 && strings.Contains(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "source:")), " ") {
			t.Errorf("a line of %d columns: %q", len([]rune(line)), line)
		}
	}
}
