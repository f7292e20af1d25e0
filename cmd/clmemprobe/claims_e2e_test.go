package main

// End-to-end tests of claims that hold only under conditions the evidence must show (issue 42): each runs
// the binary on faultcl, whose model makes the condition certain, and checks what the verdict says and
// leaves unsaid.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

// TestLayoutsThatPlacedNothingAreNotCompared is the H100's default run on faultcl's lazy model: with no
// touch, shared and per-device create every buffer of their budget and place none (device memory does not
// move), while migrate-first places each buffer as it migrates it and fills both devices. Nothing may
// compare the placed layout with the unplaced ones ("use shared's layout", "3.00x as many as
// migrate-first"): one sentence says they are not compared and why, with both counts. Before, the headline
// told the user to use shared's layout.
func TestLayoutsThatPlacedNothingAreNotCompared(t *testing.T) {
	const devMem, budget = 256 << 20, 1500
	r, _, _ := runOut(t, FaultEnv(t, "FAULTCL_MODEL=lazy", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", devMem)), "--max-allocs", fmt.Sprint(budget), "-v")
	placedAt := uint64(2 * devMem / mib) // migrate-first fills both devices, a buffer on each in turn
	wantFailure(t, strategy(t, r, result.MigrateFirst), placedAt, result.StageMigrate, -4, 0)
	for _, st := range []result.Strategy{result.Shared, result.PerDevice} {
		if s := strategy(t, r, st); s.Outcome != result.OutcomeCompleted || s.AllocationsOK != budget {
			t.Fatalf("%s: %s after %d; want its budget of %d, placing nothing", st, s.Outcome, s.AllocationsOK, budget)
		}
	}
	noSentence(t, r, "'s layout", "as many as", "does not enforce")
	var apart *result.Finding
	for i, f := range r.Findings {
		if f.Kind == result.FindingComparison && f.Evidence["shared_allocations_ok"] == budget && f.Evidence["migrate_first_allocations_ok"] == float64(placedAt) {
			apart = &r.Findings[i]
		}
	}
	says := fmt.Sprintf("shared and per-device placed no buffer (the memory the buffers live in did not grow with them) where migrate-first placed its buffers, "+
		"so how far they went is not compared (%d buffers against %d): a layout that places nothing goes as far as its budget; "+
		"run with --touch fill to compare layouts that all place their buffers.", budget, placedAt)
	if apart == nil || apart.Sentence != says {
		t.Errorf("no finding of kind comparison says the placed and unplaced layouts are not compared, with both counts (%q); verdict:\n%s", says, strings.Join(r.Verdict, "\n"))
	}
}

// TestEveryStrategyFailingAtOneBufferIsNotFirst: on one lazy device of 256 MiB with --touch fill, every
// strategy that runs fails at the buffer that fills it, shared and pool at the fill, migrate-first at its
// migrate; device-list is not supported there. The headline says they all failed there, naming both
// calls; before, it said "shared failed first", because device-list was counted among the strategies.
func TestEveryStrategyFailingAtOneBufferIsNotFirst(t *testing.T) {
	const devMem = 256 << 20
	r, _, _ := runOut(t, FaultEnv(t, "FAULTCL_MODEL=lazy", "FAULTCL_DEVICES=1", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", devMem)),
		"--touch", "fill", "--max-allocs", "1000", "--strategies", "shared,per-device,migrate-first,device-list,pool")
	full := uint64(devMem / mib)
	for _, st := range []result.Strategy{result.Shared, result.PerDevice, result.Pool} {
		wantFailure(t, strategy(t, r, st), full, result.StageTouch, -4, 0)
	}
	wantFailure(t, strategy(t, r, result.MigrateFirst), full, result.StageMigrate, -4, 0)
	if s := strategy(t, r, result.DeviceList); s.Outcome != result.OutcomeUnsupported {
		t.Fatalf("device-list: %s, want unsupported", s.Outcome)
	}
	want := fmt.Sprintf("shared, per-device, migrate-first and pool all failed at buffer #%d (after %s), with CL_MEM_OBJECT_ALLOCATION_FAILURE (-4) at touch and migrate: ", full, units.Bytes(devMem))
	if h := r.Findings[0]; h.Kind != result.FindingHeadline || h.Evidence["device_fill"] != 1 || !strings.HasPrefix(h.Sentence, want) {
		t.Errorf("headline %q; want it to start %q and name both calls", r.Verdict[0], want)
	}
	noSentence(t, r, "failed first")
}

// TestTraceOfAProgramItsCgroupKilled: a traced program (PoCL, 1 MiB buffers filled one by one) in a
// 512 MiB memory cgroup is ended by the cgroup's OOM killer. The limit is the cgroup's, said of the program
// (not "the worker"), after the buffers it made, with the kernel's line naming the program's pid; the
// ticket's title says the program was killed, and its steps start in a cgroup of the same limit. Before:
// "the worker died ... after 0 buffers with memory to spare (unknown)", a ticket titled "OpenCL
// allocations without a failure", and steps that fill the whole machine.
func TestTraceOfAProgramItsCgroupKilled(t *testing.T) {
	const limit = 512 << 20
	procs, _ := memoryCgroup(t, limit)
	env := PoCLEnv(t)
	dir := t.TempDir()
	res := inCgroup(t, procs, traceEnv(env), "trace", "-q", "--out", dir, "--", Traceprog(t), "fill", strconv.Itoa(mib))
	tr, err := result.LoadTrace(filepath.Join(dir, "trace.json"))
	if err != nil || tr.Exit.Signal != "SIGKILL" || tr.FirstFailure != nil {
		t.Fatalf("exit %d, trace %v, the program's end %+v; want it killed before any failure: %s", res.code, err, tr.Exit, res.stderr)
	}
	if tr.Limit != result.LimitCgroupMemory || tr.LimitEvidence["cgroup_limit_bytes"] != limit || tr.LimitEvidence["kernel_oom_pid"] != float64(tr.ProgramPID) {
		t.Errorf("limit %q, evidence %v; want cgroup-memory with the limit %d and the kernel's line for pid %d", tr.Limit, tr.LimitEvidence, limit, tr.ProgramPID)
	}
	all := strings.Join(tr.Verdict, "\n")
	if want := fmt.Sprintf("ended the program after creating %d buffers", tr.CreatesOK); tr.CreatesOK == 0 || !strings.Contains(all, want) || strings.Contains(all, "worker") || strings.Contains(all, "to spare") {
		t.Errorf("verdict %q; want %q, and no worker and no memory to spare", all, want)
	}
	// The ticket is IssueTrace's of the bundled trace (its title and steps for a kill in a cgroup: report's
	// golden tickets).
	files := bundleFiles(t, env, dir)
	issue := files["ISSUE.md"]
	if want := bundledTraceIssue(t, files); issue != want {
		t.Errorf("ISSUE.md's title and steps:\n%s", issue)
	}
}

// TestLikeAfterABufferOverTheMaximum: a traced program whose one buffer is over the devices' maximum
// allocation (faultcl enforcing a quarter of its 1 GiB, in a context over two devices) gets -61, and so does
// every layout of run --like at its first buffer. Nothing may say that one context per device would let it
// go on (both reached 0 B), nor call -61 for a size over the maximum a limit inside the runtime to report:
// the specification asks for it, the headline says so with the size to split to, and the ticket's
// "Before filing" note says it.
func TestLikeAfterABufferOverTheMaximum(t *testing.T) {
	const mem = 1 << 30
	env := FaultEnv(t, fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", mem), "FAULTCL_ENFORCE_MAX_ALLOC=1")
	traced := t.TempDir()
	if res := runTool(t, traceEnv(env), "trace", "-q", "--out", traced, "--", Traceprog(t), "loop", strconv.Itoa(mem/2), "1"); res.code != 0 {
		t.Fatalf("trace: exit %d: %s", res.code, res.stderr)
	}
	r, _, dir := runOut(t, env, "--like", filepath.Join(traced, "trace.json"))
	for i := range r.Jobs {
		if f := r.Jobs[i].FirstFailure; f == nil || f.Index != 0 || f.Code != -61 {
			t.Fatalf("%s: first failure %+v; want -61 at its first buffer", r.Jobs[i].Strategy, f)
		}
	}
	noSentence(t, r, "would let it go on", "a limit inside the runtime", "attach this report")
	// Each job's limit: the runtime enforcing the maximum it reports, on a buffer over it; the headline rests
	// on the same sizes (the size to split to: the maximum).
	for i := range r.Jobs {
		if !enforcesMaxAlloc(&r.Jobs[i]) {
			t.Errorf("%s: limit %s %v, want the runtime enforcing its maximum", r.Jobs[i].Strategy, r.Jobs[i].Limit, r.Jobs[i].LimitEvidence)
		}
	}
	if h := r.Findings[0]; h.Kind != result.FindingHeadline || h.Evidence["max_alloc_bytes"] != mem/4 || h.Evidence["size_bytes"] != mem/2 {
		t.Errorf("headline %+v; want it to rest on the size over the maximum", h)
	}
	// The ticket is IssueRun's of the bundled result (its "Before filing" note for -61: report's golden
	// issue-over-max-alloc).
	files := bundleFiles(t, env, dir)
	bundled, err := bundledRunOf(files)
	if err != nil {
		t.Fatal(err)
	}
	if issue := files["ISSUE.md"]; issue != string(report.IssueRun(findings.Judge(bundled), bundleIssueOptions(files))) {
		t.Errorf("ISSUE.md has no note on -61:\n%s", issue)
	}
}

// TestAKillDuringABatchIsARange: faultcl sends SIGKILL in a fill, as the OOM killer ends a worker whose
// fill touches memory the kernel has not got. With batched attribution the buffers of the batch in flight
// were made and not yet confirmed by the device: the job records how many were (at most a batch of 64 fewer
// than those made), and every sentence gives the range, not the count made as exact. In the 2nd fill the
// first batch (buffer #0 alone: the loop settles its first batch no sooner than before buffer #2) is certainly
// in flight: 0 to 1. In the 300th, a batch may have just settled, and the range is checked where there is
// one. With --attribution per-buffer each buffer is confirmed before the next: the end is exact.
func TestAKillDuringABatchIsARange(t *testing.T) {
	for _, c := range []struct {
		attribution string
		killAt      uint64 // the fill that is killed, 1-based
		mustRange   bool
	}{
		{"batched", 2, true},
		{"batched", 300, false},
		{"per-buffer", 300, false},
	} {
		t.Run(fmt.Sprintf("%s, fill %d", c.attribution, c.killAt), func(t *testing.T) {
			env := FaultEnv(t, fmt.Sprintf("FAULTCL_KILL_FILL_AT=%d", c.killAt))
			made := c.killAt - 1
			r, _, _ := runOut(t, env, "--strategies", "shared", "--touch", "fill", "--max-allocs", "1000", "--attribution", c.attribution)
			s := strategy(t, r, result.Shared)
			if s.Outcome != result.OutcomeCrashed || s.Signal != "SIGKILL" || s.AllocationsOK != made || s.LastStage != result.StageTouch {
				t.Fatalf("%s (%s) after %d during %s; want crashed by SIGKILL after %d, during touch", s.Outcome, s.Signal, s.AllocationsOK, s.LastStage, made)
			}
			from, to := s.MadeRange()
			switch {
			case c.attribution == "per-buffer" && s.ConfirmedOK != nil:
				t.Errorf("per-buffer attribution recorded %d confirmed: every buffer was confirmed before the next", *s.ConfirmedOK)
			case c.mustRange && (s.ConfirmedOK == nil || *s.ConfirmedOK != 0):
				t.Errorf("confirmed %v of %d made; want 0: the first batch was in flight", s.ConfirmedOK, made)
			case to-from > 64:
				t.Errorf("confirmed %d of %d made: more than a batch of 64 in flight", from, to)
			}
			want := fmt.Sprintf("after %d buffers", made)
			if from < to {
				want = fmt.Sprintf("after %d to %d buffers (%d confirmed by the device", from, to, from)
			}
			if !hasVerdict(r, "crashed "+want) {
				t.Errorf("no sentence says it crashed %q:\n%s", want, strings.Join(r.Verdict, "\n"))
			}
		})
	}
}
