package main

// The runtime boundary: nothing a runtime does while it is loaded, asked for its devices, or after the
// worker's result may take the command down or cost its result.

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A runtime that crashes or hangs in clGetPlatformIDs or clGetDeviceInfo: every command that loads it ends
// within --setup-timeout plus 5 s, with one line on stderr and exit code 3.
func TestRuntimeThatCrashesOrHangsWhileListing(t *testing.T) {
	const setup = 2 * time.Second
	commands := [][]string{{"devices"}, {"devices", "--json"}, {"env"}, {"exchange"}, {"run"}}
	for _, call := range []string{"clGetPlatformIDs", "clGetDeviceInfo"} {
		for _, fault := range []struct{ knob, mention string }{{"FAULTCL_CRASH_IN", "crashed with SIGSEGV"}, {"FAULTCL_HANG_IN", "--setup-timeout"}} {
			env := FaultEnv(t, fault.knob+"="+call)
			for _, args := range commands {
				name := fmt.Sprintf("%s in %s: %s", fault.knob, call, strings.Join(args, " "))
				t.Run(name, func(t *testing.T) {
					t.Parallel() // a hang waits out its timeout: two at once, as go test runs parallel subtests
					start := time.Now()
					res := runTool(t, env, append(args, "--setup-timeout", setup.String())...)
					if took := time.Since(start); took > setup+5*time.Second {
						t.Errorf("took %s, want at most %s", took, setup+5*time.Second)
					}
					oneLineError(t, res, exitNoOpenCL, fault.mention)
				})
			}
		}
	}
}

// A runtime that leaves a detached helper holding the worker's inherited descriptors must not make the
// worker's end slow, nor turn its result into a hang: the result completes the strategy.
func TestLingeringHelperKeepsTheResult(t *testing.T) {
	const linger, budget = 30, 64 << 20
	start := time.Now()
	r, res, _ := runOut(t, FaultEnv(t, "FAULTCL_LINGER="+strconv.Itoa(linger), fmt.Sprintf("FAULTCL_HOST_BUDGET=%d", budget)),
		"--strategies", "shared,per-device", "--max-allocs", "1000", "--hang-timeout", "10s")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	wantFailure(t, strategy(t, r, result.Shared), budget/mib, result.StageCreate, -6, 0)
	if s := strategy(t, r, result.PerDevice); s.Outcome != result.OutcomeCompleted || s.AllocationsOK != 1000 {
		t.Errorf("per-device: %s after %d, want completed 1000", s.Outcome, s.AllocationsOK)
	}
	for _, s := range r.Jobs {
		if s.Seconds > 5 {
			t.Errorf("%s took %.1f s: the helper's %d s were waited for", s.Strategy, s.Seconds, linger)
		}
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the run took %s", took)
	}
}

// memAvailable reads MemAvailable from /proc/meminfo, in bytes.
func memAvailable(t *testing.T) uint64 { return meminfo(t, "MemAvailable") }

// meminfo reads one field of /proc/meminfo, in bytes.
func meminfo(t *testing.T, field string) uint64 {
	v, err := readMeminfo(field)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// readMeminfo is meminfo for a goroutine other than the test's, which must not stop the test itself.
func readMeminfo(field string) (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) >= 2 && fields[0] == field+":" {
			kb, _ := strconv.ParseUint(fields[1], 10, 64)
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/meminfo", field)
}

// The host guard keeps its own cadence: with sampling once a second, the reserve is crossed by less than
// one batch of buffers (64 of 1 MiB), as a separate sampler in this test sees it every 5 ms. A guard that
// read memory only at the sampling interval would let a second of fills through, gigabytes at PoCL's pace.
// The batch is the bound because the guard counts the buffers in flight at its cost per buffer: even a cost
// off by a whole buffer size leaves at most a batch unaccounted. The run is in a memory cgroup of its own
// (1 GiB, whose reserve is a sixteenth of it): what the rest of the machine does, another probe filling
// gigabytes beside it, moves neither the guard's reading nor this test's. (Run against the machine's
// MemAvailable, it once stopped after 111 buffers while another run filled memory beside it.)
func TestHostGuardHoldsTheReserveWithSlowSampling(t *testing.T) {
	const limit = 1 << 30
	procs, version := memoryCgroup(t, limit)
	env := PoCLEnv(t)
	reserve := uint64(limit / 16)
	lowestFree := watchLowest(t, 5*time.Millisecond, cgroupFree(procs, version, limit))
	res := inCgroup(t, procs, env, "run", "--strategies", "shared", "--touch", "fill", "--max-allocs", "4096", "--sample-interval", "1s", "--format", "json")
	low, readings := lowestFree()
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	r := decodeRun(t, res)
	s := strategy(t, r, result.Shared)
	cg := s.Resources.CgroupOf()
	if s.Outcome != result.OutcomeStopped || s.Guard != result.GuardCgroup || cg == nil {
		t.Fatalf("shared: %s (%s, guard %q) after %d buffers; want stopped by the cgroup's guard", s.Outcome, s.Reason, s.Guard, s.AllocationsOK)
	}
	if end := cg.Memory.AtEnd; end < limit-2*reserve-64*mib {
		t.Errorf("stopped with %d MiB in the cgroup after %d buffers, below %d MiB: far too early", end>>20, s.AllocationsOK, (limit-2*reserve-64*mib)>>20)
	}
	if readings < 10 {
		t.Fatalf("only %d readings of the cgroup's memory during the run", readings)
	}
	if low+64*mib < reserve {
		t.Errorf("the cgroup's free memory fell to %d MiB, %d MiB below its reserve of %d MiB", low>>20, (reserve-low)>>20, reserve>>20)
	}
	t.Logf("reserve %d MiB, lowest free %d MiB in %d readings, stopped after %d buffers", reserve>>20, low>>20, readings, s.AllocationsOK)
}

// A second Ctrl-C exits at once: exit code 130, no worker left, and the result written so far (marked
// partial) stays a valid file.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	dir := t.TempDir()
	cmd, out := startRun(t, FaultEnv(t, "FAULTCL_SLOW_US=1000"), dir, "--max-allocs", "100000", "--strategies", "shared,per-device")
	worker := workerOf(t, cmd.Process.Pid, map[int]bool{})
	madeBuffers(t, dir, "shared")
	start := time.Now()
	for i := 0; i < 2; i++ {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	err := cmd.Wait()
	if code := exitOf(err); code != exitInterrupted {
		t.Errorf("exit code %d, want %d; output:\n%s", code, exitInterrupted, out)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("exiting took %s after the second Ctrl-C", took)
	}
	if !strings.Contains(out.String(), "interrupted again") {
		t.Logf("the first Ctrl-C ended the run before the second arrived: %q", out)
	}
	r, lerr := result.Load(dir + "/run.json")
	if lerr != nil {
		t.Fatalf("run.json after two Ctrl-C: %v", lerr)
	}
	if !r.Partial {
		t.Errorf("the result written so far must say it is partial")
	}
	deadline := time.Now().Add(2 * time.Second)
	for alive(worker) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(worker) {
		t.Errorf("worker %d survived two interrupts", worker)
	}
}
