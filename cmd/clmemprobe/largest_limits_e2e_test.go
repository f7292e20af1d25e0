package main

// End-to-end tests of `clmemprobe largest` where users run it: in a memory cgroup (a pod's or a batch
// job's limit), under an address-space limit (ulimit -v), and stopped with Ctrl-C.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/judge"
)

// cgroupOOMKills is the count of processes the cgroup's OOM killer has ended.
func cgroupOOMKills(t *testing.T, procs string, version int) uint64 {
	t.Helper()
	file := "memory.events"
	if version == 1 {
		file = "memory.oom_control"
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(procs), file))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" {
			n, _ := strconv.ParseUint(f[1], 10, 64)
			return n
		}
	}
	t.Fatalf("no oom_kill in %s", file)
	return 0
}

// largestIn runs largest --format json in the cgroup and decodes it; the parent must live and answer.
func largestIn(t *testing.T, procs string, env []string, args ...string) *result.Largest {
	t.Helper()
	res := inCgroup(t, procs, env, append([]string{"largest", "--format", "json", "-q"}, args...)...)
	var l result.Largest
	if err := json.Unmarshal([]byte(res.stdout), &l); res.code != 0 || err != nil || len(l.Devices) == 0 {
		t.Fatalf("largest %v in the cgroup: exit %d, %v; stderr: %s", args, res.code, err, res.stderr)
	}
	return &l
}

// TestLargestStaysWithinItsMemoryCgroup: on PoCL, whose device memory is the host's, a search in a 512 MiB
// memory cgroup goes no further than the cgroup leaves, so no try is OOM-killed, and says so. Before, in a
// 1 GiB cgroup, it tried 1, 2, 4 and 8 GiB, each ended by the cgroup's OOM killer (36 kills a run) and
// recorded as "crashed", and the parent was killed too in 2 of 3 runs on another machine.
func TestLargestStaysWithinItsMemoryCgroup(t *testing.T) {
	const limit = 512 << 20
	procs, version := memoryCgroup(t, limit)
	before := cgroupOOMKills(t, procs, version)
	l := largestIn(t, procs, PoCLEnv(t), "--patterns", "4")
	if after := cgroupOOMKills(t, procs, version); after != before {
		t.Errorf("the cgroup's OOM killer ended %d processes during the search", after-before)
	}
	for _, d := range l.Devices {
		if d.BoundBy != result.BoundCgroup || d.CgroupLimitBytes != limit || d.BoundBytes > limit {
			t.Errorf("device %d: bound %d by %q, cgroup limit %d; want at most the limit %d, by the cgroup", d.Index, d.BoundBytes, d.BoundBy, d.CgroupLimitBytes, limit)
		}
		for _, tr := range d.Tries {
			if tr.Outcome != result.TryVerified {
				t.Errorf("device %d: %d bytes %s (%s); every try within the cgroup's room should verify", d.Index, tr.SizeBytes, tr.Outcome, tr.Detail)
			}
		}
	}
}

// TestLargestStaysWithinTheAddressSpaceLimit: PoCL maps each buffer in the worker, which inherits the
// tool's ulimit -v. Under a limit that leaves about 768 MiB above what a worker maps besides its buffer
// (measured by a search without a limit), no try goes above what the limit leaves above the most the
// verified tries before it mapped besides their buffers, less a 64 MiB arena, and the headline names the
// limit. (A try at the bound may still fail: glibc gives a worker's threads arenas as they contend, so one
// worker maps 64 MiB more than another.) Before, the tries of 1, 2, 4, 8 and 16 GiB crashed with SIGABRT,
// and the headline said the runtime enforces its maximum.
func TestLargestStaysWithinTheAddressSpaceLimit(t *testing.T) {
	const slack = 64 << 20
	env := PoCLEnv(t)
	free := largestOf(t, env, "--devices", "0", "--patterns", "128", "--max-bytes", "64MiB").Devices[0]
	if free.WorkerMappedBytes == 0 {
		t.Fatalf("a search without a limit recorded no worker mapping: %+v", free)
	}
	limit := (free.WorkerMappedBytes + 768<<20) &^ 1023
	res := runToolVia(t, env, "/bin/sh", "-c", `ulimit -v "$1" && shift && exec "$@"`, "sh", strconv.FormatUint(limit>>10, 10),
		Binary(t), "largest", "--format", "json", "-q", "--devices", "0", "--patterns", "128")
	var l result.Largest
	if err := json.Unmarshal([]byte(res.stdout), &l); res.code != 0 || err != nil || len(l.Devices) != 1 {
		t.Fatalf("largest under ulimit -v %d KiB: exit %d, %v; stderr: %s", limit>>10, res.code, err, res.stderr)
	}
	d := l.Devices[0]
	if d.BoundBy != result.BoundAddressSpace || d.AddressSpaceLimitBytes != limit {
		t.Fatalf("bound %d MiB by %q, limit recorded %d; want the address space's %d", d.BoundBytes>>20, d.BoundBy, d.AddressSpaceLimitBytes, limit)
	}
	if want := (limit - d.WorkerMappedBytes - slack) &^ (1<<20 - 1); d.BoundBytes != want {
		t.Errorf("bound %d, want the limit %d less the worker's %d and 64 MiB: %d", d.BoundBytes, limit, d.WorkerMappedBytes, want)
	}
	mapped := uint64(0) // the most a verified try before this one mapped besides its buffer
	for _, tr := range d.Tries {
		if room := limit - mapped - slack; tr.SizeBytes > room {
			t.Errorf("a try of %d MiB, above the %d MiB the limit left after the tries before it", tr.SizeBytes>>20, room>>20)
		}
		if tr.Outcome == result.TryVerified && tr.MappedBesidesBytes == 0 {
			t.Errorf("a verified try of %d MiB recorded no mapping", tr.SizeBytes>>20)
		}
		mapped = max(mapped, tr.MappedBesidesBytes)
	}
	if d.WorkerMappedBytes != mapped || d.LargestVerifiedBytes == 0 {
		t.Errorf("worker mapping %d, the tries' most %d; largest %d", d.WorkerMappedBytes, mapped, d.LargestVerifiedBytes)
	}
	if d.BoundBy != result.BoundAddressSpace || d.AddressSpaceLimitBytes != limit {
		t.Errorf("bound by %q, address-space limit %d; want the limit of %d (the headline names it: the judge's)", d.BoundBy, d.AddressSpaceLimitBytes, limit)
	}
}

// childKind waits for a child of parent running this binary's hidden child command of the given kind.
func childKind(t *testing.T, parent int, kind string) int {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", parent))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			for _, field := range strings.Fields(string(b)) {
				cmdline, _ := os.ReadFile("/proc/" + field + "/cmdline")
				if bytes.Contains(cmdline, []byte("__child\x00"+kind)) {
					pid, _ := strconv.Atoi(field)
					return pid
				}
			}
		}
	}
	t.Fatalf("no %s child of %d appeared", kind, parent)
	return 0
}

// TestLargestInterruptedIsPartial: Ctrl-C during a try: the try in flight is recorded as interrupted, no try after it is made or recorded
// (before, each was "crashed (0.0 s)"), the document says it is partial, the headline gives only a lower
// bound, the exit code is 130 and with -q nothing is printed. The first try's create hangs (faultcl), and a
// first try's hang limit is 30 s: the interrupt comes while it is in flight.
func TestLargestInterruptedIsPartial(t *testing.T) {
	out := filepath.Join(t.TempDir(), "largest.json")
	code, _, stderr := interruptOnceStarted(t, FaultEnv(t, "FAULTCL_HANG_AT=1"), "largest-try", "largest", "--format", "json", "-o", out, "-q")
	if code != exitInterrupted {
		t.Errorf("exit %d, want %d", code, exitInterrupted)
	}
	b, err := os.ReadFile(out)
	var l result.Largest
	if err != nil || json.Unmarshal(b, &l) != nil {
		t.Fatalf("the result after Ctrl-C: %v: %s", err, b)
	}
	if !l.Interrupted || len(l.Devices) != 1 || !l.Devices[0].Interrupted || len(l.Devices[0].Patterns) != 0 {
		t.Fatalf("interrupted %v, %d devices; want a partial document with the one device searched, no pattern complete", l.Interrupted, len(l.Devices))
	}
	if tries := l.Devices[0].Tries; len(tries) != 1 || tries[0].Outcome != result.TryInterrupted {
		t.Errorf("tries %+v; want the one in flight, interrupted", tries)
	}
	if want := judge.Largest(&l).Verdict(); !slices.Equal(l.Verdict, want) {
		t.Errorf("headline %q, want the judge's of an interrupted search %q", l.Verdict, want)
	}
	if stderr != "" {
		t.Errorf("stderr after one Ctrl-C with -q: %q; want nothing: the document says it was interrupted (before: \"context canceled\")", stderr)
	}
}

// TestRemedyInterruptedIsPartial: Ctrl-C during remedy's first change: the baseline stands, the change in flight is recorded as
// interrupted (with no gain), no later change is run or recorded, the document says how many changes were
// planned, the headline says none ran to its end, and the exit code is 130. The baseline fails fast (a
// shared context's host staging over its budget); each change's creates take 10 ms, so the first change is
// in flight for 3 s when its worker appears.
func TestRemedyInterruptedIsPartial(t *testing.T) {
	out := filepath.Join(t.TempDir(), "remedy.json")
	cmd := exec.Command(Binary(t), "remedy", "--strategies", "shared", "--max-allocs", "300", "--format", "json", "-o", out, "-q")
	cmd.Env = FaultEnv(t, "FAULTCL_SLOW_US=10000", "FAULTCL_HOST_BUDGET=52428800")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	seen := map[int]bool{}
	workerOf(t, cmd.Process.Pid, seen) // the baseline
	workerOf(t, cmd.Process.Pid, seen) // the first change
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(cmd.Wait()); code != exitInterrupted {
		t.Errorf("exit %d, want %d", code, exitInterrupted)
	}
	b, err := os.ReadFile(out)
	var r result.Remedy
	if err != nil || json.Unmarshal(b, &r) != nil {
		t.Fatalf("the result after Ctrl-C: %v: %s", err, b)
	}
	if !r.Interrupted || r.ChangesPlanned < 2 || r.Baseline.Outcome != result.OutcomeFailed || r.Baseline.Interrupted() {
		t.Fatalf("interrupted %v, %d changes planned, baseline %s; want a partial search after a failed baseline", r.Interrupted, r.ChangesPlanned, r.Baseline.Outcome)
	}
	if len(r.Remedies) != 1 || !r.Remedies[0].Interrupted() || r.Remedies[0].Gain != 0 {
		t.Errorf("changes %+v; want only the one in flight, interrupted, with no gain", r.Remedies)
	}
	want := fmt.Sprintf("Interrupted (Ctrl-C) after the baseline (shared, 1 MiB buffers) failed with -6 (CL_OUT_OF_HOST_MEMORY) after %d buffers (%s): none of the %d changes ran to its end.",
		r.Baseline.AllocationsOK, units.Bytes(r.Baseline.BytesOK), r.ChangesPlanned)
	if len(r.Verdict) != 1 || r.Verdict[0] != want {
		t.Errorf("headline %q, want %q", r.Verdict, want)
	}
}

// interruptOnceStarted starts the binary, waits for its child of the given kind, sends one Ctrl-C and
// returns its exit code, stdout and stderr.
func interruptOnceStarted(t *testing.T, env []string, kind string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	childKind(t, cmd.Process.Pid, kind)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	return exitOf(cmd.Wait()), stdout.String(), stderr.String()
}

// TestCheckInterruptedJudgesNothing: Ctrl-C during a check's first job judges nothing: exit 130 and one line saying how many jobs ran, where
// before it printed BELOW EXPECTATION (exit 1), with the jobs never run "not run within the time budget".
// Each create takes 10 ms, so the first job is in flight for 3 s when its worker appears.
func TestCheckInterruptedJudgesNothing(t *testing.T) {
	dir := t.TempDir()
	env := FaultEnv(t)
	if res := runTool(t, env, "run", "--max-allocs", "300", "--out", dir, "-q"); res.code != 0 {
		t.Fatalf("the run to record: exit %d: %s", res.code, res.stderr)
	}
	expect := filepath.Join(dir, "expect.json")
	if res := runTool(t, env, "check", "--record", "--output", expect, dir); res.code != 0 {
		t.Fatalf("check --record: exit %d: %s", res.code, res.stderr)
	}
	exp, err := result.LoadExpectations(expect)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := interruptOnceStarted(t, FaultEnv(t, "FAULTCL_SLOW_US=10000"), "strategy", "check", "--expect", expect)
	want := fmt.Sprintf("clmemprobe check: INTERRUPTED (Ctrl-C) after 0 of %d jobs: nothing is judged\n", len(exp.Jobs))
	if code != exitInterrupted || stdout != want {
		t.Errorf("exit %d, stdout %q; want %d and %q", code, stdout, exitInterrupted, want)
	}
}

// TestExchangeInterruptedIsPartial: Ctrl-C during an exchange writes a document that says it was interrupted and how many steps ran, with
// nothing verified, and exits 130; before, it wrote nothing and said "context canceled".
func TestExchangeInterruptedIsPartial(t *testing.T) {
	out := filepath.Join(t.TempDir(), "exchange.json")
	code, _, stderr := interruptOnceStarted(t, FaultEnv(t), "exchange", "exchange", "--steps", "100000000", "--bench-reps", "0", "--format", "json", "-o", out)
	var r result.ExchangeRun
	b, err := os.ReadFile(out)
	if err != nil || json.Unmarshal(b, &r) != nil {
		t.Fatalf("the document after Ctrl-C (exit %d, stderr %q): %v: %s", code, stderr, err, b)
	}
	if code != exitInterrupted || !r.Interrupted || r.Verified || r.StepsDone >= r.Steps || r.Steps != 100000000 {
		t.Errorf("exit %d, interrupted %v, verified %v, %d of %d steps; want 130, an interrupted and unverified document", code, r.Interrupted, r.Verified, r.StepsDone, r.Steps)
	}
	if stderr != "" {
		t.Errorf("stderr %q, want nothing: the document says it was interrupted (before: \"context canceled\")", stderr)
	}
}
