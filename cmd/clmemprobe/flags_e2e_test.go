package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/promcheck"
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
	if !hasFinding(r, result.FindingFlags, func(f result.Finding) bool { return f.Flags == "use-host-ptr" }) {
		t.Errorf("no finding of kind flags about use-host-ptr: %q", r.Verdict)
	}
	// How the table and the Markdown show flag sets is report's golden files' (run-h200-flags); here, that
	// merge's CSV and the metrics carry each job's flags as values.
	wantSets := []string{"alloc-host-ptr", "copy-host-ptr", "read-write", "use-host-ptr"}
	rows, err := csv.NewReader(strings.NewReader(runTool(t, Env(), "merge", "--format", "csv", dir).stdout)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("merge's CSV: %v, %d rows", err, len(rows))
	}
	col := slices.Index(rows[0], "flags")
	var sets []string
	for _, row := range rows[1:] {
		if col >= 0 && !slices.Contains(sets, row[col]) {
			sets = append(sets, row[col])
		}
	}
	if slices.Sort(sets); !slices.Equal(sets, wantSets) {
		t.Errorf("merge's CSV: flags column %d, flag sets %v, want %v", col, sets, wantSets)
	}
	fam, problems, err := promcheck.Parse([]byte(runTool(t, Env(), "report", "--format", "prom", dir).stdout))
	if err != nil || len(problems) > 0 {
		t.Fatalf("the metrics: %v %v", err, problems)
	}
	for _, st := range []result.Strategy{result.Shared, result.PerDevice} {
		for _, set := range wantSets {
			if _, n := fam.Value("clmemprobe_allocations_ok", map[string]string{"strategy": string(st), "flags": set}); n != 1 {
				t.Errorf("the metrics hold %d series of %s with flags=%q, want 1", n, st, set)
			}
		}
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
	if !hasFinding(r, result.FindingLimit, func(f result.Finding) bool { return f.Evidence["code"] == -30 && f.Evidence["allocations_ok"] == 0 }) {
		t.Errorf("no finding of kind limit on the refused first buffer (code -30): %+v", r.Findings)
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
	// The note is the line the user reads before the run: the whole line; on an Intel platform it ends by
	// naming Intel's flag, elsewhere not.
	note := `clmemprobe: size 256 MiB+4 KiB is over device 0's reported maximum allocation of 256 MiB ("faultcl device 0"): tried all the same; ` +
		"the runtime may refuse it (-61, CL_INVALID_BUFFER_SIZE), and clmemprobe largest finds what it really takes"
	if got, _, _ := strings.Cut(res.stderr, "\n"); got != note {
		t.Errorf("the note on faultcl: %q, want %q", got, note)
	}
	_, res, _ = runOut(t, FaultEnv(t, mem, "FAULTCL_PLATFORM_NAME=Intel(R) OpenCL Graphics"), args...)
	intel := note + "; Intel documents CL_MEM_ALLOW_UNRESTRICTED_SIZE_INTEL (--flags 0x800000) to lift it"
	if got, _, _ := strings.Cut(res.stderr, "\n"); got != intel {
		t.Errorf("the note on an Intel platform: %q, want %q", got, intel)
	}
	r, _, _ = runOut(t, FaultEnv(t, mem, "FAULTCL_ENFORCE_MAX_ALLOC=1"), args...)
	if s := r.Jobs[0]; s.Outcome != result.OutcomeFailed || s.FirstFailure == nil || s.FirstFailure.Code != -61 || !enforcesMaxAlloc(&s) {
		t.Errorf("enforced: %s %+v limit %s %v; verdict %q", s.Outcome, s.FirstFailure, s.Limit, s.LimitEvidence, r.Verdict)
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
	var health comparison.Health
	if err := json.Unmarshal([]byte(chk.stdout), &health); err != nil {
		t.Fatalf("check's JSON: %v", err)
	}
	var checked []string
	for _, j := range health.Jobs {
		checked = append(checked, j.Flags)
	}
	if want := []string{"read-write", "alloc-host-ptr"}; !slices.Equal(checked, want) {
		t.Errorf("check's jobs have flags %v, want %v:\n%s", checked, want, chk.stdout)
	}
	// Against a run of read-write alone, the alloc-host-ptr job (which failed at the staging budget, far
	// below read-write's whole budget) is missing, not a regression of read-write.
	_, res, plain := runOut(t, env, "--strategies", "per-device", "--max-allocs", fmt.Sprint(allocs))
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	cmp := runTool(t, Env(), "compare", "--format", "json", plain, dir)
	var c comparison.Comparison
	if err := json.Unmarshal([]byte(cmp.stdout), &c); err != nil || cmp.code != 0 {
		t.Fatalf("compare: exit %d, %v", cmp.code, err)
	}
	changes := map[string]int{}
	for _, row := range c.Rows {
		changes[row.Change]++
	}
	if changes[comparison.ChangeAdded] != 1 || changes[comparison.ChangeRegressed] != 0 {
		t.Errorf("compare: changes %v; want the flag set's job added, nothing regressed:\n%s", changes, cmp.stdout)
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
	if s.Outcome != result.OutcomeFailed || s.FirstFailure == nil || s.FirstFailure.Code != -61 || !enforcesMaxAlloc(&s) {
		t.Errorf("%s %+v, limit %s %v; verdict %q", s.Outcome, s.FirstFailure, s.Limit, s.LimitEvidence, r.Verdict)
	}
}

// enforcesMaxAlloc reports whether the job's limit is the runtime's, resting on a buffer larger than the
// maximum allocation the device reports: the runtime enforces that maximum.
func enforcesMaxAlloc(s *result.JobResult) bool {
	e := s.LimitEvidence
	return s.Limit == result.LimitRuntime && e["max_alloc_bytes"] > 0 && e["size_bytes"] == float64(s.SizeBytes) && e["size_bytes"] > e["max_alloc_bytes"]
}
