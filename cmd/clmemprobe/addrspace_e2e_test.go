package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe"
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
	dir := t.TempDir()
	base, next := filepath.Join(dir, "base"), filepath.Join(dir, "next")
	for _, out := range []string{base, next} {
		if res := runTool(t, env, "run", "--max-allocs", "30", "--out", out); res.code != 0 {
			t.Fatalf("the runs to read: exit %d: %s", res.code, res.stderr)
		}
	}
	expect := filepath.Join(dir, "expect.json")
	if res := runTool(t, env, "check", "--record", "--output", expect, base); res.code != 0 {
		t.Fatalf("check --record: exit %d: %s", res.code, res.stderr)
	}
	commands := [][]string{
		{"version"}, {"devices"}, {"env"}, {"run", "--max-allocs", "30"}, {"largest", "--max-bytes", "64MiB", "--patterns", "4"},
		{"remedy", "--max-allocs", "30"}, {"exchange", "--cells", "4096", "--steps", "4", "--bench-reps", "0"}, {"trace", "--", Traceprog(t), "loop", "1024", "20"},
		{"report", base}, {"compare", base, next}, {"merge", base, next}, {"check", "--expect", expect},
	}
	limit := strconv.FormatUint(probe.MinAddressSpace>>10, 10)
	for _, args := range commands {
		t.Run(args[0], func(t *testing.T) {
			var wg sync.WaitGroup
			fails := make(chan string, 20)
			for i := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res := runToolVia(t, env, append([]string{"/bin/sh", "-c", `ulimit -v "$1" && shift && exec "$@"`, "sh", limit, Binary(t)}, args...)...)
					if dump := goRuntimeDump.FindString(res.stdout + res.stderr); dump != "" || res.code > 5 && res.code != 130 {
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

// TestTooLittleAddressSpaceIsOneLine: below the documented least address space the parent says so in one
// line, with the value to set, and exits 3 before any work.
func TestTooLittleAddressSpaceIsOneLine(t *testing.T) {
	below := strconv.FormatUint((probe.MinAddressSpace-128<<20)>>10, 10)
	res := runToolVia(t, FaultEnv(t), "/bin/sh", "-c", `ulimit -v "$1" && shift && exec "$@"`, "sh", below, Binary(t), "run", "--max-allocs", "10")
	if res.code != exitNoOpenCL || res.stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 3 and nothing on stdout", res.code, res.stdout)
	}
	want := fmt.Sprintf("ulimit -v is %s KiB; the tool needs at least %d KiB", below, probe.MinAddressSpace>>10)
	if lines := strings.Split(strings.TrimSpace(res.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Errorf("stderr %q; want one line with %q", res.stderr, want)
	}
}

// lastLines is the last n lines of s, joined with " | ".
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
