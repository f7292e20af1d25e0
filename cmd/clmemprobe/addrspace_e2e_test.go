package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// goRuntimeDump is what Go's runtime prints when it dies of an address-space limit (or any other fatal
// error): a process that printed it was the victim, not a reporter.
var goRuntimeDump = regexp.MustCompile(`(?m)^(fatal error: |runtime: out of memory|goroutine \d+ \[)`)

// TestParentLivesUnderTheAddressSpaceLimitItDocuments runs every command 20 times under ulimit -v at
// probe.MinAddressSpace, as an HPC site or Slurm's VSizeFactor sets it: the workers may fail under it (they
// load the runtime), the parent never dies of it. It printed Go's "fatal error: out of memory" when glibc
// gave each of its threads a 64 MiB arena.
func TestParentLivesUnderTheAddressSpaceLimitItDocuments(t *testing.T) {
	env := traceEnv(FaultEnv(t))
	// Jobs of a few small buffers: what is tried is the parent's room, which the buffers' memory (the
	// workers') does not take.
	small := []string{"--max-allocs", "4", "--size", "64KiB"}
	dir := t.TempDir()
	base, next := filepath.Join(dir, "base"), filepath.Join(dir, "next")
	for _, out := range []string{base, next} {
		if res := runTool(t, env, append([]string{"run", "--out", out}, small...)...); res.code != 0 {
			t.Fatalf("the runs to read: exit %d: %s", res.code, res.stderr)
		}
	}
	expect := filepath.Join(dir, "expect.json")
	if res := runTool(t, env, "check", "--record", "--output", expect, base); res.code != 0 {
		t.Fatalf("check --record: exit %d: %s", res.code, res.stderr)
	}
	commands := [][]string{
		{"version"}, {"devices"}, {"env"}, append([]string{"run"}, small...), {"largest", "--max-bytes", "64MiB", "--patterns", "4"},
		append([]string{"remedy"}, small...), {"exchange", "--cells", "4096", "--steps", "4", "--bench-reps", "0"}, {"trace", "--", Traceprog(t), "loop", "1024", "20"},
		{"report", base}, {"compare", base, next}, {"merge", base, next}, {"check", "--expect", expect},
	}
	limit := strconv.FormatUint(probe.MinAddressSpace>>10, 10)
	bin := Binary(t)
	for _, args := range commands {
		t.Run(args[0], func(t *testing.T) {
			var wg sync.WaitGroup
			fails := make(chan string, 20)
			// Four at a time: on two cores, the whole test took 132 s with twenty at once and 70 s four by four.
			slots := make(chan struct{}, 4)
			for i := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					slots <- struct{}{}
					defer func() { <-slots }()
					res, err := underLimit(env, limit, append([]string{bin}, args...))
					if err != nil {
						fails <- fmt.Sprintf("try %d: %v", i, err)
						return
					}
					// A parent killed by a signal has no exit code (-1): a failed malloc's SIGABRT, a fault.
					if dump := goRuntimeDump.FindString(res.stdout + res.stderr); dump != "" || res.code < 0 || res.code > 5 && res.code != 130 {
						fails <- fmt.Sprintf("try %d: exit %d, %q: %s", i, res.code, dump, lastLines(res.stderr, 3))
					}
				}()
			}
			wg.Wait()
			close(fails)
			for f := range fails {
				t.Error(f)
			}
		})
	}
}

// TestTooLittleAddressSpaceIsOneLine checks that below the documented least address space the parent says
// so in one line, with the value to set, and exits 3 before any work.
func TestTooLittleAddressSpaceIsOneLine(t *testing.T) {
	below := strconv.FormatUint((probe.MinAddressSpace-128<<20)>>10, 10)
	res := runToolVia(t, FaultEnv(t), "/bin/sh", "-c", `ulimit -v "$1" && shift && exec "$@"`, "sh", below, Binary(t), "run", "--max-allocs", "10")
	if res.code != exitNoOpenCL || res.stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 3 and nothing on stdout", res.code, res.stdout)
	}
	need := probe.MinAddressSpace >> 10
	want := fmt.Sprintf("clmemprobe: the address-space limit is below what the tool needs for itself: ulimit -v is %s KiB; the tool needs at least %d KiB "+
		"(ulimit -v %d). To see how a runtime does under a lower limit, give it to the workers alone: run --variant NAME:RLIMIT_AS=SIZE\n", below, need, need)
	if res.stderr != want {
		t.Errorf("stderr %q; want the one line %q", res.stderr, want)
	}
}

// underLimit runs argv under ulimit -v limit (KiB), bounded in time, from any goroutine: it reports what it
// could not do as an error instead of failing the test.
func underLimit(env []string, limit string, argv []string) (invocation, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", `ulimit -v "$1" && shift && exec "$@"`, "sh", limit}, argv...)...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return invocation{out.String(), errb.String(), ee.ExitCode()}, nil
	case err != nil:
		return invocation{}, err
	}
	return invocation{out.String(), errb.String(), 0}, nil
}

// lastLines is the last n lines of s, joined with " | ".
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// TestRunStaysWithinTheAddressSpaceLimit: run with fill on PoCL, whose buffers are mapped in the worker,
// under an address-space limit 512 MiB above what a worker maps with a few buffers (measured by a run
// without a limit): for shared and for pool (whose pool buffer maps its whole size at once), the host guard
// stops the loop before the limit, says it was the address space (the guard, the limit and its evidence
// name the limit), and no sample of the worker reaches the limit (the guard keeps 64 MiB of it free for what
// the worker maps besides its buffers). Before, the workers ran into the limit: PoCL failed an assertion and both jobs crashed with
// SIGABRT, shared after some 500 buffers and pool at its first.
func TestRunStaysWithinTheAddressSpaceLimit(t *testing.T) {
	const room = 512 << 20
	env := PoCLEnv(t)
	args := []string{"--devices", "0", "--touch", "fill", "-q"}
	free, _, _ := runOut(t, env, append(args, "--strategies", "shared", "--max-allocs", "8")...)
	base := mostMapped(free.Jobs[0].Samples)
	limit := (base + room) &^ 1023
	out := t.TempDir()
	res, err := underLimit(env, strconv.FormatUint(limit>>10, 10), append([]string{Binary(t), "run", "--strategies", "shared,pool", "--max-allocs", "4000", "--out", out}, args...))
	if err != nil {
		t.Fatal(err)
	}
	r, err := result.Load(filepath.Join(out, "run.json"))
	if err != nil || len(r.Jobs) != 2 {
		t.Fatalf("run under ulimit -v %d KiB: exit %d, %v: %s", limit>>10, res.code, err, res.stderr)
	}
	for _, j := range r.Jobs {
		if j.Outcome != result.OutcomeStopped || j.Guard != result.GuardAddressSpace || j.Limit != result.LimitAddressSpace || j.AllocationsOK == 0 {
			t.Fatalf("%s %s (%s) by %q, limit %q, after %d buffers; want stopped by the guard at the address space: %s", j.Strategy, j.Outcome, j.Signal, j.Guard, j.Limit, j.AllocationsOK, j.Reason)
		}
		if got := j.LimitEvidence["address_space_bytes"]; got != float64(limit) {
			t.Errorf("%s: the limit's address_space_bytes %.0f, want the limit %d", j.Strategy, got, limit)
		}
		// The room the guard keeps is for what the worker maps besides its buffers: a thread the Go runtime
		// or the OpenCL runtime starts after the guard's last look maps its 8 MiB stack there (a sample under
		// load showed 7.6 MiB of it taken). When that happens is the scheduler's; that the worker never
		// reaches its limit is the guard's promise.
		if peak := mostMapped(j.Samples); peak >= limit || peak <= limit-room {
			t.Errorf("%s: the worker mapped at most %d under the limit %d; want below it, and past the %d it started with", j.Strategy, peak, limit, limit-room)
		}
	}
}

// mostMapped is the most address space (VmSize) a worker's samples show.
func mostMapped(samples []result.Sample) uint64 {
	most := uint64(0)
	for _, s := range samples {
		most = max(most, s.VMSBytes)
	}
	return most
}
