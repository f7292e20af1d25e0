package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// tmuxPane is a detached tmux session of a fixed size on a server of the test's own, so that the test sees
// what a person at an 80-column terminal would: tmux keeps every row, wrapped ones marked as such.
type tmuxPane struct {
	t      *testing.T
	socket string
}

// startTmux runs script in a new 80x24 session, or skips (fails on CI) where tmux is missing.
func startTmux(t *testing.T, script string) *tmuxPane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		skipOrFail(t, "tmux is not installed (apt-get install tmux; scripts/setup.sh --tests installs it)")
	}
	p := &tmuxPane{t: t, socket: fmt.Sprintf("clmemprobe-test-%d", os.Getpid())}
	p.tmux("-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", "bash "+script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	return p
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// lines is every row of the pane and its history, rows that the terminal wrapped joined back (-J): a
// joined row wider than the pane is a line that wrapped.
func (p *tmuxPane) lines() []string {
	return strings.Split(strings.TrimRight(p.tmux("capture-pane", "-p", "-J", "-S", "-"), "\n"), "\n")
}

// progressRow is a live progress line: a strategy, then buffers of the budget.
var progressRow = regexp.MustCompile(`^\S+ +\d+/\d+ buffers`)

// The live line stays within an 80-column terminal while it refreshes, so a carriage return rewrites it
// whole and no stale copy is left behind; the table and the verdicts after it fit too.
func TestProgressLineFitsAnEightyColumnTerminal(t *testing.T) {
	env := PoCLEnv(t)
	dir := t.TempDir()
	var script strings.Builder
	for _, kv := range append(env, "TERM=screen") {
		if k, v, ok := strings.Cut(kv, "="); ok && !strings.ContainsAny(k, " '") {
			fmt.Fprintf(&script, "export %s='%s'\n", k, strings.ReplaceAll(v, "'", `'\''`))
		}
	}
	fmt.Fprintf(&script, "%s run --strategies shared,per-device --touch fill --max-allocs 3000 --sample-interval 1ms\necho CLMEMPROBE-EXIT-$?\nexec sleep 600\n", Binary(t))
	path := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(path, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	pane := startTmux(t, path)
	deadline := time.Now().Add(3 * time.Minute)
	captures, progressSeen := 0, false
	var screen []string
	for !strings.Contains(strings.Join(screen, "\n"), "CLMEMPROBE-EXIT-") {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not end in 3 minutes; the pane:\n%s", strings.Join(screen, "\n"))
		}
		screen = pane.lines()
		captures++
		progress := 0
		for _, l := range screen {
			if w := utf8.RuneCountInString(strings.TrimRight(l, " ")); w > 80 {
				t.Fatalf("a line of %d columns wrapped on an 80-column terminal: %q", w, l)
			}
			if progressRow.MatchString(l) {
				progress++
			}
		}
		if progress > 1 {
			t.Fatalf("%d progress lines on the screen at once, stale copies of a wrapped line:\n%s", progress, strings.Join(screen, "\n"))
		}
		progressSeen = progressSeen || progress == 1
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(strings.Join(screen, "\n"), "CLMEMPROBE-EXIT-0") {
		t.Fatalf("the run failed:\n%s", strings.Join(screen, "\n"))
	}
	if !progressSeen {
		t.Fatalf("no progress line was seen in %d captures", captures)
	}
	for _, l := range screen {
		if progressRow.MatchString(l) {
			t.Errorf("a progress line remains after the run: %q", l)
		}
	}
}
