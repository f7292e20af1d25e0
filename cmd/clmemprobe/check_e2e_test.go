package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// hostBudget is faultcl's host staging budget for n buffers of 1 MiB in a context over its two devices: the
// shared strategies fail at exactly buffer n.
func hostBudget(n int) string { return fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", n*mib) }

// checkLine checks check's one line against want, whole: the time it took and its limit are cut from its
// end, and {n} in want stands for a count (timing decides it).
func checkLine(t *testing.T, stdout, want string) {
	t.Helper()
	pattern := strings.ReplaceAll(regexp.QuoteMeta(want), `\{n\}`, `-?[0-9.]+`)
	if !regexp.MustCompile(`^` + pattern + `; [0-9.]+ s of [0-9.]+ s\n$`).MatchString(stdout) {
		t.Errorf("check said %q, want one line %q and the time it took", stdout, want)
	}
}

// record runs the probe and records its expectations; it returns the expectations file and the run.
func record(t *testing.T, env []string, args ...string) (string, *result.Run) {
	t.Helper()
	r, res, dir := runOut(t, env, args...)
	if res.code != 0 {
		t.Fatalf("recording run: exit %d: %s", res.code, res.stderr)
	}
	exp := filepath.Join(dir, "expect.json")
	if res := runTool(t, env, "check", "--record", "--output", exp, filepath.Join(dir, "run.json")); res.code != 0 {
		t.Fatalf("check --record: exit %d: %s", res.code, res.stderr)
	}
	return exp, r
}

func TestCheckOnPoCL(t *testing.T) {
	env := PoCLEnv(t)
	exp, r := record(t, env, "--touch", "fill", "--max-allocs", "150")
	start := time.Now()
	res := runTool(t, env, "check", "--expect", exp, "--budget", "30s")
	if res.code != 0 {
		t.Fatalf("the same node, the same runtime: exit %d, want 0 (healthy): %s%s", res.code, res.stdout, res.stderr)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the check took %s of a 30s budget", took)
	}
	// One line: healthy, and each job's threshold against the expected one.
	var jobs []string
	for _, s := range r.Jobs {
		jobs = append(jobs, fmt.Sprintf("%s 1 MiB %d (expected %d)", s.Strategy, s.AllocationsOK, s.AllocationsOK))
	}
	checkLine(t, res.stdout, "clmemprobe check: healthy: "+strings.Join(jobs, ", "))
	// A run.json is an expectation too.
	if res := runTool(t, env, "check", "--expect", filepath.Join(filepath.Dir(exp), "run.json"), "--budget", "30s"); res.code != 0 {
		t.Errorf("--expect run.json: exit %d: %s%s", res.code, res.stdout, res.stderr)
	}
}

func TestCheckOnTheFaultInjectionRuntime(t *testing.T) {
	const n = 256
	exp, _ := record(t, FaultEnv(t, hostBudget(n)), "--max-allocs", "1000", "--strategies", "shared,per-device")
	b, _ := os.ReadFile(exp)
	var e result.Expectations
	if err := json.Unmarshal(b, &e); err != nil || len(e.Jobs) != 2 || e.Jobs[0].AllocationsOK != n || e.Jobs[1].AllocationsOK != 1000 {
		t.Fatalf("the expectations must hold shared at %d and per-device at 1000: %v %s", n, err, b)
	}
	cases := []struct {
		name     string
		settings []string
		budget   string
		code     int
		line     string // the whole line, {n} standing for a count that timing decides
		args     []string
	}{
		{"same", []string{hostBudget(n)}, "20s", 0, fmt.Sprintf("healthy: shared 1 MiB %d (expected %d), per-device 1 MiB 1000 (expected 1000)", n, n), nil},
		// 5% fewer buffers is within the 10% tolerance; half is not.
		{"within tolerance", []string{hostBudget(n * 95 / 100)}, "20s", 0, fmt.Sprintf("healthy: shared 1 MiB %d (expected %d), per-device 1 MiB 1000 (expected 1000)", n*95/100, n), nil},
		{"half", []string{hostBudget(n / 2)}, "20s", 1, fmt.Sprintf("BELOW EXPECTATION: shared 1 MiB: %d buffers, expected %d (-50.0%%), CL_OUT_OF_HOST_MEMORY (-6) at create, "+
			"per-device 1 MiB 1000 (expected 1000)", n/2, n), nil},
		// A tolerance of 100% or more accepts any count (it once made every count "below").
		{"half within a tolerance of 150%", []string{hostBudget(n / 2)}, "20s", 0, fmt.Sprintf("healthy: shared 1 MiB %d (expected %d), per-device 1 MiB 1000 (expected 1000)", n/2, n),
			[]string{"--tolerance", "150%"}},
		{"crash", []string{hostBudget(n), "FAULTCL_CRASH_AT=100", "FAULTCL_FAULTS_MULTI_ONLY=1"}, "20s", 1, "BELOW EXPECTATION: shared 1 MiB: crashed after 99 buffers (the worker faulted " +
			"with SIGSEGV (segmentation violation at address 0x0, inside a call into the OpenCL runtime)), per-device 1 MiB 1000 (expected 1000)", nil},
		// Every create sleeps 50 ms: 1000 buffers cannot fit in 8 s, and the check must still end within it.
		{"too slow for the budget", []string{hostBudget(n), "FAULTCL_SLOW_US=50000"}, "8s", 1, fmt.Sprintf("BELOW EXPECTATION: shared 1 MiB: {n} buffers, expected %d ({n}%%), "+
			"stopped: timeout: the strategy ran longer than {n}s, per-device 1 MiB: {n} buffers, expected 1000 ({n}%%), stopped: interrupted", n), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			res := runTool(t, FaultEnv(t, c.settings...), append([]string{"check", "--expect", exp, "--budget", c.budget}, c.args...)...)
			took := time.Since(start)
			budget, _ := time.ParseDuration(c.budget)
			if res.code != c.code {
				t.Errorf("exit %d, want %d: %s%s", res.code, c.code, res.stdout, res.stderr)
			}
			if took > budget {
				t.Errorf("took %s, over the budget of %s", took, budget)
			}
			checkLine(t, res.stdout, "clmemprobe check: "+c.line)
		})
	}
	t.Run("bad input", func(t *testing.T) {
		env := FaultEnv(t, hostBudget(n))
		// The same expectations, as if recorded on two H200s.
		other := filepath.Join(t.TempDir(), "h200.json")
		if err := os.WriteFile(other, []byte(strings.Replace(string(b), e.DeviceModel, "2x NVIDIA H200", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		// A node with one device of the two expected: exit 3 naming the devices.
		errorLine(t, runTool(t, FaultEnv(t, hostBudget(n), "FAULTCL_DEVICES=1"), "check", "--expect", exp), exitNoOpenCL,
			`clmemprobe: the expectations name devices [0 1], which this node lacks: --devices: device 1 does not exist: platform "faultcl" has 1 device(s), numbered 0 to 0`)
		for _, args := range [][]string{
			{"check"},
			{"check", "--expect", filepath.Join(t.TempDir(), "missing.json")},
			{"check", "--expect", "/dev/zero"},
			{"check", "--expect", exp, "--budget", "1s"},
			{"check", "--record", exp},
			{"check", "--expect", exp, "--tolerance", "lots"},
		} {
			if res := runTool(t, env, args...); res.code != exitUsage || strings.Count(res.stderr, "\n") != 1 {
				t.Errorf("%v: exit %d, stderr %q; want one line and exit 2", args, res.code, res.stderr)
			}
		}
		// Expectations recorded on one device model do not judge another.
		errorLine(t, runTool(t, env, "check", "--expect", other), exitUsage, "clmemprobe: this node has "+e.DeviceModel+
			" where the expectations were recorded on 2x NVIDIA H200: give this node its own expectations")
		if res := runTool(t, env, "check", "--expect", exp, "--opencl-lib", "/nonexistent/libOpenCL.so"); res.code != exitNoOpenCL {
			t.Errorf("no OpenCL: exit %d, want %d: %s", res.code, exitNoOpenCL, res.stderr)
		}
	})
}

// A run recorded under variants is checked under the same variants: the expectations carry their settings
// (a check once ran the defaults alone and called every variant's job "did not run within the time budget").
func TestCheckRunsTheRecordedVariants(t *testing.T) {
	const n, capped = 256, 64
	env := FaultEnv(t, hostBudget(n))
	exp, _ := record(t, env, "--max-allocs", "1000", "--strategies", "shared", "--variant", fmt.Sprintf("cap:FAULTCL_HOST_BUDGET=%d", capped*mib))
	res := runTool(t, env, "check", "--expect", exp, "--budget", "20s")
	if res.code != 0 {
		t.Fatalf("exit %d, want 0: %s%s", res.code, res.stdout, res.stderr)
	}
	checkLine(t, res.stdout, fmt.Sprintf("clmemprobe check: healthy: shared 1 MiB %d (expected %d), shared 1 MiB variant cap %d (expected %d)", n, n, capped, capped))
	// Under the default budget halved, the variant (its own budget) is still healthy and the default is not.
	res = runTool(t, FaultEnv(t, hostBudget(n/2)), "check", "--expect", exp, "--budget", "20s")
	if res.code != 1 {
		t.Errorf("exit %d, want 1: %s", res.code, res.stdout)
	}
	checkLine(t, res.stdout, fmt.Sprintf("clmemprobe check: BELOW EXPECTATION: shared 1 MiB: %d buffers, expected %d (-50.0%%), CL_OUT_OF_HOST_MEMORY (-6) at create, "+
		"shared 1 MiB variant cap %d (expected %d)", n/2, n, capped, capped))
}
