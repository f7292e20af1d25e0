package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// WriteTable renders the threshold table a person reads in five seconds: one row per strategy (and size),
// then the verdict sentences.
func WriteTable(w io.Writer, r *Run) error {
	fmt.Fprintf(w, "clmemprobe %s: %s, platform %q, %s buffers, touch %s\n", r.Tool.Version, deviceSummary(r), r.Platform.Name,
		sizeSummary(r), r.Config.Touch)
	if err := thresholdTable(w, r, false); err != nil {
		return err
	}
	for _, v := range r.Verdict {
		fmt.Fprintf(w, "- %s\n", v)
	}
	return nil
}

// thresholdTable writes the table of strategies, as box drawing or as Markdown.
func thresholdTable(w io.Writer, r *Run, markdown bool) error {
	t := NewTable(w, markdown, tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: []tw.Align{
		tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignRight}}))
	t.Header("Strategy", "Size", "Devices", "Outcome", "Buffers OK", "Bytes OK", "First failure", "Host/buffer", "Device/buffer")
	for _, s := range r.Strategies {
		if err := t.Append([]string{s.Strategy, FormatSize(s.SizeBytes), joinInts(s.Devices), outcomeCell(&s),
			fmt.Sprint(s.AllocationsOK), FormatBytes(s.BytesOK), failureCell(&s), perBuffer(s.HostBytesPerBuffer, s.SamplesTotal),
			deviceCostCell(&s)}); err != nil {
			return err
		}
	}
	return t.Render()
}

func deviceSummary(r *Run) string {
	var names []string
	for _, d := range r.Devices {
		names = append(names, fmt.Sprintf("[%d] %s", d.Index, d.Name))
	}
	if len(names) == 0 {
		return "no devices"
	}
	return strings.Join(names, ", ")
}

func sizeSummary(r *Run) string {
	var sizes []string
	for _, size := range runSizes(r) {
		sizes = append(sizes, FormatSize(size))
	}
	if len(sizes) == 0 {
		return FormatSize(r.Config.SizeBytes)
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

func outcomeCell(s *Strategy) string {
	switch s.Outcome {
	case OutcomeCrashed:
		if s.Signal != "" {
			return "crashed (" + s.Signal + ")"
		}
		if s.ExitCode != nil {
			return fmt.Sprintf("crashed (exit %d)", *s.ExitCode)
		}
	case OutcomeStopped:
		if i := strings.Index(s.Reason, ":"); i > 0 {
			return "stopped (" + s.Reason[:i] + ")"
		}
		if s.Reason != "" {
			return "stopped (" + s.Reason + ")"
		}
	}
	return s.Outcome
}

func failureCell(s *Strategy) string {
	if f := s.FirstFailure; f != nil {
		if f.Name == "" {
			return fmt.Sprintf("#%d at %s", f.Index, f.Stage)
		}
		return fmt.Sprintf("#%d %s (%d) at %s, dev %d", f.Index, f.Name, f.Code, f.Stage, f.Device)
	}
	if s.Outcome == OutcomeCrashed || s.Outcome == OutcomeHung {
		return fmt.Sprintf("#%d during %s", s.AllocationsOK, s.LastStage)
	}
	if s.Outcome == OutcomeUnsupported {
		return "-"
	}
	return "none"
}

// perBuffer formats a fitted cost; a fit from fewer than two samples is not shown.
func perBuffer(v float64, samples int) string {
	if samples < 2 {
		return "n/a"
	}
	return FormatSignedBytes(v)
}

func deviceCostCell(s *Strategy) string {
	if len(s.DeviceBytesPerBuffer) == 0 {
		return "n/a"
	}
	var parts []string
	for _, d := range s.Devices {
		if v, ok := s.DeviceBytesPerBuffer[fmt.Sprint(d)]; ok {
			parts = append(parts, fmt.Sprintf("%d: %s", d, FormatSignedBytes(v)))
		}
	}
	if s.ReplicationFactor != nil {
		parts = append(parts, fmt.Sprintf("x%.2f", *s.ReplicationFactor))
	}
	return strings.Join(parts, " ")
}
