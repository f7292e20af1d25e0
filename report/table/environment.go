package table

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// WriteEnvironmentText renders the environment block for a terminal.
func WriteEnvironmentText(w io.Writer, e *result.Environment, opts render.Options) error {
	b := &strings.Builder{}
	WriteEnvironment(b, e, render.Terminal(opts))
	_, err := io.WriteString(w, b.String())
	return err
}

func WriteEnvironment(b *strings.Builder, e *result.Environment, st render.Style) {
	fmt.Fprintln(b, wrapWords("- ", fmt.Sprintf("OS: %s, kernel %s, %d CPUs (%s)", st.Text(e.OS), st.Text(e.Kernel), e.CPUs, st.Text(e.CPU)), st.Width))
	fmt.Fprintln(b, wrapWords("- ", fmt.Sprintf("RAM %s, swap %s, vm.overcommit_memory %s (ratio %s), vm.max_map_count %d", units.Bytes(e.HostMemBytes),
		units.Bytes(e.SwapBytes), st.Text(render.OrDash(e.Overcommit)), st.Text(render.OrDash(e.OvercommitPct)), e.MaxMapCount), st.Width))
	fmt.Fprintln(b, wrapWords("- ", fmt.Sprintf("OpenCL library: %s; ICD vendors: %s", st.Code(e.OpenCLLibrary), st.Code(e.ICDVendorsDir)), st.Width))
	said := map[string]bool{}
	for _, s := range e.ICDStatus {
		said[s.File] = true
		fmt.Fprintln(b, wrapWords("  - ", st.Text(s.Line()), st.Width))
	}
	for _, f := range render.SortedKeys(e.ICDFiles) {
		if !said[f] {
			fmt.Fprintln(b, wrapWords("  - ", fmt.Sprintf("%s -> %s", st.Code(f), st.Code(e.ICDFiles[f])), st.Width))
		}
	}
	for _, p := range e.Platforms {
		fmt.Fprintln(b, wrapWords("- ", fmt.Sprintf("platform %d: %s (%s), %s", p.Index, st.Text(p.Name), st.Text(p.Vendor), st.Text(p.Version)), st.Width))
	}
	if e.FDLimit > 0 {
		fmt.Fprintln(b, wrapWords("- ", fmt.Sprintf("open file descriptors: the command's soft limit %d (ulimit -n), which the workers run under", e.FDLimit), st.Width))
	}
	if cg := e.MemoryCgroup; cg != nil {
		fmt.Fprintln(b, wrapWords("- ", fmt.Sprintf("memory cgroup: %s (v%d), limit %s", st.Code(cg.Path), cg.Version, limitOrNone(cg.LimitBytes)), st.Width))
	}
	for _, d := range e.DRIDevices {
		fmt.Fprintln(b, wrapWords("- ", st.Text(d), st.Width))
	}
	if len(e.EnvVars) > 0 {
		b.WriteString("- environment variables:\n")
		for _, k := range render.SortedKeys(e.EnvVars) {
			fmt.Fprintln(b, wrapWords("  - ", st.Code(k+"="+e.EnvVars[k]), st.Width))
		}
	}
	writeSystem(b, e.System, st)
}

// writeSystem renders what the ticket collectors read: distribution, GPUs on the PCI bus, modules and the
// driver packages (ISSUE.md has them in its vendor's fields).
func writeSystem(b *strings.Builder, s *result.System, st render.Style) {
	if s == nil {
		return
	}
	if s.Distribution != "" {
		fmt.Fprintln(b, wrapWords("- ", "distribution: "+st.Text(s.Distribution), st.Width))
	}
	for _, d := range s.PCI {
		var bars []string
		for _, bar := range d.BARs {
			bars = append(bars, fmt.Sprintf("BAR %d %s", bar.Index, units.Size(bar.Bytes)))
		}
		fmt.Fprintln(b, wrapWords("- ", fmt.Sprintf("PCI %s [%s:%s] driver %s, %s", st.Text(d.Address), st.Text(render.HexID(d.Vendor)), st.Text(render.HexID(d.Device)),
			st.Text(render.OrDash(d.Driver)), strings.Join(bars, ", ")), st.Width))
	}
	if s.NVIDIADriver != "" {
		fmt.Fprintln(b, wrapWords("- ", st.Text(s.NVIDIADriver), st.Width))
	}
	var mods []string
	for _, m := range s.Modules {
		mods = append(mods, strings.TrimSpace(m.Name+" "+m.Version))
	}
	if len(mods) > 0 {
		fmt.Fprintln(b, wrapWords("- ", "GPU modules: "+st.Text(strings.Join(mods, ", ")), st.Width))
	}
	var pkgs []string
	for _, p := range s.Packages {
		pkgs = append(pkgs, p.Name+" "+p.Version)
	}
	if len(pkgs) > 0 {
		fmt.Fprintln(b, wrapWords("- ", fmt.Sprintf("driver packages (%s): %s", st.Text(s.PackageManager), st.Text(strings.Join(pkgs, ", "))), st.Width))
	}
	for _, k := range render.SortedKeys(s.Unread) {
		fmt.Fprintln(b, wrapWords("- ", fmt.Sprintf("not read (%s): %s", k, st.Text(s.Unread[k])), st.Width))
	}
}

// limitOrNone is a limit in bytes, or "none".
func limitOrNone(b uint64) string {
	if b == 0 {
		return "none"
	}
	return units.Bytes(b)
}
