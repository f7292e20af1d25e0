package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// writeTable renders the threshold table a person reads in five seconds: one row per strategy (and size),
// then the verdict sentences.
func writeTable(w io.Writer, r *result.Run) error {
	st := terminal
	fmt.Fprintf(w, "clmemprobe %s: %s, platform %s, %s buffers, touch %s\n", st.text(r.Tool.Version), deviceSummary(r, st),
		st.text(r.Platform.Name), sizeSummary(r), st.text(string(r.Config.Touch)))
	if err := thresholdTable(w, r, st); err != nil {
		return err
	}
	for _, v := range r.Verdict {
		fmt.Fprintf(w, "- %s\n", st.text(v))
	}
	return nil
}

// thresholdTable writes the table of strategies, as box drawing or as Markdown.
func thresholdTable(w io.Writer, r *result.Run, st style) error {
	t := NewTable(w, st.markdown, tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{
		tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignRight}}))
	t.Header("Strategy", "Size", "Devices", "Outcome", "Buffers OK", "Bytes OK", "First failure", "Host/buffer", "Device/buffer")
	for _, s := range r.Strategies {
		if err := t.Append([]string{st.text(string(s.Strategy)), units.Size(s.SizeBytes), joinInts(s.Devices), outcomeCell(&s, st),
			fmt.Sprint(s.AllocationsOK), units.Bytes(s.BytesOK), failureCell(&s, st), hostCostCell(&s),
			deviceCostCell(&s)}); err != nil {
			return err
		}
	}
	return t.Render()
}

func deviceSummary(r *result.Run, st style) string {
	var names []string
	for _, d := range r.Devices {
		names = append(names, fmt.Sprintf("[%d] %s", d.Index, st.text(d.Name)))
	}
	if len(names) == 0 {
		return "no devices"
	}
	return strings.Join(names, ", ")
}

func sizeSummary(r *result.Run) string {
	var sizes []string
	for _, size := range r.Sizes() {
		sizes = append(sizes, units.Size(size))
	}
	if len(sizes) == 0 {
		return units.Size(r.Config.SizeBytes)
	}
	return strings.Join(sizes, ", ")
}

func joinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ",")
}

func outcomeCell(s *result.StrategyResult, st style) string {
	switch s.Outcome {
	case result.OutcomeCrashed:
		if s.Signal != "" {
			return "crashed (" + st.text(s.Signal) + ")"
		}
		if s.ExitCode != nil {
			return fmt.Sprintf("crashed (exit %d)", *s.ExitCode)
		}
	case result.OutcomeStopped:
		if i := strings.Index(s.Reason, ":"); i > 0 {
			return "stopped (" + st.text(s.Reason[:i]) + ")"
		}
		if s.Reason != "" {
			return "stopped (" + st.text(s.Reason) + ")"
		}
	}
	return st.text(string(s.Outcome))
}

func failureCell(s *result.StrategyResult, st style) string {
	if f := s.FirstFailure; f != nil {
		if f.Name == "" {
			return fmt.Sprintf("#%d at %s", f.Index, st.text(string(f.Stage)))
		}
		return fmt.Sprintf("#%d %s (%d) at %s, dev %d", f.Index, st.text(f.Name), f.Code, st.text(string(f.Stage)), f.Device)
	}
	if s.Outcome == result.OutcomeCrashed || s.Outcome == result.OutcomeHung {
		return fmt.Sprintf("#%d during %s", s.AllocationsOK, st.text(string(s.LastStage)))
	}
	if s.Outcome == result.OutcomeUnsupported {
		return "-"
	}
	return "none"
}

// tooFewSamples stands where a cost per buffer cannot be fitted.
const tooFewSamples = "too few samples"

// hostCostCell is the fitted host cost per buffer, or why there is none.
func hostCostCell(s *result.StrategyResult) string {
	if s.Outcome == result.OutcomeUnsupported {
		return "-"
	}
	if !s.JudgedFit().OK {
		return tooFewSamples
	}
	return units.SignedBytes(s.HostBytesPerBuffer)
}

// deviceCostCell is the fitted device cost per buffer of each device with the replication factor, labelled,
// or why there is none.
func deviceCostCell(s *result.StrategyResult) string {
	switch {
	case s.Outcome == result.OutcomeUnsupported:
		return "-"
	case !s.JudgedFit().OK:
		return tooFewSamples
	case len(s.DeviceBytesPerBuffer) == 0:
		return "not measured"
	}
	var parts []string
	for _, d := range s.Devices {
		if v, ok := s.DeviceBytesPerBuffer[fmt.Sprint(d)]; ok {
			parts = append(parts, fmt.Sprintf("%d: %s", d, units.SignedBytes(v)))
		}
	}
	if rf, ok := s.Replication(); ok {
		parts = append(parts, fmt.Sprintf("replication %.2f", rf))
	} else {
		parts = append(parts, "none placed")
	}
	return strings.Join(parts, " ")
}

// writeInventory lists every platform and its devices, one table per platform.
func writeInventory(w io.Writer, inv *result.Inventory) error {
	for _, p := range *inv {
		if _, err := fmt.Fprintf(w, "Platform %d: %s (%s), %s\n", p.Index, plain(p.Name), plain(p.Vendor), plain(p.Version)); err != nil {
			return err
		}
		t := NewTable(w, false)
		t.Header("Device", "Name", "Type", "Global memory", "Max alloc", "Unified", "Version", "Driver", "PCI")
		for _, d := range p.Devices {
			if err := t.Append([]string{fmt.Sprint(d.Index), plain(d.Name), plain(d.Type), units.Bytes(d.GlobalMemBytes),
				units.Bytes(d.MaxAllocBytes), YesNo(d.HostUnified), plain(shortVersion(d.Version)), plain(d.DriverVersion), OrDash(plain(d.PCIBusID))}); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	return nil
}

// shortVersion keeps "OpenCL 3.0" of a device version string that runtimes pad with build details.
func shortVersion(v string) string {
	f := strings.Fields(v)
	if len(f) >= 2 {
		return f[0] + " " + f[1]
	}
	return v
}
