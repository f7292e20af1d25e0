package main

// The parent outlives its memory cgroup's OOM killer: with the host guard off, every worker (and a traced
// program) is ended by the cgroup's OOM killer, 10 times for each command that runs jobs, and each time the
// parent lives to write its whole result and leaves no lock behind. On another machine the parent of run
// --host-reserve 0 was killed in 1 of 3 runs, leaving a run.json that said nothing ran and a stale lock.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/cmd/clmemprobe/internal/safefile"
	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// survivals is how many times each command meets the OOM killer.
const survivals = 10

// survivalLimit is the memory cgroup each command meets it in: small, so that what fills it (and what the
// kernel frees at each kill) is quick to go through; the parent, its OOM decoy and a worker's runtime take
// about a third of it before any buffer.
const survivalLimit = 128 << 20

// TestTheParentOutlivesItsCgroupsOOMKiller runs each command that runs jobs survivals times in a memory
// cgroup of its own (survivalLimit) with the host guard off, where the cgroup's OOM killer ends what
// allocates, and checks each time that the killer acted, that the parent wrote its whole result, and that
// no lock is left. The commands run side by side, each in its own cgroup: a cgroup's OOM killer chooses
// among that cgroup's processes alone.
func TestTheParentOutlivesItsCgroupsOOMKiller(t *testing.T) {
	env := PoCLEnv(t)
	fill := []string{"--strategies", "shared", "--touch", "fill", "--max-allocs", "2000", "--host-reserve", "0", "-q"}
	t.Run("run", func(t *testing.T) {
		t.Parallel()
		procs, version := memoryCgroup(t, survivalLimit)
		for i := range survivals {
			dir := t.TempDir()
			before := cgroupOOMKills(t, procs, version)
			res := inCgroup(t, procs, env, append([]string{"run", "--out", dir}, fill...)...)
			r, err := result.Load(filepath.Join(dir, "run.json"))
			if res.code != exitWorkerFault || err != nil || len(r.Jobs) != 1 || r.Jobs[0].Signal != "SIGKILL" || r.Jobs[0].Limit != result.LimitCgroupMemory {
				t.Fatalf("try %d: exit %d, run.json %v; want 5 and the job killed by the cgroup's OOM killer: %s; the kernel's last kills: %s", i, res.code, err, res.stderr, lastKills())
			}
			oomKilledSince(t, i, procs, version, before)
			if _, err := os.Lstat(filepath.Join(dir, safefile.LockName)); !os.IsNotExist(err) {
				t.Errorf("try %d: the lock is left behind (%v)", i, err)
			}
		}
	})
	t.Run("remedy", func(t *testing.T) {
		t.Parallel()
		procs, version := memoryCgroup(t, survivalLimit)
		// On faultcl, whose jobs start sooner than PoCL's: a remedy is nine jobs, and the test's longest part.
		fenv := FaultEnv(t)
		for i := range survivals {
			before := cgroupOOMKills(t, procs, version)
			out := filepath.Join(t.TempDir(), "remedy.json")
			res := inCgroup(t, procs, fenv, append([]string{"remedy", "--format", "json", "-o", out}, fill...)...)
			var r result.Remedy
			b, err := os.ReadFile(out)
			if res.code != 0 || err != nil || json.Unmarshal(b, &r) != nil || r.Baseline.Outcome != result.OutcomeCrashed || len(r.Remedies) != r.ChangesPlanned {
				t.Fatalf("try %d: exit %d, %v; want every planned change recorded after the baseline's crash: %s; the kernel's last kills: %s", i, res.code, err, res.stderr, lastKills())
			}
			oomKilledSince(t, i, procs, version, before)
			if r.Baseline.Limit != result.LimitCgroupMemory {
				t.Errorf("try %d: the baseline's limit is %q, want the cgroup's", i, r.Baseline.Limit)
			}
		}
	})
	t.Run("trace", func(t *testing.T) {
		t.Parallel()
		procs, version := memoryCgroup(t, survivalLimit)
		survivesTraces(t, procs, version, env)
	})
	t.Run("largest", func(t *testing.T) {
		t.Parallel()
		procs, version := memoryCgroup(t, survivalLimit)
		for i := range survivals {
			largestNamesTheOOMKiller(t, i, procs, version)
		}
	})
}

// survivalDevice is the memory of faultcl's device in largest's search: twice the cgroup's limit, so that
// the search's doubling meets the OOM killer twice before it halves back.
const survivalDevice = 2 * survivalLimit

// largestNamesTheOOMKiller is one search of largest in the cgroup, on a device whose memory is its own
// (faultcl's, survivalDevice): that memory is not bounded by the host's, but a try can still take host memory (an
// alloc-host-ptr buffer, which faultcl backs with real host memory), and the tries of the cgroup's limit
// and more are ended by its OOM killer. The parent lives, each such try is named oom-killed (not crashed)
// with the kernel's count, and the largest verified size is within the cgroup.
func largestNamesTheOOMKiller(t *testing.T, i int, procs string, version int) {
	t.Helper()
	before := cgroupOOMKills(t, procs, version)
	l := largestIn(t, procs, FaultEnv(t, fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", survivalDevice)), "--devices", "0", "--patterns", "4", "--flags", "read-write,alloc-host-ptr")
	d, killed := l.Devices[0], 0
	for _, tr := range d.Tries {
		switch {
		case tr.SizeBytes >= survivalLimit && tr.Outcome != result.TryOOMKilled:
			t.Errorf("try %d: %s %s, want oom-killed: %s", i, units.Bytes(tr.SizeBytes), tr.Outcome, tr.Detail)
		case tr.Outcome == result.TryOOMKilled:
			killed++
		}
	}
	if after := cgroupOOMKills(t, procs, version); killed == 0 || after-before < uint64(killed) {
		t.Fatalf("try %d: %d tries oom-killed, the cgroup's count went from %d to %d; the kernel's last kills: %s", i, killed, before, after, lastKills())
	}
	if d.LargestVerifiedBytes >= survivalLimit || d.LargestVerifiedBytes < survivalLimit/4 || d.CgroupLimitBytes != survivalLimit {
		t.Fatalf("try %d: largest %s, cgroup limit %s in a cgroup of %s; headline %q", i, units.Bytes(d.LargestVerifiedBytes),
			units.Bytes(d.CgroupLimitBytes), units.Bytes(survivalLimit), l.Verdict[0])
	}
}

// oomKilledSince fails the test unless the cgroup's OOM killer acted since before.
func oomKilledSince(t *testing.T, i int, procs string, version int, before uint64) {
	t.Helper()
	if cgroupOOMKills(t, procs, version) == before {
		t.Fatalf("try %d: the cgroup's OOM killer did not act", i)
	}
}

// survivesTraces traces a program that fills the cgroup survivals times: each time the cgroup's OOM killer
// ends the program, and the parent writes its whole trace and leaves no lock. (Where the killer acted a
// second time while the program was still being freed, it took the tool's OOM decoy, not the parent:
// TestTheToolKeepsAnOOMDecoy.)
func survivesTraces(t *testing.T, procs string, version int, env []string) {
	for i := range survivals {
		dir := t.TempDir()
		before := cgroupOOMKills(t, procs, version)
		res := inCgroup(t, procs, traceEnv(env), "trace", "--out", dir, "-q", "--", Traceprog(t), "fill", strconv.Itoa(1<<20))
		var tr result.Trace
		b, err := os.ReadFile(filepath.Join(dir, "trace.json"))
		if err != nil || json.Unmarshal(b, &tr) != nil || res.code != exitWorkerFault || tr.Exit.Signal != "SIGKILL" {
			t.Fatalf("try %d: exit %d, trace.json %v, the program's end %+v; want 5 and the program killed: %s; the kernel's last kills: %s", i, res.code, err, tr.Exit, res.stderr, lastKills())
		}
		oomKilledSince(t, i, procs, version, before)
		if _, err := os.Lstat(filepath.Join(dir, safefile.LockName)); !os.IsNotExist(err) {
			t.Errorf("try %d: the lock is left behind (%v)", i, err)
		}
	}
}

// lastKills is the kernel log's last OOM kills, for a failure's message: which process the killer took.
func lastKills() string {
	out, err := exec.Command("dmesg").Output()
	if err != nil {
		return "dmesg: " + err.Error()
	}
	var kills []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "Killed process") {
			kills = append(kills, l)
		}
	}
	return strings.Join(kills[max(0, len(kills)-4):], " | ")
}

// TestDryRunNamesItsCgroup: a dry run in a memory cgroup says what the guard will keep there: the cgroup's limit, its free memory and
// the reserve below its limit (a sixteenth of it, under the default host reserve), where before it spoke of
// the machine's available memory alone.
func TestDryRunNamesItsCgroup(t *testing.T) {
	const limit = 1 << 30
	procs, _ := memoryCgroup(t, limit)
	res := inCgroup(t, procs, PoCLEnv(t), "run", "--dry-run", "--max-allocs", "2000", "--format", "json")
	var d result.DryRun
	if err := json.Unmarshal([]byte(res.stdout), &d); res.code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s", res.code, err, res.stderr)
	}
	if d.CgroupLimit != limit || d.CgroupFree == 0 || d.CgroupFree > limit || d.CgroupReserve != limit/16 {
		t.Errorf("cgroup limit %d, free %d, reserve %d; want %d, between 0 and the limit, %d", d.CgroupLimit, d.CgroupFree, d.CgroupReserve, limit, limit/16)
	}
}

// TestTheTracedProgramIsTheOOMKillersFirstChoice: the traced program is made oom_score_adj 1000 as it
// starts, as the workers make themselves, so that where memory runs out the kernel ends it and not the
// tool. A shell as the program writes what it (and so the program's process) has; before, it had the
// tool's own 0. The tool writes the value just after the program's exec, so a shell's very first line can
// run before it (a clean clone's run read 0 so, on a loaded machine): the shell reads it until it is 1000
// or 2 s have passed, which only a tool that never writes it fails.
func TestTheTracedProgramIsTheOOMKillersFirstChoice(t *testing.T) {
	out := filepath.Join(t.TempDir(), "adj")
	script := `i=0; while [ "$(cat /proc/$$/oom_score_adj)" != 1000 ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i + 1)); done
cat /proc/$$/oom_score_adj > "$1"`
	res := runTool(t, traceEnv(PoCLEnv(t)), "trace", "-q", "--", "/bin/sh", "-c", script, "sh", out)
	b, err := os.ReadFile(out)
	if err != nil || strings.TrimSpace(string(b)) != "1000" {
		t.Fatalf("the program's oom_score_adj %q (%v); exit %d: %s", b, err, res.code, res.stderr)
	}
}

// TestTheToolKeepsAnOOMDecoy: while it traces a program, the tool keeps a decoy beside it, a child of its
// own at oom_score_adj 1000 that holds 8 MiB of its own, and the decoy ends with the tool. Where a memory
// cgroup's OOM killer took the program and was called again while the program's memory was still being
// freed, it took the tool itself (the only process left) in 1 of 20 to 200 tries in a 256 MiB cgroup
// before the decoy; with it, 0 of 1000, and the second kill took the decoy. The program (a shell) finds
// the decoy among its parent's children.
func TestTheToolKeepsAnOOMDecoy(t *testing.T) {
	out := filepath.Join(t.TempDir(), "decoy")
	script := `for p in /proc/[0-9]*; do
  [ "${p#/proc/}" = "$$" ] && continue # this shell: its script names the decoy too
  if tr '\0' ' ' < $p/cmdline 2>/dev/null | grep -q '__child oom-decoy' && [ "$(cut -d' ' -f4 $p/stat 2>/dev/null)" = "$PPID" ]; then
    echo "${p#/proc/} $(cat $p/oom_score_adj) $(awk '/^RssAnon:/{print $2}' $p/status)"
  fi
done > "$1"`
	res := runTool(t, traceEnv(PoCLEnv(t)), "trace", "-q", "--", "/bin/sh", "-c", script, "sh", out)
	b, err := os.ReadFile(out)
	f := strings.Fields(string(b))
	if err != nil || len(f) != 3 {
		t.Fatalf("the tool's decoys beside the program: %q (%v); exit %d: %s", b, err, res.code, res.stderr)
	}
	anon, _ := strconv.ParseUint(f[2], 10, 64)
	if f[1] != "1000" || anon<<10 < probe.DecoyBytes {
		t.Errorf("the decoy has oom_score_adj %s and %s KiB of anonymous memory; want 1000 and at least %d KiB", f[1], f[2], probe.DecoyBytes>>10)
	}
	// The tool has exited: its end closed the decoy's standard input, and the decoy exited (a zombie until
	// the init it was handed to reaps it, which here takes seconds).
	deadline := time.Now().Add(5 * time.Second)
	for {
		if st, err := os.ReadFile("/proc/" + f[0] + "/stat"); err != nil || strings.Contains(string(st), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the decoy %s outlived the tool by 5 s", f[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
