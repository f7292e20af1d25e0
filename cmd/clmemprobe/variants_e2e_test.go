package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
)

func job(t *testing.T, r *result.Run, st result.Strategy, variant string) *result.JobResult {
	t.Helper()
	for i := range r.Jobs {
		if r.Jobs[i].Strategy == st && r.Jobs[i].Variant == variant {
			return &r.Jobs[i]
		}
	}
	t.Fatalf("no %s under variant %q in the result", st, variant)
	return nil
}

// Two variants that change the runtime's budgets through its environment: each job's threshold is the
// one its variant's settings give, exactly, and the findings say which variant moved what.
func TestVariantsGiveEachTheirOwnThreshold(t *testing.T) {
	const base, small, budget = 256, 64, 1000
	env := FaultEnv(t, hostBudget(base))
	r, res, dir := runOut(t, env, "--max-allocs", fmt.Sprint(budget), "--strategies", "shared,per-device",
		"--variant", fmt.Sprintf("small:FAULTCL_HOST_BUDGET=%d", small*mib), "--variant", fmt.Sprintf("cap:FAULTCL_MAX_ALLOCS=%d", base))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	want := []struct {
		st      result.Strategy
		variant string
		allocs  uint64
		outcome result.Outcome
	}{
		{result.Shared, "", base, result.OutcomeFailed},
		{result.PerDevice, "", budget, result.OutcomeCompleted}, // the host budget stages only multi-device buffers
		{result.Shared, "small", small, result.OutcomeFailed},
		{result.PerDevice, "small", budget, result.OutcomeCompleted},
		{result.Shared, "cap", base, result.OutcomeFailed}, // both the budget and the cap end it at the same buffer
		{result.PerDevice, "cap", base, result.OutcomeFailed},
	}
	if len(r.Jobs) != len(want) {
		t.Fatalf("%d jobs, want %d", len(r.Jobs), len(want))
	}
	for i, w := range want {
		s := &r.Jobs[i]
		if s.Strategy != w.st || s.Variant != w.variant || s.AllocationsOK != w.allocs || s.Outcome != w.outcome {
			t.Errorf("job %d: %s/%q %s at %d, want %s/%q %s at %d (jobs run variant by variant)", i, s.Strategy, s.Variant, s.Outcome, s.AllocationsOK,
				w.st, w.variant, w.outcome, w.allocs)
		}
		if w.outcome == result.OutcomeFailed && (s.FirstFailure == nil || s.FirstFailure.Index != w.allocs || s.FirstFailure.Code != -6) {
			t.Errorf("%s/%s: first failure %+v, want -6 at #%d", w.st, w.variant, s.FirstFailure, w.allocs)
		}
	}
	if s := job(t, r, result.Shared, "small"); s.VariantSettings["FAULTCL_HOST_BUDGET"] != fmt.Sprint(small*mib) {
		t.Errorf("the job does not record its settings: %v", s.VariantSettings)
	}
	if len(r.Config.Variants) != 3 || r.Config.Variants[0].Name != "default" || r.Config.Variants[2].Settings["FAULTCL_MAX_ALLOCS"] != fmt.Sprint(base) {
		t.Errorf("config.variants %+v", r.Config.Variants)
	}
	var moved []result.Finding
	for _, f := range r.Findings {
		if f.Kind == result.FindingVariant {
			moved = append(moved, f)
		}
	}
	if len(moved) != 2 {
		t.Fatalf("want two variant findings (shared under small, per-device under cap), got %d: %+v", len(moved), moved)
	}
	smallSays := fmt.Sprintf("With variant small (FAULTCL_HOST_BUDGET=%d), shared fails at #%d where the default fails at #%d (-75.0%%)", small*mib, small, base)
	if moved[0].Variant != "small" || !strings.HasPrefix(moved[0].Sentence, smallSays) {
		t.Errorf("finding %q, want it to start %q", moved[0].Sentence, smallSays)
	}
	if moved[0].Evidence["base_allocations_ok"] != base || moved[0].Evidence["variant_allocations_ok"] != small {
		t.Errorf("evidence %v", moved[0].Evidence)
	}
	// Under cap, per-device fails where shared does: the settings account for the difference.
	capSays := fmt.Sprintf("With variant cap (FAULTCL_MAX_ALLOCS=%d), per-device fails at #%d where the default completes its budget at #%d (%.1f%%), "+
		"like shared under it: the settings of cap account for the difference between per-device and shared.", base, base, budget, 100*(float64(base)-budget)/budget)
	if f := moved[1]; f.Variant != "cap" || f.Sentence != capSays || f.Evidence["base_allocations_ok"] != budget || f.Evidence["variant_allocations_ok"] != base {
		t.Errorf("finding %+v, want %q", f, capSays)
	}
	// The table run prints (with its variant column) is the renderers' table of the result.
	if want := renderedRunWith(t, filepath.Join(dir, "run.json"), "table", report.Options{MoreHint: "-v lists them here"}); res.stdout != want {
		t.Errorf("run's table is not the result's:\n%s\nwant:\n%s", res.stdout, want)
	}
}

// --runtime-log turns on the runtime's documented logging in the workers and keeps what it printed, bounded.
func TestRuntimeLogIsKeptBounded(t *testing.T) {
	r, res, _ := runOut(t, FaultEnv(t), "--runtime-log", "--max-allocs", "3000", "--strategies", "per-device")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	if r.Config.RuntimeLog["FAULTCL_LOG"] != "1" {
		t.Errorf("config.runtime_log %v, want FAULTCL_LOG=1 for the faultcl platform", r.Config.RuntimeLog)
	}
	out := r.Jobs[0].WorkerOutput
	lines := strings.Split(out, "\n")
	// 3000 lines of the runtime's own log: far more than the 64 KiB kept; the first and the last stay, and
	// one line between says how much was left out.
	line := func(n int) string { return fmt.Sprintf("faultcl: buffer of 1048576 bytes on 1 device(s), %d live", n) }
	if lines[0] != line(1) || lines[len(lines)-1] != line(3000) {
		t.Errorf("the worker output does not hold the runtime's first and last lines: %q ... %q", lines[0], lines[len(lines)-1])
	}
	cut := regexp.MustCompile(`^\[\.\.\. [1-9][0-9]* bytes left out \.\.\.\]$`)
	if len(out) > 64<<10+100 || !slices.ContainsFunc(lines, cut.MatchString) {
		t.Errorf("worker output of %d bytes, want at most 64 KiB and the cut said", len(out))
	}
}

// Where the devices offer cl_intel_driver_diagnostics, the contexts get them, and their messages are kept.
func TestDriverDiagnosticsAreTurnedOnAndKept(t *testing.T) {
	r, res, dir := runOut(t, FaultEnv(t, "FAULTCL_EXTENSIONS=cl_intel_driver_diagnostics", hostBudget(16)), "--max-allocs", "100", "--strategies", "shared")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	s := r.Jobs[0]
	if !strings.HasPrefix(s.RuntimeDiagnostics, "cl_intel_driver_diagnostics") || len(s.Notices) != 2 ||
		s.Notices[0] != "faultcl diagnostics: context over 2 device(s); buffers of several devices are staged in host memory" ||
		s.Notices[1] != "faultcl: allocation failed: a device or the host staging budget is full" {
		t.Errorf("diagnostics %q, notices %q: want them on, the context's message and the failure's", s.RuntimeDiagnostics, s.Notices)
	}
	// The report shows them as the renderers do (in a collapsed section: report's golden files).
	if md := runTool(t, Env(), "report", "--format", "markdown", dir+"/run.json"); md.stdout != renderedRun(t, dir+"/run.json", "markdown") {
		t.Errorf("the report is not the result's:\n%s", md.stdout)
	}
	// Without the extension, nothing is asked of the runtime.
	r, _, _ = runOut(t, FaultEnv(t, hostBudget(16)), "--max-allocs", "100", "--strategies", "shared")
	if r.Jobs[0].RuntimeDiagnostics != "" {
		t.Errorf("diagnostics %q on a runtime without the extension", r.Jobs[0].RuntimeDiagnostics)
	}
}

// Each job records its devices' sizes as its own worker saw them: under pocl-limit (POCL_MEMORY_LIMIT) PoCL's
// devices report less global memory than under its defaults, and the Markdown report says so per variant.
func TestJobsRecordTheirDevicesUnderTheirVariant(t *testing.T) {
	r, _, dir := runOut(t, PoCLEnv(t), "--strategies", "shared", "--max-allocs", "10", "--variant-preset", "pocl-limit")
	var base, limited *result.JobResult
	for i := range r.Jobs {
		if s := &r.Jobs[i]; s.Variant == "" {
			base = s
		} else {
			limited = s
		}
	}
	if base == nil || limited == nil || len(base.DeviceSizes) != len(r.Devices) || len(limited.DeviceSizes) != len(r.Devices) {
		t.Fatalf("want a default and a pocl-limit job, each with the sizes of the %d devices: %+v", len(r.Devices), r.Jobs)
	}
	for i, d := range r.Devices {
		if got := base.DeviceSizes[i]; got.Device != d.Index || got.GlobalMemBytes != d.GlobalMemBytes || got.MaxAllocBytes != d.MaxAllocBytes {
			t.Errorf("default job: device sizes %+v, want the listing's %d and %d", got, d.GlobalMemBytes, d.MaxAllocBytes)
		}
		if got := limited.DeviceSizes[i]; got.GlobalMemBytes >= d.GlobalMemBytes {
			t.Errorf("pocl-limit job: device %d reports %d bytes, not less than the default's %d", d.Index, got.GlobalMemBytes, d.GlobalMemBytes)
		}
	}
	// The report says so per variant as the renderers do (report's golden markdown-devices-variant-sizes).
	if md := runTool(t, Env(), "report", "--format", "markdown", filepath.Join(dir, "run.json")).stdout; md != renderedRun(t, filepath.Join(dir, "run.json"), "markdown") {
		t.Errorf("the report is not the result's:\n%s", md)
	}
}
