// Command bench measures clmemprobe against a plain C loop (scripts/cloop/cloop.c) on the same runtime and
// holds the figures to the project's performance targets: the allocation loop's time, the time from the
// command's start to its loop, the first failure's index (the same in both), and the tool's own memory next
// to the runtime's. Runs alternate between the two programs; figures are medians of the repetitions. Then the
// fixed costs (fixed.go), each against its own baseline: devices against clinfo -l, run's set-up against the
// C loop's, and a short traced program against it untraced. It measures and prints; it does not fail on a
// missed target (machines are noisy). scripts/bench.sh builds both programs and runs this.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// scenario is one loop both programs run: shared context, buffer i for device i mod n.
type scenario struct {
	Name  string `json:"name"`
	Touch string `json:"touch"`
	Size  uint64 `json:"size_bytes"`
	Count uint64 `json:"count"`
	// ToFailure runs past the devices' memory: both programs must stop at the same buffer, and what is
	// compared is the time to get there.
	ToFailure bool `json:"to_failure,omitempty"`
	// Target is the most the tool's loop may take, as a multiple of the C loop's; 0: none.
	Target float64 `json:"target_ratio,omitempty"`
}

type row struct {
	scenario
	CSeconds, ToolSeconds float64 // the loops' medians
	Ratio                 float64
	CIndex, ToolIndex     uint64 // buffers reached: the first failure's index when it failed
	Startup               float64
	CPeakRSS, ToolPeakRSS uint64
	ToolOwn               int64 // parent + worker - C loop
	Attribution           string
	Reps                  int
	// Every repetition's loop times, in the order they ran, to show the spread behind the medians.
	CRuns, ToolRuns []float64
}

// The targets that are not ratios.
const (
	startupTarget = 1.0      // seconds from the command's start to its loop, on a GPU
	ownMemTarget  = 64 << 20 // the tool's own memory beyond the runtime's, at 1,000,000 buffers
)

func main() {
	tool := flag.String("tool", "bin/clmemprobe", "clmemprobe binary")
	cloop := flag.String("cloop", "bin/cloop", "the C loop binary")
	quick := flag.Bool("quick", false, "small counts and 3 repetitions (for CI)")
	reps := flag.Int("reps", 5, "repetitions per program and scenario")
	platform := flag.Int("platform", 0, "platform index")
	devices := flag.Int("devices", 0, "use the first N devices (0: all)")
	gpu := flag.Uint64("gpu", 0, "the GPU scenarios instead: fill 1 MiB buffers to the first failure (give a count past the devices' memory), "+
		"64 MiB buffers to the first failure, and 260,000 creates without touch")
	out := flag.String("out", "", "folder for bench.json, fixed.json and bench.md")
	loops := flag.Bool("loops", true, "the loops against the C loop (-loops=false: the fixed costs only, as for an older build)")
	fixed := flag.Bool("fixed", true, "also the fixed costs: devices against clinfo -l, run's set-up against the C loop's, a traced program against it untraced")
	clinfo := flag.String("clinfo", "clinfo", "clinfo, the baseline of devices")
	fixedReps := flag.Int("fixed-reps", 9, "repetitions of each fixed cost (3 with -quick)")
	traceCount := flag.Int("trace-count", 20000, "creates of 1 KiB the traced program makes")
	flag.Parse()
	scenarios := []scenario{
		{Name: "create only, 1 KiB", Touch: "none", Size: 1 << 10, Count: 1_000_000, Target: 1.2},
		{Name: "create and fill, 1 MiB", Touch: "fill", Size: 1 << 20, Count: 2000},
	}
	switch {
	case *gpu > 0:
		scenarios = []scenario{
			{Name: "fill to the first failure, 1 MiB", Touch: "fill", Size: 1 << 20, Count: *gpu, ToFailure: true, Target: 1.05},
			{Name: "fill to the first failure, 64 MiB", Touch: "fill", Size: 64 << 20, Count: *gpu/64 + 1, ToFailure: true, Target: 1.05},
			{Name: "create only, 1 MiB", Touch: "none", Size: 1 << 20, Count: 260_000, Target: 1.10},
		}
	case *quick:
		*reps, *fixedReps = 3, 3
		scenarios = []scenario{
			{Name: "create only, 1 KiB", Touch: "none", Size: 1 << 10, Count: 50_000, Target: 1.2},
			{Name: "create and fill, 1 MiB", Touch: "fill", Size: 1 << 20, Count: 200},
		}
	}
	if *reps < 1 || *fixedReps < 1 {
		fmt.Fprintln(os.Stderr, "bench: -reps and -fixed-reps need at least 1")
		os.Exit(2)
	}
	var rows []row
	if !*loops {
		scenarios = nil
	}
	for _, sc := range scenarios {
		fmt.Fprintf(os.Stderr, "bench: %s, %d repetitions of each program...\n", sc.Name, *reps)
		r, err := measure(*tool, *cloop, *platform, *devices, sc, *reps)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		rows = append(rows, r)
	}
	md := ""
	if len(rows) > 0 {
		md = render(rows, *gpu > 0)
	}
	var costs []fixedRow
	if *fixed {
		fmt.Fprintf(os.Stderr, "bench: the fixed costs, %d repetitions of each...\n", *fixedReps)
		var err error
		costs, err = measureFixed(fixedSpec{tool: *tool, cloop: *cloop, clinfo: *clinfo, platform: *platform, reps: *fixedReps, traceCount: *traceCount})
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		md += "\n" + renderFixed(costs)
	}
	fmt.Print(md)
	if *out != "" {
		b, _ := json.MarshalIndent(rows, "", "  ")
		_ = os.WriteFile(filepath.Join(*out, "bench.json"), b, 0o644)
		if costs != nil {
			b, _ = json.MarshalIndent(costs, "", "  ")
			_ = os.WriteFile(filepath.Join(*out, "fixed.json"), b, 0o644)
		}
		_ = os.WriteFile(filepath.Join(*out, "bench.md"), []byte(md), 0o644)
	}
}

// render is the table of figures and the targets, met or missed.
func render(rows []row, gpu bool) string {
	md := &strings.Builder{}
	t := tablewriter.NewTable(md, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRenderer(renderer.NewMarkdown()))
	t.Header("Loop", "Buffers reached (C / tool)", "C loop", "clmemprobe loop", "Ratio", "Target", "Spread (C, tool)", "Start to loop", "Tool's own memory", "Attribution")
	for _, r := range rows {
		reached := fmt.Sprintf("%d / %d", r.CIndex, r.ToolIndex)
		if r.ToFailure {
			reached += map[bool]string{true: " (same first failure)", false: " (DIFFERENT first failure)"}[r.CIndex == r.ToolIndex]
		}
		target := "-"
		if r.Target > 0 {
			target = fmt.Sprintf("<= %.2fx: %s", r.Target, met(r.Ratio <= r.Target))
		}
		own := units.SignedBytes(float64(r.ToolOwn))
		if r.Count >= 1_000_000 {
			own += fmt.Sprintf(" (< %s: %s)", units.Bytes(ownMemTarget), met(r.ToolOwn < ownMemTarget))
		}
		startup := fmt.Sprintf("%.2f s", r.Startup)
		if gpu {
			startup += fmt.Sprintf(" (<= %.1f s: %s)", startupTarget, met(r.Startup <= startupTarget))
		}
		spread := fmt.Sprintf("%.3f-%.3f s, %.3f-%.3f s", minOf(r.CRuns), maxOf(r.CRuns), minOf(r.ToolRuns), maxOf(r.ToolRuns))
		_ = t.Append([]string{r.Name, reached, fmt.Sprintf("%.3f s", r.CSeconds), fmt.Sprintf("%.3f s", r.ToolSeconds), fmt.Sprintf("%.2fx", r.Ratio),
			target, spread, startup, own, r.Attribution})
	}
	_ = t.Render()
	fmt.Fprintf(md, "\nMedians of %d alternating runs of each program. The C loop waits for the devices every 64 buffers; clmemprobe "+
		"samples memory every 10 ms and attributes failures in batches (per job: the attribution column).\n", rows[0].Reps)
	return md.String()
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func measure(tool, cloop string, platform, devices int, sc scenario, reps int) (row, error) {
	r := row{scenario: sc, Reps: reps}
	var cSec, tSec, startup, cRSS, tRSS []float64
	for i := 0; i < reps; i++ {
		c, err := runC(cloop, platform, devices, sc)
		if err != nil {
			return r, err
		}
		cSec, cRSS = append(cSec, c.LoopSeconds), append(cRSS, float64(c.PeakRSS))
		s, run, err := runTool(tool, platform, devices, sc)
		if err != nil {
			return r, err
		}
		if s.AllocationsOK != c.Allocations {
			return r, fmt.Errorf("%s: the C loop reached %d buffers and clmemprobe %d: the comparison needs the same end", sc.Name, c.Allocations, s.AllocationsOK)
		}
		r.CIndex, r.ToolIndex, r.Attribution = c.Allocations, s.AllocationsOK, s.Attribution
		tSec, tRSS = append(tSec, s.LoopSeconds), append(tRSS, float64(s.PeakRSSBytes+run.ParentPeakRSSBytes))
		startup = append(startup, run.StartupSeconds)
	}
	r.CSeconds, r.ToolSeconds, r.Startup = comparison.Median(cSec), comparison.Median(tSec), comparison.Median(startup)
	r.CRuns, r.ToolRuns = cSec, tSec
	r.Ratio = r.ToolSeconds / r.CSeconds
	r.CPeakRSS, r.ToolPeakRSS = uint64(comparison.Median(cRSS)), uint64(comparison.Median(tRSS))
	r.ToolOwn = int64(r.ToolPeakRSS) - int64(r.CPeakRSS)
	return r, nil
}

type cResult struct {
	Allocations uint64  `json:"allocations_ok"`
	LoopSeconds float64 `json:"loop_seconds"`
	FirstError  int     `json:"first_error"`
	PeakRSS     uint64  `json:"peak_rss_bytes"`
}

func runC(cloop string, platform, devices int, sc scenario) (cResult, error) {
	var c cResult
	out, err := exec.Command(cloop, strconv.Itoa(platform), strconv.FormatUint(sc.Count, 10), strconv.FormatUint(sc.Size, 10), sc.Touch,
		strconv.Itoa(devices), "64").Output()
	if err != nil {
		return c, fmt.Errorf("cloop: %v", err)
	}
	if err := json.Unmarshal(out, &c); err != nil {
		return c, fmt.Errorf("cloop output %q: %v", out, err)
	}
	if c.Allocations != sc.Count && !sc.ToFailure {
		return c, fmt.Errorf("cloop stopped at %d of %d (error %d): lower the count for this runtime", c.Allocations, sc.Count, c.FirstError)
	}
	return c, nil
}

func runTool(tool string, platform, devices int, sc scenario) (*result.JobResult, *result.Run, error) {
	args := []string{"run", "--platform", strconv.Itoa(platform), "--strategies", "shared", "--touch", sc.Touch,
		"--size", fmt.Sprintf("%dB", sc.Size), "--max-allocs", strconv.FormatUint(sc.Count, 10), "--format", "json"}
	if devices > 0 {
		args = append(args, "--devices", fmt.Sprintf("0-%d", devices-1))
	}
	out, err := exec.Command(tool, args...).Output()
	if err != nil {
		return nil, nil, fmt.Errorf("clmemprobe %v: %v", args, err)
	}
	var run result.Run
	if err := json.Unmarshal(out, &run); err != nil || len(run.Jobs) != 1 {
		return nil, nil, fmt.Errorf("clmemprobe output: %v", err)
	}
	s := &run.Jobs[0]
	if s.AllocationsOK != sc.Count && !sc.ToFailure {
		return nil, nil, fmt.Errorf("clmemprobe stopped at %d of %d (%s): lower the count for this runtime", s.AllocationsOK, sc.Count, s.Outcome)
	}
	return s, &run, nil
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
