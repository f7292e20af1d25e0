package main

// The walk-through's second pass over one set of conventions (issue 24): -o/--output wherever a command
// renders a document, --wide wherever a table hides columns, -v and -q where they mean something, and sizes
// shown as they are typed.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
)

// commandFlags is every command's flag names, aliases included.
func commandFlags() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, cmd := range newApp(nil, nil).Commands {
		out[cmd.Name] = map[string]bool{}
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				out[cmd.Name][n] = true
			}
		}
	}
	return out
}

// Every command that renders a document (it takes --format) takes -o/--output for it too.
func TestEveryRenderingCommandTakesOutput(t *testing.T) {
	exempt := map[string]bool{
		"check": true, // its --output is the expectations file --record writes; the check's one line is for a scheduler's log
	}
	for name, flags := range commandFlags() {
		if flags["format"] && !exempt[name] && !(flags["output"] && flags["o"]) {
			t.Errorf("%s takes --format but not -o/--output", name)
		}
	}
}

// -o FILE holds exactly what stdout would have held (stdout then gets nothing), and a link at FILE is
// replaced by the file, never followed: what the link pointed to stays as it was.
func TestOutputFileHoldsWhatStdoutWould(t *testing.T) {
	env := PoCLEnv(t)
	for _, args := range [][]string{{"devices"}, {"devices", "--format", "json"}, {"env", "--format", "json"}, {"env", "--format", "markdown"},
		{"run", "--dry-run", "--max-allocs", "10"}, {"run", "--variant-preset", "list"}} {
		want := inProcess(t, env, args...)
		want.stdout = steady(want.stdout)
		if want.code != 0 || want.stdout == "" {
			t.Fatalf("%v: exit %d, stdout %q: %s", args, want.code, want.stdout, want.stderr)
		}
		dir := t.TempDir()
		victim, link := filepath.Join(dir, "victim"), filepath.Join(dir, "link")
		if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		for _, flag := range []string{"-o", "--output"} {
			path := filepath.Join(dir, "out"+flag)
			for _, target := range []string{path, link} {
				got := inProcess(t, env, append(append([]string{}, args...), flag, target)...)
				b, err := os.ReadFile(target)
				if got.code != 0 || got.stdout != "" || err != nil || steady(string(b)) != want.stdout {
					t.Errorf("%v %s %s: exit %d, stdout %q, file %q (%v), want the file to hold %q", args, flag, target, got.code, got.stdout, b, err, want.stdout)
				}
			}
		}
		if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%v -o LINK: the link is still a link (%v), not the file written", args, err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "keep" {
			t.Errorf("%v -o LINK followed the link: its target holds %q", args, b)
		}
	}
}

// availableNow is the dry run's reading of available memory, which moves between two runs.
var availableNow = regexp.MustCompile(`[0-9.]+ [KMGT]iB now`)

// steady is a command's output without the figures that move from one run to the next.
func steady(s string) string { return availableNow.ReplaceAllString(s, "N now") }

var hiddenNote = regexp.MustCompile(`(?m)^(\d+) columns? hidden: (\S+)$`)

// Wherever a narrow terminal hides columns of a table, the note under it names a flag the command takes,
// --wide, which shows them all; the commands that take --wide are the ones the README's Tables names.
func TestWideWhereColumnsHide(t *testing.T) {
	_, res, dir := runOut(t, PoCLEnv(t), "--strategies", "shared", "--max-allocs", "4", "--format", "json")
	if res.code != 0 {
		t.Fatalf("run: exit %d: %s", res.code, res.stderr)
	}
	narrow := append(PoCLEnv(t), "COLUMNS=40")
	for _, args := range [][]string{{"devices"}, {"run", "--dry-run", "--max-allocs", "10"}, {"report", dir}, {"merge", dir}} {
		got := inProcess(t, narrow, args...)
		m := hiddenNote.FindStringSubmatch(got.stdout)
		if m == nil {
			t.Errorf("%v at 40 columns hides no column (exit %d):\n%s", args, got.code, got.stdout)
			continue
		}
		if m[2] != "--wide" {
			t.Errorf("%v: the note names %s, want --wide: %q", args, m[2], m[0])
		}
		wide := inProcess(t, narrow, append(append([]string{}, args...), "--wide")...)
		if wide.code != 0 || hiddenNote.MatchString(wide.stdout) {
			t.Errorf("%v --wide at 40 columns: exit %d, still hides columns: %s%s", args, wide.code, wide.stdout, wide.stderr)
		}
	}
	readme, err := os.ReadFile(filepath.Join(Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, tables, _ := strings.Cut(string(readme), "**Tables.**")
	tables, _, _ = strings.Cut(tables, "\n\n")
	for name, flags := range commandFlags() {
		if named := strings.Contains(tables, "`"+name+"`"); named != flags["wide"] {
			t.Errorf("%s takes --wide: %v, but the README's Tables names it: %v:\n%s", name, flags["wide"], named, tables)
		}
	}
}

// check -v prints each job's comparison on stderr, one line a job with what its JSON says, and stdout
// stays the one document; -q and -v together are bad input.
func TestCheckVerbosePrintsEachJob(t *testing.T) {
	env := PoCLEnv(t)
	exp, _ := record(t, env, "--touch", "fill", "--max-allocs", "100", "--strategies", "shared,per-device")
	res := runTool(t, env, "check", "-v", "--format", "json", "--expect", exp, "--time-limit", "30s")
	var h comparison.Health
	if err := json.Unmarshal([]byte(res.stdout), &h); err != nil || res.code != 0 || len(h.Jobs) != 2 {
		t.Fatalf("check -v --format json: exit %d, %v: %q %s", res.code, err, res.stdout, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	if len(lines) != len(h.Jobs) {
		t.Fatalf("%d lines on stderr for %d jobs: %q", len(lines), len(h.Jobs), res.stderr)
	}
	for i, j := range h.Jobs {
		for _, want := range []string{fmt.Sprintf("%s %s:", j.Strategy, units.Size(j.SizeBytes)), fmt.Sprintf("%d buffers (%s)", j.AllocationsOK, j.Outcome),
			fmt.Sprintf("recorded %d (%s)", j.ExpectedAllocs, j.ExpectedOutcome), fmt.Sprintf("tolerance %.3g%%", 100*h.Tolerance)} {
			if !strings.Contains(lines[i], want) {
				t.Errorf("job %d's line lacks %q: %q", i, want, lines[i])
			}
		}
	}
	oneLineError(t, inProcess(t, env, "check", "-q", "-v", "--expect", exp), exitUsage, "--quiet")
	if help := inProcess(t, env, "check", "--help"); !strings.Contains(help.stdout, "--verbose, -v") {
		t.Errorf("check --help does not list -v:\n%s", help.stdout)
	}
}

// A size typed as a fraction of a unit is shown as typed, with the space the tables put before a unit, in
// the dry run, the table with its headline and the Markdown report; not as a sum.
func TestSizesShownAsTyped(t *testing.T) {
	env := PoCLEnv(t)
	for _, typed := range []string{"1.5MiB", "1.25GiB", "1MiB+4KiB"} {
		n, err := units.ParseSize(typed)
		if err != nil {
			t.Fatal(err)
		}
		// The typed form with a space before each unit: "1.5MiB" is shown "1.5 MiB".
		shown := regexp.MustCompile(`(\d)([KMGT]i?B)`).ReplaceAllString(typed, "$1 $2")
		for _, args := range [][]string{{"run", "--dry-run", "--max-allocs", "10", "--wide"}, {"run", "--max-allocs", "4", "--strategies", "shared"},
			{"run", "--max-allocs", "4", "--strategies", "shared", "--format", "markdown"}} {
			res := runTool(t, env, append(args, "--size", typed)...)
			if res.code != 0 {
				t.Fatalf("%v --size %s: exit %d: %s", args, typed, res.code, res.stderr)
			}
			if !strings.Contains(res.stdout, shown) || (!strings.Contains(typed, "+") && strings.Contains(res.stdout, "MiB+")) {
				t.Errorf("%v --size %s (%d bytes) is not shown as %q:\n%s", args, typed, n, shown, res.stdout)
			}
		}
	}
}
