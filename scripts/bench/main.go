// Command bench measures clmemprobe against a plain C loop (scripts/cloop/cloop.c) on the same runtime: the
// per-allocation time inside the loop, the cost of sampling and event streaming, and the tool's own memory
// next to the runtime's. Runs alternate between the two programs; figures are medians of the repetitions.
// scripts/bench.sh builds both programs and runs this.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

type scenario struct {
	Touch string `json:"touch"`
	Size  uint64 `json:"size_bytes"`
	Count uint64 `json:"count"`
	// ToFailure runs past the devices' memory: both programs must stop at the same buffer, and what is
	// compared is the time to get there.
	ToFailure bool `json:"to_failure,omitempty"`
}

type row struct {
	scenario
	CNs             float64 `json:"c_ns_per_alloc"`
	ToolNs          float64 `json:"tool_ns_per_alloc"`
	ToolNoSampleNs  float64 `json:"tool_no_sampling_ns_per_alloc"`
	Ratio           float64 `json:"ratio_tool_to_c"`
	SamplingCost    float64 `json:"sampling_overhead"` // tool / tool without sampling - 1
	CPeakRSS        uint64  `json:"c_peak_rss_bytes"`
	ToolPeakRSS     uint64  `json:"tool_peak_rss_bytes"` // parent + worker
	ToolOverheadRSS int64   `json:"tool_overhead_rss_bytes"`
	Samples         int     `json:"samples_per_run"`
	Reached         uint64  `json:"buffers_reached"`
	CSeconds        float64 `json:"c_seconds_to_end"`
	ToolSeconds     float64 `json:"tool_seconds_to_end"`
	Reps            int     `json:"repetitions"`
}

func main() {
	tool := flag.String("tool", "bin/clmemprobe", "clmemprobe binary")
	cloop := flag.String("cloop", "bin/cloop", "the C loop binary")
	quick := flag.Bool("quick", false, "small counts and 3 repetitions (for CI)")
	reps := flag.Int("reps", 5, "repetitions per program and scenario")
	platform := flag.Int("platform", 0, "platform index")
	devices := flag.Int("devices", 0, "use the first N devices (0: all)")
	fillCount := flag.Uint64("fill-count", 2000, "buffers for the touch=fill scenario")
	noneCount := flag.Uint64("none-count", 1000000, "buffers for the touch=none scenario")
	out := flag.String("out", "", "folder for bench.json and bench.md")
	toFailure := flag.Uint64("to-failure", 0, "instead: N buffers of touch fill, more than the devices hold, timed to the first failure")
	flag.Parse()
	scenarios := []scenario{{Touch: "none", Size: 1 << 20, Count: *noneCount}, {Touch: "fill", Size: 1 << 20, Count: *fillCount}}
	if *quick {
		*reps = 3
		scenarios = []scenario{{Touch: "none", Size: 1 << 20, Count: 50000}, {Touch: "fill", Size: 1 << 20, Count: 200}}
	}
	if *toFailure > 0 {
		scenarios = []scenario{{Touch: "fill", Size: 1 << 20, Count: *toFailure, ToFailure: true}}
	}
	var rows []row
	for _, sc := range scenarios {
		r, err := measure(*tool, *cloop, *platform, *devices, sc, *reps)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		rows = append(rows, r)
	}
	md := &strings.Builder{}
	t := tablewriter.NewTable(md, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRenderer(renderer.NewMarkdown()))
	t.Header("Touch", "Buffers", "C loop ns/alloc", "clmemprobe ns/alloc", "Ratio", "Sampling cost", "C peak RSS", "Tool peak RSS (parent+worker)", "Tool's own memory")
	for _, r := range rows {
		buffers := strconv.FormatUint(r.Reached, 10)
		if r.ToFailure {
			buffers += fmt.Sprintf(" (first failure; C %.1f s, tool %.1f s)", r.CSeconds, r.ToolSeconds)
		}
		_ = t.Append([]string{r.Touch, buffers, fmt.Sprintf("%.0f", r.CNs), fmt.Sprintf("%.0f", r.ToolNs),
			fmt.Sprintf("%.2fx", r.Ratio), fmt.Sprintf("%+.1f%%", 100*r.SamplingCost), units.Bytes(r.CPeakRSS),
			units.Bytes(r.ToolPeakRSS), units.SignedBytes(float64(r.ToolOverheadRSS))})
	}
	_ = t.Render()
	fmt.Print(md.String())
	if *out != "" {
		b, _ := json.MarshalIndent(rows, "", "  ")
		_ = os.WriteFile(filepath.Join(*out, "bench.json"), b, 0o644)
		_ = os.WriteFile(filepath.Join(*out, "bench.md"), []byte(md.String()), 0o644)
	}
}

func measure(tool, cloop string, platform, devices int, sc scenario, reps int) (row, error) {
	r := row{scenario: sc, Reps: reps}
	var cNs, tNs, nsNs []float64
	var cRSS, tRSS []float64
	for i := 0; i < reps; i++ {
		c, err := runC(cloop, platform, devices, sc)
		if err != nil {
			return r, err
		}
		cNs, cRSS = append(cNs, c.NsPerAlloc), append(cRSS, float64(c.PeakRSS))
		s, run, err := runTool(tool, platform, devices, sc, "10ms")
		if err != nil {
			return r, err
		}
		if s.AllocationsOK != c.Allocations {
			return r, fmt.Errorf("the C loop reached %d buffers and clmemprobe %d: the comparison needs the same end", c.Allocations, s.AllocationsOK)
		}
		r.Reached = c.Allocations
		tNs, tRSS = append(tNs, s.NanosPerAlloc), append(tRSS, float64(s.PeakRSSBytes+run.ParentPeakRSSBytes))
		r.Samples = s.SamplesTotal
		q, _, err := runTool(tool, platform, devices, sc, "1h")
		if err != nil {
			return r, err
		}
		nsNs = append(nsNs, q.NanosPerAlloc)
	}
	r.CNs, r.ToolNs, r.ToolNoSampleNs = median(cNs), median(tNs), median(nsNs)
	r.Ratio = r.ToolNs / r.CNs
	r.SamplingCost = r.ToolNs/r.ToolNoSampleNs - 1
	r.CPeakRSS, r.ToolPeakRSS = uint64(median(cRSS)), uint64(median(tRSS))
	r.ToolOverheadRSS = int64(r.ToolPeakRSS) - int64(r.CPeakRSS)
	r.CSeconds, r.ToolSeconds = r.CNs*float64(r.Reached)/1e9, r.ToolNs*float64(r.Reached)/1e9
	return r, nil
}

type cResult struct {
	Allocations uint64  `json:"allocations_ok"`
	NsPerAlloc  float64 `json:"ns_per_alloc"`
	FirstError  int     `json:"first_error"`
	PeakRSS     uint64  `json:"peak_rss_bytes"`
}

func runC(cloop string, platform, devices int, sc scenario) (cResult, error) {
	var c cResult
	out, err := exec.Command(cloop, strconv.Itoa(platform), strconv.FormatUint(sc.Count, 10), strconv.FormatUint(sc.Size, 10), sc.Touch, strconv.Itoa(devices)).Output()
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

func runTool(tool string, platform, devices int, sc scenario, interval string) (*result.StrategyResult, *result.Run, error) {
	args := []string{"run", "--platform", strconv.Itoa(platform), "--strategies", "shared", "--touch", sc.Touch,
		"--size", fmt.Sprintf("%dB", sc.Size), "--max-allocs", strconv.FormatUint(sc.Count, 10), "--sample-interval", interval, "--format", "json"}
	if devices > 0 {
		args = append(args, "--devices", fmt.Sprintf("0-%d", devices-1))
	}
	out, err := exec.Command(tool, args...).Output()
	if err != nil {
		return nil, nil, fmt.Errorf("clmemprobe %v: %v", args, err)
	}
	var run result.Run
	if err := json.Unmarshal(out, &run); err != nil || len(run.Strategies) != 1 {
		return nil, nil, fmt.Errorf("clmemprobe output: %v", err)
	}
	s := &run.Strategies[0]
	if s.AllocationsOK != sc.Count && !sc.ToFailure {
		return nil, nil, fmt.Errorf("clmemprobe stopped at %d of %d (%s): lower the count for this runtime", s.AllocationsOK, sc.Count, s.Outcome)
	}
	return s, &run, nil
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
