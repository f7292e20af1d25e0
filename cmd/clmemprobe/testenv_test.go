// Test helpers that build and find what the end-to-end tests run (the clmemprobe binary, the fault-injection
// runtime, and PoCL with two devices), run it, and read what it wrote. On CI (CLMEMPROBE_REQUIRE_OPENCL=1,
// set by .ci/run) a test that needs OpenCL fails instead of skipping.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/rogpeppe/go-internal/testscript"
)

// RequireEnv names the variable that turns skips for a missing OpenCL runtime into failures.
const RequireEnv = "CLMEMPROBE_REQUIRE_OPENCL"

// Root returns the repository root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("required by "+RequireEnv+"=1: "+format, args...)
	}
	t.Skipf(format, args...)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  string
	tmpRoot   string
)

func tmp() string {
	if tmpRoot == "" {
		tmpRoot, _ = os.MkdirTemp("", "clmemprobe-test-*")
	}
	return tmpRoot
}

// TestMain removes what the helpers built (the binary, the fault-injection runtime), so the tests leave
// nothing behind in the temporary folder. The test binary is also the clmemprobe command of the scripts
// (script_test.go: testscript runs it under that name).
func TestMain(m *testing.M) {
	// In-process tests (cli_test.go) and the scripts run the command line in this process; its children
	// are this test binary, re-executed as the tool's own would be.
	if isChild(os.Args) {
		if os.Getenv(threadProbeEnv) == "1" {
			os.Exit(reportThread())
		}
		os.Exit(probe.RunChild(os.Stdin))
	}
	testscript.Main(cleaningUp{m}, map[string]func(){
		"clmemprobe": func() { os.Exit(realMain(os.Args, os.Stdout, os.Stderr)) },
	})
}

// cleaningUp runs the tests, then removes the temporary folder the helpers built into.
type cleaningUp struct{ m *testing.M }

func (c cleaningUp) Run() int {
	code := c.m.Run()
	if tmpRoot != "" {
		_ = os.RemoveAll(tmpRoot)
	}
	return code
}

// Binary builds clmemprobe once per test process (CGO_ENABLED=0, as shipped) and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binPath = filepath.Join(tmp(), "clmemprobe")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/clmemprobe")
		cmd.Dir = Root()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = string(out) + err.Error()
		}
	})
	if buildErr != "" {
		t.Fatalf("building clmemprobe: %s", buildErr)
	}
	return binPath
}

var (
	faultOnce sync.Once
	faultDir  string
	faultErr  string
)

// FaultCL builds the fault-injection runtime once and returns the folder to name in OCL_ICD_VENDORS.
func FaultCL(t testing.TB) string {
	t.Helper()
	faultOnce.Do(func() {
		out := filepath.Join(tmp(), "faultcl")
		cmd := exec.Command("bash", filepath.Join(Root(), "scripts", "faultcl", "build.sh"), out)
		b, err := cmd.CombinedOutput()
		if err != nil {
			faultErr = string(b) + err.Error()
			return
		}
		faultDir = strings.TrimSpace(string(b[bytes.LastIndexByte(bytes.TrimSpace(b), '\n')+1:]))
	})
	if faultErr != "" {
		skipOrFail(t, "cannot build the fault-injection runtime (needs cc and opencl-c-headers): %s", faultErr)
	}
	return faultDir
}

// PoCLEnv returns the environment for a run on PoCL with two devices, or skips (fails on CI) when PoCL or
// the ICD loader is missing.
func PoCLEnv(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob("/etc/OpenCL/vendors/*pocl*.icd")
	if len(files) == 0 {
		skipOrFail(t, "PoCL is not installed (apt-get install pocl-opencl-icd ocl-icd-libopencl1)")
	}
	return Env("POCL_DEVICES=pthread pthread", "OCL_ICD_VENDORS=/etc/OpenCL/vendors", fmt.Sprintf("CLMEMPROBE_HOST_RESERVE=%dB", poclReserve))
}

// The host reserves of the test suite's runs (CLMEMPROBE_HOST_RESERVE), where a test gives none: what each
// runtime's tests move fits above them on a machine where another process holds all but 2 GiB. PoCL's
// device memory is the host's, and its tests move up to about 1 GiB; the fault-injection runtime's device
// memory is bookkeeping, and its host staging copies take up to the 1 GiB of TestHostMemoryOutsideRSS.
// With the default (1 GiB or 5% of RAM) such a machine stopped 16 tests at the guard.
const (
	poclReserve  = 256 << 20
	faultReserve = 64 << 20
)

// FaultEnv returns the environment for a run on the fault-injection runtime with the given settings, with
// its host reserve (faultReserve). A test that means the guard to act sets --host-reserve.
func FaultEnv(t testing.TB, settings ...string) []string {
	t.Helper()
	return Env(append([]string{"OCL_ICD_VENDORS=" + FaultCL(t), fmt.Sprintf("CLMEMPROBE_HOST_RESERVE=%dB", faultReserve)}, settings...)...)
}

// Env is the test process's environment without any OpenCL or faultcl setting, and with a UTF-8 locale and
// no terminal settings (so tables come out the same everywhere), plus extra.
func Env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "FAULTCL_") || strings.HasPrefix(kv, "OCL_ICD_") || strings.HasPrefix(kv, "POCL_") ||
			strings.HasPrefix(kv, "CLMEMPROBE_OPENCL_LIB=") || strings.HasPrefix(kv, "CLMEMPROBE_HOST_RESERVE=") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") ||
			strings.HasPrefix(kv, "NO_COLOR=") || strings.HasPrefix(kv, "TERM=") || strings.HasPrefix(kv, "COLUMNS=") {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "LANG=C.UTF-8"), extra...)
}

const mib = 1 << 20

// invocation is what one run of the binary produced.
type invocation struct {
	stdout, stderr string
	code           int
}

// runTool runs the binary with env and args, bounded in time.
func runTool(t *testing.T, env []string, args ...string) invocation {
	t.Helper()
	return runToolVia(t, env, append([]string{Binary(t)}, args...)...)
}

// runToolVia runs a command line that starts the binary itself (a shell that sets a limit or moves into a
// cgroup first, then execs it), bounded in time.
func runToolVia(t *testing.T, env []string, argv ...string) invocation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := argv[1:]
	cmd := exec.CommandContext(ctx, argv[0], args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running clmemprobe %v: %v", args, err)
	}
	return invocation{out.String(), errb.String(), code}
}

// decodeRun reads the run a `--format json` invocation printed.
func decodeRun(t *testing.T, res invocation) *result.Run {
	t.Helper()
	var r result.Run
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("the run's JSON (exit %d): %v; stderr: %s", res.code, err, res.stderr)
	}
	return &r
}

// runOut runs `run` with --out in a fresh folder and loads the run.json it wrote.
func runOut(t *testing.T, env []string, args ...string) (*result.Run, invocation, string) {
	t.Helper()
	dir := t.TempDir()
	res := runTool(t, env, append(append([]string{"run"}, args...), "--out", dir)...)
	r, err := result.Load(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatalf("run.json after %v (exit %d, stderr %q): %v", args, res.code, res.stderr, err)
	}
	return r, res, dir
}

func strategy(t *testing.T, r *result.Run, name result.Strategy) *result.JobResult {
	t.Helper()
	for i := range r.Jobs {
		if r.Jobs[i].Strategy == name {
			return &r.Jobs[i]
		}
	}
	t.Fatalf("no strategy %q in result (have %d)", name, len(r.Jobs))
	return nil
}

func wantFailure(t *testing.T, s *result.JobResult, index uint64, stage result.Stage, code int32, device int) {
	t.Helper()
	if s.Outcome != result.OutcomeFailed || s.FirstFailure == nil {
		t.Fatalf("%s: outcome %q (%s), want failed", s.Strategy, s.Outcome, s.Reason)
	}
	f := s.FirstFailure
	if f.Index != index || f.Stage != stage || f.Code != code || f.Device != device {
		t.Fatalf("%s: first failure #%d at %s code %d device %d; want #%d at %s code %d device %d",
			s.Strategy, f.Index, f.Stage, f.Code, f.Device, index, stage, code, device)
	}
	if s.AllocationsOK != index || f.BytesBefore != index*s.SizeBytes {
		t.Fatalf("%s: allocations_ok %d, bytes_before %d; want %d and %d", s.Strategy, s.AllocationsOK, f.BytesBefore, index, index*s.SizeBytes)
	}
}

func within(got, want, tol float64) bool { return math.Abs(got-want) <= tol*math.Abs(want) }

// renderedRun is what the renderers make of the run.json at path in format, as a pipe gets it.
func renderedRun(t *testing.T, path, format string) string {
	t.Helper()
	return renderedRunWith(t, path, format, report.Options{})
}

// renderedRunWith is renderedRun with the options a command passes.
func renderedRunWith(t *testing.T, path, format string, opts report.Options) string {
	t.Helper()
	r, err := result.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.RenderWith(&b, format, findings.Judge(r), opts); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// renderedTrace is what the renderers make of the trace.json at path in format, as a pipe gets it: what
// a command that shows a saved trace must print, byte for byte.
func renderedTrace(t *testing.T, path, format string) string {
	t.Helper()
	tr, err := result.LoadTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.Render(&b, format, findings.JudgeTrace(tr)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// hasFinding reports whether the run holds a finding of kind k for which match holds (nil: any).
func hasFinding(r *result.Run, k result.FindingKind, match func(result.Finding) bool) bool {
	for _, f := range r.Findings {
		if f.Kind == k && (match == nil || match(f)) {
			return true
		}
	}
	return false
}

func hasVerdict(r *result.Run, part string) bool {
	for _, v := range r.Verdict {
		if strings.Contains(v, part) {
			return true
		}
	}
	return false
}

// workerOf waits for the worker process of parent that is not in seen, and returns its pid.
func workerOf(t *testing.T, parent int, seen map[int]bool) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", parent))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			for _, field := range strings.Fields(string(b)) {
				pid, _ := strconv.Atoi(field)
				// Only workers: the parent may start other short-lived helpers while it collects the environment.
				cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				if pid > 0 && !seen[pid] && bytes.Contains(cmdline, []byte("__child\x00strategy")) {
					seen[pid] = true
					return pid
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no new worker of %d appeared", parent)
	return 0
}

// watchLowest calls read every interval, from now until the function it returns is called (or the test
// ends); that returns the lowest value read and how many readings there were. A failed reading is skipped.
func watchLowest(t *testing.T, every time.Duration, read func() (uint64, bool)) func() (lowest uint64, readings int) {
	lowest, readings := uint64(math.MaxUint64), 0
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			if v, ok := read(); ok {
				lowest, readings = min(lowest, v), readings+1
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	end := func() (uint64, int) {
		once.Do(func() { close(stop); <-done })
		return lowest, readings
	}
	t.Cleanup(func() { end() })
	return end
}

// madeBuffers waits until the run writing into dir has streamed a sample of the named strategy with
// buffers made: its worker is in the allocation loop.
func madeBuffers(t *testing.T, dir, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(dir, "samples.jsonl"))
		for _, line := range bytes.Split(b, []byte("\n")) {
			var s struct {
				Strategy string `json:"strategy"`
				Index    uint64 `json:"index"`
			}
			if json.Unmarshal(line, &s) == nil && s.Strategy == name && s.Index > 0 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no sample of %s with buffers made in %s", name, dir)
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// startRun starts `run` in the background for tests that signal its processes.
func startRun(t *testing.T, env []string, dir string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(Binary(t), append(append([]string{"run"}, args...), "--out", dir)...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, &out
}

func exitOf(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

// errorLine checks the promise for bad input where the line is the contract: the documented code and
// exactly the line want on stderr, nothing else.
func errorLine(t *testing.T, res invocation, code int, want string) {
	t.Helper()
	if res.code != code || res.stderr != want+"\n" {
		t.Errorf("exit %d, stderr %q; want %d and %q", res.code, res.stderr, code, want+"\n")
	}
}

// oneLineError checks the promise for bad input: one line on stderr, the documented code, no panic.
func oneLineError(t *testing.T, res invocation, code int, mention string) {
	t.Helper()
	if res.code != code {
		t.Errorf("exit code %d, want %d (stderr %q)", res.code, code, res.stderr)
	}
	msg := strings.TrimSpace(res.stderr)
	if strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "clmemprobe:") {
		t.Errorf("want one line starting clmemprobe:, got %q", res.stderr)
	}
	if strings.Contains(res.stderr, "panic") || strings.Contains(res.stderr, "goroutine") {
		t.Errorf("stack trace on stderr: %q", res.stderr)
	}
	if !strings.Contains(strings.ToLower(msg), strings.ToLower(mention)) {
		t.Errorf("error %q should mention %q", msg, mention)
	}
}
