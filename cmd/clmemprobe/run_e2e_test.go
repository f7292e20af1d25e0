package main

// End-to-end tests: the real binary on a real OpenCL runtime (PoCL with two devices, and the faultcl
// fault-injection runtime loaded through the real ICD loader). Expected values are computed from the
// runtime's parameters, never copied from output.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

func TestRunDefaultsPrintsThreeStrategies(t *testing.T) {
	res := runTool(t, PoCLEnv(t), "run", "--format", "json")
	if res.code != 0 {
		t.Fatalf("run: exit %d: %s", res.code, res.stderr)
	}
	var r result.Run
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("run's JSON: %v", err)
	}
	// The three default strategies (not device-list), each with the default budget of 100000 buffers.
	var got []result.Strategy
	for _, s := range r.Jobs {
		got = append(got, s.Strategy)
	}
	if want := []result.Strategy{result.Shared, result.PerDevice, result.MigrateFirst}; !slices.Equal(got, want) || r.Config.MaxAllocs != 100000 {
		t.Errorf("strategies %v with a budget of %d, want %v with 100000", got, r.Config.MaxAllocs, want)
	}
	if res.stderr != "" {
		t.Errorf("no progress line may go to a pipe, got %q", res.stderr)
	}
}

func TestRunTouchFillWritesTheResultContract(t *testing.T) {
	const n, size = 300, mib
	_, res, dir := runOut(t, PoCLEnv(t), "--touch", "fill", "--max-allocs", strconv.Itoa(n))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	// The field names scripts rely on (DESIGN.md's result contract).
	for _, k := range []string{"schema_version", "tool", "environment", "devices", "config", "strategies", "verdict"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("run.json lacks %q", k)
		}
	}
	if v := doc["tool"].(map[string]any)["version"]; v == "" || v == nil {
		t.Errorf("tool.version is empty")
	}
	for _, d := range doc["devices"].([]any) {
		for _, k := range []string{"index", "name", "vendor", "driver_version", "global_mem_bytes", "max_alloc_bytes"} {
			if _, ok := d.(map[string]any)[k]; !ok {
				t.Errorf("device lacks %q", k)
			}
		}
	}
	strategies := doc["strategies"].([]any)
	if len(strategies) != 3 {
		t.Fatalf("want the 3 default strategies, got %d", len(strategies))
	}
	for _, s := range strategies {
		m := s.(map[string]any)
		for _, k := range []string{"strategy", "devices", "outcome", "allocations_ok", "bytes_ok", "first_failure",
			"host_bytes_per_buffer", "seconds", "samples"} {
			if _, ok := m[k]; !ok {
				t.Errorf("strategy %v lacks %q", m["strategy"], k)
			}
		}
		if m["outcome"] != "completed" || m["allocations_ok"].(float64) != n || m["bytes_ok"].(float64) != n*size || m["first_failure"] != nil {
			t.Errorf("strategy %v: outcome %v, allocations_ok %v, bytes_ok %v, first_failure %v; want completed, %d, %d, null",
				m["strategy"], m["outcome"], m["allocations_ok"], m["bytes_ok"], m["first_failure"], n, n*size)
		}
		// PoCL's device memory is host memory and fill writes every byte: RSS must grow by at least the buffer.
		if hb := m["host_bytes_per_buffer"].(float64); hb < 0.9*size || hb > 1.5*size {
			t.Errorf("strategy %v: host cost per buffer %.0f, want about %d (fill writes host memory on PoCL)", m["strategy"], hb, size)
		}
		samples := m["samples"].([]any)
		if len(samples) < 2 {
			t.Errorf("strategy %v: %d samples, want at least the first and the last", m["strategy"], len(samples))
		}
		last := samples[len(samples)-1].(map[string]any)
		if last["index"].(float64) != n {
			t.Errorf("strategy %v: last sample at index %v, want %d", m["strategy"], last["index"], n)
		}
	}
	lines, _ := os.ReadFile(filepath.Join(dir, "samples.jsonl"))
	if bytes.Count(lines, []byte("\n")) < 6 {
		t.Errorf("samples.jsonl should stream every sample, got %d lines", bytes.Count(lines, []byte("\n")))
	}
}

// The user's case A on a replicating runtime: 2 devices, every buffer on both, a host staging copy per
// buffer of a multi-device context, and a 1 GiB host budget.
func TestReplicatingRuntimePinpointsTheUsersThreshold(t *testing.T) {
	const hostBudget, devMem, size = 1 << 30, 4 << 30, mib
	env := FaultEnv(t, "FAULTCL_DEVICES=2", fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", hostBudget), fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", devMem), "FAULTCL_NOTIFY=1")
	r, res, _ := runOut(t, env, "--max-allocs", "20000", "--strategies", "shared,per-device,migrate-first")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	// shared: the staging copies exhaust the host budget first.
	sharedAt := uint64(hostBudget / size)
	wantFailure(t, strategy(t, r, "shared"), sharedAt, result.StageCreate, -6, int(sharedAt%2))
	wantFailure(t, strategy(t, r, "migrate-first"), sharedAt, result.StageCreate, -6, int(sharedAt%2))
	// per-device: no staging; a device is full after devMem/size of its own buffers, every other one.
	perDevAt := uint64(2 * devMem / size)
	wantFailure(t, strategy(t, r, "per-device"), perDevAt, result.StageCreate, -6, int(perDevAt%2))

	sh, pd := strategy(t, r, "shared"), strategy(t, r, "per-device")
	if sh.ReplicationFactor == nil || !within(*sh.ReplicationFactor, 2, 0.02) {
		t.Errorf("shared replication factor %v, want 2 (each buffer on both devices)", sh.ReplicationFactor)
	}
	if pd.ReplicationFactor == nil || !within(*pd.ReplicationFactor, 1, 0.02) {
		t.Errorf("per-device replication factor %v, want 1", pd.ReplicationFactor)
	}
	if !within(sh.HostBytesPerBuffer, size, 0.05) || pd.HostBytesPerBuffer > 0.05*size {
		t.Errorf("host cost per buffer: shared %.0f (want about %d, the staging copy), per-device %.0f (want about 0)", sh.HostBytesPerBuffer, size, pd.HostBytesPerBuffer)
	}
	if !hasVerdict(r, "shared context costs 2.00x the device memory") {
		t.Errorf("verdict should say the shared context costs twice the device memory: %q", r.Verdict)
	}
	// migrate-first shares shared's context and fails at the same buffer: the headline names both.
	if h := r.Findings[0]; h.Kind != result.FindingHeadline || h.About != result.FindingFailure || !strings.HasPrefix(h.Sentence, "shared and migrate-first failed first, at buffer #1024") {
		t.Errorf("the headline should name the first failure: %+v", h)
	}
	if sh.Limit != result.LimitContext || pd.Limit != result.LimitDeviceMemory {
		t.Errorf("limits: shared %q, per-device %q; want context and device-memory", sh.Limit, pd.Limit)
	}
	if len(sh.Notices) == 0 || sh.Notices[0] != "faultcl: allocation failed: a device or the host staging budget is full" {
		t.Errorf("the context notify message should be kept, got %q", sh.Notices)
	}
}

func TestLazyRuntimeFailsAtFirstUse(t *testing.T) {
	const devMem, size = 256 << 20, mib
	perDevice := uint64(devMem / size)
	failAt := 2 * perDevice // round robin: device 0's (perDevice+1)-th buffer
	lazy := []string{"FAULTCL_MODEL=lazy", "FAULTCL_DEVICES=2", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", devMem)}

	t.Run("touch none defers", func(t *testing.T) {
		r, _, _ := runOut(t, FaultEnv(t, lazy...), "--max-allocs", strconv.FormatUint(failAt+100, 10), "--strategies", "shared,per-device")
		for _, s := range r.Jobs {
			if s.Outcome != result.OutcomeCompleted {
				t.Errorf("%s: %s, want completed: nothing is allocated at create", s.Strategy, s.Outcome)
			}
		}
		if !hasVerdict(r, "defers allocation to first use") {
			t.Errorf("verdict should say allocation is deferred: %q", r.Verdict)
		}
	})
	t.Run("touch fill fails at the exact buffer", func(t *testing.T) {
		r, _, _ := runOut(t, FaultEnv(t, lazy...), "--touch", "fill", "--max-allocs", "2000", "--strategies", "shared,per-device")
		wantFailure(t, strategy(t, r, "shared"), failAt, result.StageTouch, -4, 0)
		wantFailure(t, strategy(t, r, "per-device"), failAt, result.StageTouch, -4, 0)
		if !hasVerdict(r, "allocates at first use") {
			t.Errorf("verdict should say the runtime allocates at first use: %q", r.Verdict)
		}
	})
	t.Run("failure reported by clFinish", func(t *testing.T) {
		r, _, _ := runOut(t, FaultEnv(t, append(lazy, "FAULTCL_LAZY_AT_FINISH=1")...), "--touch", "kernel", "--max-allocs", "2000", "--strategies", "shared")
		wantFailure(t, strategy(t, r, "shared"), failAt, result.StageFinish, -4, 0)
	})
	t.Run("migrate-first fails at migrate", func(t *testing.T) {
		r, _, _ := runOut(t, FaultEnv(t, lazy...), "--max-allocs", "2000", "--strategies", "migrate-first")
		wantFailure(t, strategy(t, r, "migrate-first"), failAt, result.StageMigrate, -4, 0)
	})
}

func TestInjectedOutOfResources(t *testing.T) {
	const n = 77
	r, _, _ := runOut(t, FaultEnv(t, fmt.Sprintf("FAULTCL_OOR_AT=%d", n), "FAULTCL_NOTIFY=1"), "--max-allocs", "500", "--strategies", "shared")
	s := strategy(t, r, "shared")
	wantFailure(t, s, n-1, result.StageCreate, -5, (n-1)%2)
	if s.FirstFailure.Name != "CL_OUT_OF_RESOURCES" || s.FirstFailure.Call != "clCreateBuffer" {
		t.Errorf("first failure named %q in %q", s.FirstFailure.Name, s.FirstFailure.Call)
	}
}

func TestDeviceListPlacesBuffersOnOneDevice(t *testing.T) {
	const hostBudget, devMem, size = 1 << 30, 1 << 30, mib
	env := FaultEnv(t, "FAULTCL_EXTENSIONS=cl_khr_external_memory", fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", hostBudget), fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", devMem))
	r, _, _ := runOut(t, env, "--max-allocs", "5000", "--strategies", "shared,device-list")
	dl := strategy(t, r, "device-list")
	// One device per buffer, no staging copy: the devices fill up, not the host budget.
	wantFailure(t, dl, 2*devMem/size, result.StageCreate, -6, 0)
	if dl.ReplicationFactor == nil || !within(*dl.ReplicationFactor, 1, 0.02) {
		t.Errorf("device-list replication factor %v, want 1", dl.ReplicationFactor)
	}
	// Without the extension the strategy is reported unsupported, with the reason.
	r2, _, _ := runOut(t, PoCLEnv(t), "--max-allocs", "10", "--strategies", "device-list")
	s := strategy(t, r2, "device-list")
	if want := fmt.Sprintf("device %q does not report cl_khr_external_memory, which defines CL_MEM_DEVICE_HANDLE_LIST_KHR", r2.Devices[0].Name); s.Outcome != result.OutcomeUnsupported || s.Reason != want {
		t.Errorf("device-list on PoCL: %s (%s), want unsupported naming cl_khr_external_memory", s.Outcome, s.Reason)
	}
}

func TestCrashInTheRuntimeIsAnOutcome(t *testing.T) {
	const n = 300
	// Only contexts over both devices crash: shared and migrate-first; per-device must still complete.
	env := FaultEnv(t, fmt.Sprintf("FAULTCL_CRASH_AT=%d", n), "FAULTCL_FAULTS_MULTI_ONLY=1")
	r, res, _ := runOut(t, env, "--max-allocs", "1000", "--strategies", "shared,per-device,migrate-first")
	if res.code != exitWorkerFault {
		t.Errorf("exit code %d, want %d for a crashed worker", res.code, exitWorkerFault)
	}
	for _, name := range []result.Strategy{result.Shared, result.MigrateFirst} {
		s := strategy(t, r, name)
		if s.Outcome != result.OutcomeCrashed || s.AllocationsOK != n-1 || s.Signal != "SIGSEGV" || s.LastStage != result.StageCreate {
			t.Errorf("%s: %s after %d buffers, signal %q, stage %q; want crashed after %d, SIGSEGV, create", name, s.Outcome, s.AllocationsOK, s.Signal, s.LastStage, n-1)
		}
	}
	if s := strategy(t, r, "per-device"); s.Outcome != result.OutcomeCompleted || s.AllocationsOK != 1000 {
		t.Errorf("per-device: %s after %d, want completed 1000: a crash must not touch other strategies", s.Outcome, s.AllocationsOK)
	}
}

func TestHangInTheRuntimeIsAnOutcome(t *testing.T) {
	const n = 50
	env := FaultEnv(t, fmt.Sprintf("FAULTCL_HANG_AT=%d", n), "FAULTCL_FAULTS_MULTI_ONLY=1")
	start := time.Now()
	r, res, _ := runOut(t, env, "--max-allocs", "500", "--strategies", "shared,per-device", "--hang-timeout", "2s")
	if res.code != exitWorkerFault {
		t.Errorf("exit code %d, want %d for a hung worker", res.code, exitWorkerFault)
	}
	s := strategy(t, r, "shared")
	if s.Outcome != result.OutcomeHung || s.AllocationsOK != n-1 || s.LastStage != result.StageCreate {
		t.Errorf("shared: %s after %d in %q, want hung after %d in create", s.Outcome, s.AllocationsOK, s.LastStage, n-1)
	}
	if s.Seconds > 10 {
		t.Errorf("the hang took %.1fs to detect with a 2s watchdog", s.Seconds)
	}
	if p := strategy(t, r, "per-device"); p.Outcome != result.OutcomeCompleted {
		t.Errorf("per-device: %s, want completed", p.Outcome)
	}
	if time.Since(start) > time.Minute {
		t.Errorf("the run took %s", time.Since(start))
	}
}

// The test kills one worker (what the OOM killer does) and stops another (a hang); the third strategy runs
// on, the parent survives and the result is saved.
func TestSignalledWorkersBecomeOutcomes(t *testing.T) {
	const allocs = 3000 // 1 ms each: each strategy runs about 3 s unless stopped
	dir := t.TempDir()
	// 64 KiB buffers: a shared context's host staging copies of 3000 of them fit where another process holds
	// all but 2 GiB of the machine.
	cmd, out := startRun(t, FaultEnv(t, "FAULTCL_SLOW_US=1000"), dir, "--max-allocs", strconv.Itoa(allocs), "--size", "64KiB",
		"--strategies", "shared,per-device,migrate-first", "--hang-timeout", "2s")
	seen := map[int]bool{}
	first := workerOf(t, cmd.Process.Pid, seen)
	madeBuffers(t, dir, "shared")
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	second := workerOf(t, cmd.Process.Pid, seen)
	madeBuffers(t, dir, "per-device") // in its loop, where --hang-timeout applies
	if err := syscall.Kill(second, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	third := workerOf(t, cmd.Process.Pid, seen)
	err := cmd.Wait()
	if code := exitOf(err); code != exitWorkerFault {
		t.Errorf("exit code %d, want %d; output:\n%s", code, exitWorkerFault, out)
	}
	r, lerr := result.Load(filepath.Join(dir, "run.json"))
	if lerr != nil {
		t.Fatal(lerr)
	}
	if s := strategy(t, r, "shared"); s.Outcome != result.OutcomeCrashed || s.Signal != "SIGKILL" || s.AllocationsOK == 0 || s.AllocationsOK >= allocs {
		t.Errorf("shared: %s, signal %q, %d buffers; want crashed by SIGKILL part way", s.Outcome, s.Signal, s.AllocationsOK)
	}
	if s := strategy(t, r, "per-device"); s.Outcome != result.OutcomeHung || s.AllocationsOK == 0 {
		t.Errorf("per-device: %s after %d; want hung part way", s.Outcome, s.AllocationsOK)
	}
	if s := strategy(t, r, "migrate-first"); s.Outcome != result.OutcomeCompleted || s.AllocationsOK != allocs {
		t.Errorf("migrate-first: %s after %d; want completed %d", s.Outcome, s.AllocationsOK, allocs)
	}
	for _, pid := range []int{first, second, third} {
		if alive(pid) {
			t.Errorf("worker %d is still running after the run ended", pid)
		}
	}
}

func TestInterruptLeavesAValidPartialResult(t *testing.T) {
	dir := t.TempDir()
	cmd, out := startRun(t, FaultEnv(t, "FAULTCL_SLOW_US=1000"), dir, "--max-allocs", "100000", "--strategies", "shared,per-device")
	seen := map[int]bool{}
	worker := workerOf(t, cmd.Process.Pid, seen)
	madeBuffers(t, dir, "shared")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := exitOf(err); code != exitInterrupted {
		t.Errorf("exit code %d, want %d; output:\n%s", code, exitInterrupted, out)
	}
	r, lerr := result.Load(filepath.Join(dir, "run.json"))
	if lerr != nil {
		t.Fatalf("run.json after Ctrl-C: %v", lerr)
	}
	if !r.Partial || len(r.Jobs) != 1 {
		t.Fatalf("partial %v with %d strategies; want a partial result with the one strategy that ran", r.Partial, len(r.Jobs))
	}
	if s := r.Jobs[0]; s.Outcome != result.OutcomeStopped || s.Reason != "interrupted" || s.AllocationsOK == 0 {
		t.Errorf("interrupted strategy: %s (%s) after %d buffers", s.Outcome, s.Reason, s.AllocationsOK)
	}
	if alive(worker) {
		t.Errorf("worker %d survived the interrupt", worker)
	}
}

// overMaxAlloc is one MiB more than the largest allocation device 0 of the platform allows (PoCL derives
// its limit from the memory free when it starts, so it is read, not assumed).
func overMaxAlloc(t *testing.T, env []string) string {
	t.Helper()
	return fmt.Sprintf("%dB", maxAllocOf(t, env)+mib)
}

// maxAllocOf is the largest allocation device 0 of the platform reports.
func maxAllocOf(t *testing.T, env []string) uint64 {
	t.Helper()
	res := runTool(t, env, "devices", "--json")
	var listing result.Inventory
	if err := json.Unmarshal([]byte(res.stdout), &listing); err != nil || len(listing) == 0 || len(listing[0].Devices) == 0 {
		t.Fatalf("devices --json: %v %q", err, res.stderr)
	}
	return listing[0].Devices[0].MaxAllocBytes
}

func TestBrokenRuntimesGetOneClearLine(t *testing.T) {
	// An .icd file that points nowhere is the error and a line for each registered runtime:
	// TestNoPlatformNamesEachRegisteredRuntime.
	faultLib := filepath.Join(filepath.Dir(FaultCL(t)), "libfaultcl.so")
	cases := []struct {
		name    string
		env     []string
		args    []string
		mention string
	}{
		{"no library", Env(), []string{"devices", "--opencl-lib", "/nonexistent/libOpenCL.so.1"}, "not found"},
		{"library from the environment", Env("CLMEMPROBE_OPENCL_LIB=/nonexistent/libX.so"), []string{"run"}, "/nonexistent/libX.so"},
		{"a library that is not OpenCL", Env(), []string{"devices", "--opencl-lib", faultLib}, "not an OpenCL library"},
		{"a platform whose queries fail", FaultEnv(t, "FAULTCL_BROKEN_PLATFORM=1"), []string{"devices"}, "CL_OUT_OF_HOST_MEMORY"},
		{"a device with 0 global memory", FaultEnv(t, "FAULTCL_ZERO_MEM=1"), []string{"run"}, "0 bytes of global memory"},
		{"a platform without devices", FaultEnv(t, "FAULTCL_DEVICES=0"), []string{"run"}, "no platform has a device"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			oneLineError(t, runTool(t, c.env, c.args...), exitNoOpenCL, c.mention)
		})
	}
}

// A library that is not OpenCL (issue 46: a 1,300-character line of 28 names and apt-get advice) is one short
// line: its path and the one entry point that makes a library OpenCL. A vendor runtime named directly (it
// has the ICD entry point, not clGetPlatformIDs) is told how the loader reaches it instead.
func TestNotOpenCLLibraryIsOneShortLine(t *testing.T) {
	faultLib := filepath.Join(filepath.Dir(FaultCL(t)), "libfaultcl.so")
	cases := []struct {
		name, lib, also string
	}{
		{"zlib", "/lib/x86_64-linux-gnu/libz.so.1", ""},
		{"the C library by soname", "libc.so.6", ""},
		{"a vendor runtime named directly", faultLib, "; it is a vendor runtime for the ICD loader (libOpenCL.so.1), see OCL_ICD_VENDORS"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if strings.HasPrefix(c.lib, "/") {
				if _, err := os.Stat(c.lib); err != nil {
					t.Skipf("%s: %v", c.lib, err)
				}
			}
			res := runTool(t, Env(), "devices", "--opencl-lib", c.lib)
			errorLine(t, res, exitNoOpenCL, "clmemprobe: no OpenCL: "+c.lib+": not an OpenCL library: it lacks clGetPlatformIDs"+c.also)
		})
	}
}

func TestTouchKernelOnPoCL(t *testing.T) {
	const n, size = 40, mib
	// A sampling interval longer than the run: the fit rests on the samples taken at fixed buffer counts
	// alone, as on a loaded machine whose interval samples are thinned out (this test once failed so).
	r, res, _ := runOut(t, PoCLEnv(t), "--touch", "kernel", "--max-allocs", fmt.Sprint(n), "--strategies", "shared,per-device", "--sample-interval", "30s")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	for _, s := range r.Jobs {
		// The kernel writes every byte, and PoCL's device memory is host memory.
		if s.Outcome != result.OutcomeCompleted || s.AllocationsOK != n || s.HostBytesPerBuffer < 0.9*size {
			t.Errorf("%s: %s after %d, host cost %.0f per buffer; want completed %d at about %d", s.Strategy, s.Outcome, s.AllocationsOK, s.HostBytesPerBuffer, n, size)
		}
	}
}

// A reserve larger than the machine's memory must stop every strategy before its first buffer.
func TestHostGuardStops(t *testing.T) {
	r, res, _ := runOut(t, PoCLEnv(t), "--touch", "fill", "--max-allocs", "100", "--strategies", "shared,per-device", "--host-reserve", "1000TiB")
	if res.code != 0 {
		t.Errorf("exit %d: a guard stop is a result, not an error", res.code)
	}
	for _, s := range r.Jobs {
		if s.Outcome != result.OutcomeStopped || s.StopCause != result.StopHostGuard || s.AllocationsOK != 0 {
			t.Errorf("%s: %s (%s, %s) after %d buffers; want stopped by the host guard before the first", s.Strategy, s.Outcome, s.StopCause, s.Reason, s.AllocationsOK)
		}
	}
}

// A sweep runs every strategy at every size; on the replicating runtime the shared threshold is the host
// budget divided by the size.
func TestSweepOverSizes(t *testing.T) {
	const budget = 256 << 20
	sizes := []uint64{64 << 10, 1 << 20, 1<<20 + 4<<10}
	r, _, _ := runOut(t, FaultEnv(t, fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", budget)), "--sizes", "64KiB,1MiB,1MiB+4KiB",
		"--strategies", "shared", "--max-allocs", "100000")
	if len(r.Jobs) != len(sizes) {
		t.Fatalf("%d results, want one per size", len(r.Jobs))
	}
	for i, s := range r.Jobs {
		if s.SizeBytes != sizes[i] || s.FirstFailure == nil || s.FirstFailure.Index != budget/sizes[i] {
			t.Errorf("size %d: first failure %+v, want index %d", s.SizeBytes, s.FirstFailure, budget/sizes[i])
		}
	}
}
