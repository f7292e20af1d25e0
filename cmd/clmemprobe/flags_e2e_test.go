package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// flagJob is the run's job of a strategy with the flags as results write them ("" for read-write).
func flagJob(t *testing.T, r *result.Run, st result.Strategy, flags string) *result.JobResult {
	t.Helper()
	for i := range r.Jobs {
		if s := &r.Jobs[i]; s.Strategy == st && s.Flags == flags {
			return s
		}
	}
	t.Fatalf("no job %s with flags %q in the run", st, flags)
	return nil
}

// On the fault-injection runtime, whose host staging copies follow the flags as its header says (none for
// use-host-ptr, one even in a one-device context for alloc-host-ptr, one copied from the source for
// copy-host-ptr), each flag set's jobs fail exactly where its model puts them: at the host budget divided by
// the buffer size wherever a staging copy is made, nowhere else.
func TestFlagSetsOnTheFaultRuntime(t *testing.T) {
	const budget, size, allocs = 96 << 20, 1 << 20, 200
	env := FaultEnv(t, fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", budget))
	r, res, dir := runOut(t, env, "--strategies", "shared,per-device", "--max-allocs", fmt.Sprint(allocs),
		"--flag-sets", "read-write;use-host-ptr;alloc-host-ptr;copy-host-ptr")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	if got := strings.Join(r.Config.FlagSets, ";"); got != "read-write;use-host-ptr;alloc-host-ptr;copy-host-ptr" {
		t.Errorf("config flag sets %q", got)
	}
	staged := uint64(budget / size)
	for _, c := range []struct {
		st      result.Strategy
		flags   string
		staging bool
	}{
		{result.Shared, "", true}, {result.PerDevice, "", false},
		{result.Shared, "use-host-ptr", false}, {result.PerDevice, "use-host-ptr", false},
		{result.Shared, "alloc-host-ptr", true}, {result.PerDevice, "alloc-host-ptr", true},
		{result.Shared, "copy-host-ptr", true}, {result.PerDevice, "copy-host-ptr", false},
	} {
		s := flagJob(t, r, c.st, c.flags)
		if !c.staging {
			if s.Outcome != result.OutcomeCompleted || s.AllocationsOK != allocs {
				t.Errorf("%s %s: %s after %d, want all %d buffers (no staging copy)", c.st, result.FlagsName(c.flags), s.Outcome, s.AllocationsOK, allocs)
			}
			continue
		}
		wantFailure(t, s, staged, result.StageCreate, -6, int(staged%2))
	}
	// use-host-ptr: the tool's own block is the buffer's storage, resident from the start; the runtime adds
	// no copy of its own, so RSS grows by about the block per buffer, and the findings say whose it is.
	use := flagJob(t, r, result.Shared, "use-host-ptr")
	if !within(use.HostBytesPerBuffer, size, 0.10) {
		t.Errorf("use-host-ptr: %.0f bytes of RSS per buffer, want about the block of %d", use.HostBytesPerBuffer, size)
	}
	if !hasVerdict(r, "Flags use-host-ptr: shared cost") || !hasVerdict(r, "is the buffer's own host memory") {
		t.Errorf("no finding names use-host-ptr's cost and whose memory it is: %q", r.Verdict)
	}
	table := runTool(t, Env(), "report", "--wide", dir)
	for _, want := range []string{"Flags", "use-host-ptr", "alloc-host-ptr", "copy-host-ptr", "read-write"} {
		if !strings.Contains(table.stdout, want) {
			t.Errorf("the table lacks %q:\n%s", want, table.stdout)
		}
	}
	md := runTool(t, Env(), "report", "--format", "markdown", dir)
	if !strings.Contains(md.stdout, "CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR") {
		t.Errorf("the Markdown report does not give the flags as C:\n%s", md.stdout)
	}
	csv := runTool(t, Env(), "merge", "--format", "csv", dir)
	if !strings.Contains(csv.stdout, ",flags,") || !strings.Contains(csv.stdout, ",copy-host-ptr,") {
		t.Errorf("merge's CSV does not tell the flag sets apart:\n%s", csv.stdout)
	}
	prom := runTool(t, Env(), "report", "--format", "prom", dir)
	if !strings.Contains(prom.stdout, `flags="alloc-host-ptr"`) || !strings.Contains(prom.stdout, `flags="read-write"`) {
		t.Errorf("the metrics lack the flags label")
	}
}

// The reproducer of a flag set's job creates its buffers with those flags and that host memory, and fails
// where the run did.
func TestReproducerOfAFlagSet(t *testing.T) {
	const budget = 64 << 20
	env := FaultEnv(t, fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", budget))
	for _, flags := range []string{"alloc-host-ptr", "copy-host-ptr"} {
		_, res, dir := runOut(t, env, "--strategies", "shared", "--max-allocs", "200", "--touch", "fill", "--flags", flags)
		if res.code != 0 {
			t.Fatalf("exit %d: %s", res.code, res.stderr)
		}
		r, err := result.Load(filepath.Join(dir, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		oneLineError(t, runTool(t, Env(), "report", "--format", "repro", "--flags", "0x40", dir), exitUsage, "its jobs: shared (flags "+flags)
		bin := compileRepro(t, filepath.Join(dir, "run.json"), "--flags", flags)
		runRepro(t, bin, env, flagJob(t, r, result.Shared, flags))
	}
	// use-host-ptr takes no staging copy on this runtime: its reproducer allocates each buffer's storage and
	// runs the whole budget, as the run did.
	_, res, dir := runOut(t, env, "--strategies", "shared", "--max-allocs", "100", "--flags", "use-host-ptr")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	src := runTool(t, Env(), "report", "--format", "repro", dir)
	if !strings.Contains(src.stdout, "posix_memalign(&host, 4096, buffer_size)") || !strings.Contains(src.stdout, "CL_MEM_USE_HOST_PTR") {
		t.Fatalf("the reproducer does not allocate the buffers' storage:\n%s", src.stdout)
	}
	bin := compileC(t, src.stdout)
	if out, err := execIn(bin, env); exitOf(err) != 0 {
		t.Errorf("the use-host-ptr reproducer exited %d, want 0 (all 100 buffers): %s", exitOf(err), out)
	}
}

// A flag the runtime does not take is the job's result: CL_INVALID_VALUE at create at buffer #0, classified
// as the flags, and the vendor's name for it said; accepted, the same value runs.
func TestRejectedVendorFlagIsAResult(t *testing.T) {
	r, res, _ := runOut(t, FaultEnv(t), "--strategies", "shared", "--max-allocs", "50", "--flags", "0x800000")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	s := flagJob(t, r, result.Shared, "0x800000")
	wantFailure(t, s, 0, result.StageCreate, -30, 0)
	wantLimit(t, s, result.LimitFlags)
	if !hasVerdict(r, "CL_MEM_ALLOW_UNRESTRICTED_SIZE_INTEL") {
		t.Errorf("the verdict does not name the vendor flag: %q", r.Verdict)
	}
	r, _, _ = runOut(t, FaultEnv(t, "FAULTCL_ACCEPT_FLAGS=0x800000"), "--strategies", "shared", "--max-allocs", "50", "--flags", "CL_MEM_ALLOW_UNRESTRICTED_SIZE_INTEL")
	if s := flagJob(t, r, result.Shared, "0x800000"); s.Outcome != result.OutcomeCompleted || s.AllocationsOK != 50 {
		t.Errorf("accepted: %s after %d, want all 50", s.Outcome, s.AllocationsOK)
	}
}

// A size over the device's maximum allocation is tried, not refused: the note before the run says the
// runtime may refuse it, and names the vendor flag documented to lift the limit only on that vendor's
// platform; a runtime that enforces its maximum refuses it with -61, and the limit says so.
func TestSizeOverTheMaximumIsTried(t *testing.T) {
	const devMem = 1 << 30 // faultcl reports a quarter of it as the largest allocation
	size := fmt.Sprintf("%dB", devMem/4+4096)
	args := []string{"--size", size, "--max-allocs", "2", "--strategies", "shared"}
	mem := fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", devMem)
	r, res, _ := runOut(t, FaultEnv(t, mem), args...)
	if s := r.Jobs[0]; res.code != 0 || s.Outcome != result.OutcomeCompleted || s.AllocationsOK != 2 {
		t.Fatalf("exit %d, %s after %d: want the runtime's answer, both buffers (%s)", res.code, s.Outcome, s.AllocationsOK, res.stderr)
	}
	if !strings.Contains(res.stderr, "over device 0's reported maximum allocation") || strings.Contains(res.stderr, "CL_MEM_ALLOW_UNRESTRICTED_SIZE_INTEL") {
		t.Errorf("the note on faultcl: %q", res.stderr)
	}
	_, res, _ = runOut(t, FaultEnv(t, mem, "FAULTCL_PLATFORM_NAME=Intel(R) OpenCL Graphics"), args...)
	if !strings.Contains(res.stderr, "Intel documents CL_MEM_ALLOW_UNRESTRICTED_SIZE_INTEL (--flags 0x800000)") {
		t.Errorf("the note on an Intel platform: %q", res.stderr)
	}
	r, _, _ = runOut(t, FaultEnv(t, mem, "FAULTCL_ENFORCE_MAX_ALLOC=1"), args...)
	if s := r.Jobs[0]; s.Outcome != result.OutcomeFailed || s.FirstFailure == nil || s.FirstFailure.Code != -61 || s.Limit != result.LimitRuntime ||
		!strings.Contains(strings.Join(r.Verdict, " "), "it enforces that maximum") {
		t.Errorf("enforced: %s %+v limit %s; verdict %q", s.Outcome, s.FirstFailure, s.Limit, r.Verdict)
	}
}

// Every standard flag runs on PoCL, each in its own jobs, recorded as given.
func TestEveryStandardFlagOnPoCL(t *testing.T) {
	sets := result.FlagNames()
	r, res, _ := runOut(t, PoCLEnv(t), "--strategies", "shared", "--max-allocs", "32", "--touch", "fill", "--flag-sets", strings.Join(sets, ";"))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	if len(r.Jobs) != len(sets) {
		t.Fatalf("%d jobs, want one per flag set (%d)", len(r.Jobs), len(sets))
	}
	for i, name := range sets {
		s := &r.Jobs[i]
		if result.FlagsName(s.Flags) != name {
			t.Errorf("job %d has flags %q, want %q", i, s.Flags, name)
		}
		if s.Outcome != result.OutcomeCompleted || s.AllocationsOK != 32 {
			t.Errorf("%s: %s after %d (%v), want all 32", name, s.Outcome, s.AllocationsOK, s.FirstFailure)
		}
	}
}

// Bad flag input gets one line each, with the closest name for a slip.
func TestBadFlagsAreRefused(t *testing.T) {
	env := Env()
	for _, c := range []struct{ args, mention string }{
		{"--flags use-host-pt", "did you mean use-host-ptr?"},
		{"--flags read-only,write-only", "one kernel access"},
		{"--flags use-host-ptr,copy-host-ptr", "cannot be combined"},
		{"--flags 0xZZ", "not a cl_mem_flags value"},
		{"--flag-sets read-write;;use-host-ptr", "empty set"},
		{"--flag-sets use-host-ptr;CL_MEM_USE_HOST_PTR", "listed twice"},
		{"--flags read-only --flag-sets read-write", "give one"},
	} {
		oneLineError(t, runTool(t, env, append([]string{"run", "--dry-run"}, strings.Fields(c.args)...)...), exitUsage, c.mention)
	}
}

func execIn(bin string, env []string) (string, error) {
	cmd := exec.Command(bin)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Flags are part of a job's identity: check records them and runs them again, each job held to its own
// threshold; compare never holds a flag set's job against the read-write job.
func TestCheckAndCompareKeepFlagSetsApart(t *testing.T) {
	const budget, allocs = 64 << 20, 120
	env := FaultEnv(t, fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", budget))
	_, res, dir := runOut(t, env, "--strategies", "per-device", "--max-allocs", fmt.Sprint(allocs), "--flag-sets", "read-write;alloc-host-ptr")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	expect := filepath.Join(t.TempDir(), "expect.json")
	if rec := runTool(t, env, "check", "--record", "--output", expect, dir); rec.code != 0 {
		t.Fatalf("check --record: exit %d: %s", rec.code, rec.stderr)
	}
	exp, err := result.LoadExpectations(expect)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(exp.FlagSets, ";") != "read-write;alloc-host-ptr" || len(exp.Jobs) != 2 || exp.Jobs[1].Flags != "alloc-host-ptr" {
		t.Fatalf("expectations %+v: want both flag sets and their jobs", exp)
	}
	chk := runTool(t, env, "check", "--expect", expect, "--format", "json")
	if chk.code != 0 {
		t.Fatalf("check: exit %d: %s%s", chk.code, chk.stdout, chk.stderr)
	}
	for _, want := range []string{`"flags": "alloc-host-ptr"`, `"flags": "read-write"`} {
		if !strings.Contains(chk.stdout, want) {
			t.Errorf("check's answer lacks %s:\n%s", want, chk.stdout)
		}
	}
	// Against a run of read-write alone, the alloc-host-ptr job (which failed at the staging budget, far
	// below read-write's whole budget) is missing, not a regression of read-write.
	_, res, plain := runOut(t, env, "--strategies", "per-device", "--max-allocs", fmt.Sprint(allocs))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	cmp := runTool(t, Env(), "compare", "--format", "json", plain, dir)
	if cmp.code != 0 || !strings.Contains(cmp.stdout, `"change": "added"`) || strings.Contains(cmp.stdout, `"change": "regressed"`) {
		t.Errorf("compare: exit %d; want the flag set's job added, nothing regressed:\n%s", cmp.code, cmp.stdout)
	}
}

// PoCL enforces its maximum: a size one MiB over it is tried and refused with -61 at create, and the
// limit says the runtime enforces it.
func TestSizeOverPoCLsMaximumIsRefusedByPoCL(t *testing.T) {
	env := PoCLEnv(t)
	// The guard off: it would stop a buffer this size before PoCL saw it wherever less than it is available,
	// and PoCL refuses it at create without allocating.
	r, _, _ := runOut(t, env, "--size", overMaxAlloc(t, env), "--max-allocs", "1", "--strategies", "shared", "--devices", "0", "--host-reserve", "0")
	s := r.Jobs[0]
	if s.Outcome != result.OutcomeFailed || s.FirstFailure == nil || s.FirstFailure.Code != -61 || !strings.Contains(strings.Join(r.Verdict, " "), "it enforces that maximum") {
		t.Errorf("%s %+v; verdict %q", s.Outcome, s.FirstFailure, r.Verdict)
	}
}
