package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// fixedRow is one fixed cost: what the tool takes against what its baseline takes, both medians of runs
// that alternate in one call. A target is a ratio (Ratio set) or a difference in seconds (Diff set).
type fixedRow struct {
	Name          string    `json:"name"`
	Baseline      string    `json:"baseline"`
	BaseSeconds   float64   `json:"baseline_seconds"`
	ToolSeconds   float64   `json:"tool_seconds"`
	TargetRatio   float64   `json:"target_ratio,omitempty"`
	TargetSeconds float64   `json:"target_seconds_over,omitempty"`
	BaseRuns      []float64 `json:"baseline_runs"`
	ToolRuns      []float64 `json:"tool_runs"`
	Note          string    `json:"note,omitempty"`
}

// fixedSpec is what the fixed costs are measured with.
type fixedSpec struct {
	tool, cloop, clinfo string
	platform, reps      int
	// traceCount creates of 1 KiB make the traced program: short, so that the tool's start and finish are
	// most of what a trace adds.
	traceCount int
}

// measureFixed measures the tool's fixed costs, each against its baseline in alternating runs: devices
// against clinfo -l, run's set-up (command start to its loop) against the C loop's (main to its loop), and
// a traced program against the same program untraced, with the defaults and with --via layer.
func measureFixed(s fixedSpec) ([]fixedRow, error) {
	var rows []fixedRow
	if _, err := exec.LookPath(s.clinfo); err != nil {
		rows = append(rows, fixedRow{Name: "devices", Baseline: "clinfo -l", Note: "clinfo not found (apt-get install clinfo, or -clinfo PATH)"})
	} else {
		r := fixedRow{Name: "devices", Baseline: "clinfo -l", TargetRatio: 1.2}
		if err := alternate(&r, s.reps, wall(s.clinfo, "-l"), wall(s.tool, "devices")); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	r := fixedRow{Name: "run: command start to its loop (10 buffers, fill)", Baseline: "C loop: main to its loop", TargetSeconds: 0.1}
	if err := alternate(&r, s.reps, cloopSetup(s), runStartup(s)); err != nil {
		return nil, err
	}
	rows = append(rows, r)
	prog := []string{s.cloop, strconv.Itoa(s.platform), strconv.Itoa(s.traceCount), "1024", "none", "1", "64"}
	for _, via := range []string{"auto", "layer"} {
		name := fmt.Sprintf("trace --via %s of %d creates of 1 KiB", via, s.traceCount)
		if via == "auto" {
			name = fmt.Sprintf("trace (the defaults) of %d creates of 1 KiB", s.traceCount)
		}
		r := fixedRow{Name: name, Baseline: "the same program untraced", TargetSeconds: 0.05}
		traced := append([]string{"trace", "-q", "--via", via, "--"}, prog...)
		// The first trace builds the layer into the cache and asks the loader: not counted.
		if err := exec.Command(s.tool, traced...).Run(); err != nil {
			return nil, fmt.Errorf("clmemprobe %s: %v", strings.Join(traced, " "), err)
		}
		if err := alternate(&r, s.reps, wall(prog[0], prog[1:]...), wall(s.tool, traced...)); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// alternate runs base and tool in turn, reps times each, the first of each pair in turn, and keeps the
// medians.
func alternate(r *fixedRow, reps int, base, tool func() (float64, error)) error {
	for i := 0; i < reps; i++ {
		first, second := base, tool
		if i%2 == 1 {
			first, second = tool, base
		}
		a, err := first()
		if err != nil {
			return err
		}
		b, err := second()
		if err != nil {
			return err
		}
		if i%2 == 1 {
			a, b = b, a
		}
		r.BaseRuns, r.ToolRuns = append(r.BaseRuns, a), append(r.ToolRuns, b)
	}
	r.BaseSeconds, r.ToolSeconds = comparison.Median(r.BaseRuns), comparison.Median(r.ToolRuns)
	return nil
}

// wall times a whole command, start to exit, its output discarded.
func wall(name string, args ...string) func() (float64, error) {
	return func() (float64, error) {
		start := time.Now()
		if err := exec.Command(name, args...).Run(); err != nil {
			return 0, fmt.Errorf("%s %s: %v", name, strings.Join(args, " "), err)
		}
		return time.Since(start).Seconds(), nil
	}
}

// cloopSetup is the C loop's set-up: main to its loop, 10 buffers of 1 MiB filled.
func cloopSetup(s fixedSpec) func() (float64, error) {
	return func() (float64, error) {
		out, err := exec.Command(s.cloop, strconv.Itoa(s.platform), "10", "1048576", "fill", "1", "64").Output()
		if err != nil {
			return 0, fmt.Errorf("cloop: %v", err)
		}
		var c struct {
			Setup float64 `json:"setup_seconds"`
		}
		if err := json.Unmarshal(out, &c); err != nil {
			return 0, fmt.Errorf("cloop output %q: %v", out, err)
		}
		return c.Setup, nil
	}
}

// runStartup is run's time from the command's start to its loop (startup_seconds), on the same loop.
func runStartup(s fixedSpec) func() (float64, error) {
	return func() (float64, error) {
		args := []string{"run", "--platform", strconv.Itoa(s.platform), "--devices", "0", "--strategies", "shared", "--touch", "fill",
			"--max-allocs", "10", "--format", "json"}
		out, err := exec.Command(s.tool, args...).Output()
		if err != nil {
			return 0, fmt.Errorf("clmemprobe %s: %v", strings.Join(args, " "), err)
		}
		var run result.Run
		if err := json.Unmarshal(out, &run); err != nil {
			return 0, fmt.Errorf("clmemprobe output: %v", err)
		}
		return run.StartupSeconds, nil
	}
}

// renderFixed is the fixed costs' table, each against its target, met or missed.
func renderFixed(rows []fixedRow) string {
	md := &strings.Builder{}
	t := tablewriter.NewTable(md, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRenderer(renderer.NewMarkdown()))
	t.Header("What", "Baseline", "Baseline time", "clmemprobe", "Ratio", "Over the baseline", "Target", "Spread (baseline, tool)")
	for _, r := range rows {
		if r.Note != "" {
			_ = t.Append([]string{r.Name, r.Baseline, "-", "-", "-", "-", "-", r.Note})
			continue
		}
		target := "-"
		switch {
		case r.TargetRatio > 0:
			target = fmt.Sprintf("<= %.2fx: %s", r.TargetRatio, met(r.ToolSeconds <= r.TargetRatio*r.BaseSeconds))
		case r.TargetSeconds > 0:
			target = fmt.Sprintf("<= +%.0f ms: %s", r.TargetSeconds*1000, met(r.ToolSeconds-r.BaseSeconds <= r.TargetSeconds))
		}
		_ = t.Append([]string{r.Name, r.Baseline, fmt.Sprintf("%.3f s", r.BaseSeconds), fmt.Sprintf("%.3f s", r.ToolSeconds),
			fmt.Sprintf("%.2fx", r.ToolSeconds/r.BaseSeconds), fmt.Sprintf("%+.0f ms", (r.ToolSeconds-r.BaseSeconds)*1000), target,
			fmt.Sprintf("%.3f-%.3f s, %.3f-%.3f s", minOf(r.BaseRuns), maxOf(r.BaseRuns), minOf(r.ToolRuns), maxOf(r.ToolRuns))})
	}
	_ = t.Render()
	fmt.Fprintf(md, "\nMedians of %d runs of each, alternating, each pair in turn first; whole commands timed from outside, "+
		"except the two set-ups, which each program times itself (run.json's startup_seconds; the C loop's main to its loop).\n", len(rows[len(rows)-1].ToolRuns))
	return md.String()
}
