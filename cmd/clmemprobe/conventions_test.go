package main

// One set of conventions over every command (issue 24): --format everywhere, help CMD, -q and -v, a time
// limit named as one, and the default variant written one way. Cheap: in this process, the dry run and
// listings on PoCL.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/comparison"
)

// Every command that prints a document takes --format; those that only write a file (bundle) or print a
// fixed text (version, completion) are named here and nowhere else.
func TestEveryCommandTakesFormat(t *testing.T) {
	noFormat := map[string]bool{"bundle": true, "version": true, "completion": true}
	for _, cmd := range newApp(nil, nil).Commands {
		if noFormat[cmd.Name] {
			continue
		}
		has := false
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				has = has || n == "format"
			}
		}
		if !has {
			t.Errorf("%s has no --format", cmd.Name)
		}
	}
	env := PoCLEnv(t)
	for _, args := range [][]string{{"devices", "--format", "json"}, {"devices", "--json"}, {"env", "--format", "json"}, {"env", "--json"}} {
		res := inProcess(t, env, args...)
		if res.code != 0 || !json.Valid([]byte(res.stdout)) {
			t.Errorf("%v: exit %d, stdout not JSON: %.200s %s", args, res.code, res.stdout, res.stderr)
		}
	}
	oneLineError(t, inProcess(t, env, "devices", "--format", "xml"), exitUsage, "--format")
	oneLineError(t, inProcess(t, env, "devices", "--format", "table", "--json"), exitUsage, "--json")
}

// The runtime's own settings are the variant "default" in the plan as in the result, never "-".
func TestDryRunNamesTheDefaultVariant(t *testing.T) {
	res := inProcess(t, PoCLEnv(t), "run", "--dry-run", "--max-allocs", "10", "--strategies", "shared", "--variant", "cap:FOO=1", "--format", "table", "--wide")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var names []string
	for _, line := range strings.Split(res.stdout, "\n") {
		if cells := strings.Split(line, "│"); len(cells) > 3 && strings.TrimSpace(cells[2]) == "shared" {
			names = append(names, strings.TrimSpace(cells[3]))
		}
	}
	if strings.Join(names, ",") != "default,cap" {
		t.Errorf("the plan's variants are %q, want default,cap:\n%s", names, res.stdout)
	}
	if plain := inProcess(t, PoCLEnv(t), "run", "--dry-run", "--max-allocs", "10", "--wide"); strings.Contains(plain.stdout, "│ - ") {
		t.Errorf("a plain plan writes the default variant as -:\n%s", plain.stdout)
	}
}

// -q leaves stderr to errors: no progress, no "wrote" line; -v prints the plan before the run.
func TestQuietAndVerbose(t *testing.T) {
	env := PoCLEnv(t)
	dir := t.TempDir()
	quiet := runTool(t, env, "run", "-q", "--strategies", "shared", "--max-allocs", "4", "--out", dir, "--format", "json")
	if quiet.code != 0 || quiet.stderr != "" {
		t.Errorf("run -q: exit %d, stderr %q, want none", quiet.code, quiet.stderr)
	}
	expect := filepath.Join(t.TempDir(), "expect.json")
	rec := runTool(t, env, "check", "--quiet", "--record", "--output", expect, filepath.Join(dir, "run.json"))
	if rec.code != 0 || rec.stderr != "" {
		t.Errorf("check -q --record: exit %d, stderr %q, want none", rec.code, rec.stderr)
	}
	verbose := runTool(t, env, "run", "-v", "--strategies", "shared", "--max-allocs", "4", "--format", "json")
	if verbose.code != 0 || !strings.HasPrefix(verbose.stderr, "clmemprobe run: the plan, then the run. ") {
		t.Errorf("run -v: exit %d, stderr %q, want the plan", verbose.code, verbose.stderr)
	}
	if !json.Valid([]byte(verbose.stdout)) {
		t.Errorf("run -v put something other than the result on stdout: %.200q", verbose.stdout)
	}
	oneLineError(t, inProcess(t, env, "run", "-q", "-v", "--dry-run"), exitUsage, "--quiet")
}

// A result folder is a result wherever a command takes one: report DIR, compare DIR DIR; compare renders
// Markdown; check --record prints to stdout without --output; and the folder keeps no lock file after the
// run.
func TestResultFolders(t *testing.T) {
	env := PoCLEnv(t)
	_, res, dir := runOut(t, env, "--strategies", "shared", "--max-allocs", "4", "--format", "json")
	if res.code != 0 {
		t.Fatalf("run: exit %d: %s", res.code, res.stderr)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".clmemprobe.lock")); err == nil {
		t.Errorf("the run left its lock file in %s", dir)
	}
	if r := inProcess(t, env, "report", "--format", "json", dir); r.code != 0 || !json.Valid([]byte(r.stdout)) {
		t.Errorf("report DIR: exit %d: %s", r.code, r.stderr)
	}
	// compare takes a folder as it takes its run.json: the run against itself, every row equal.
	if c, code := compareJSON(t, env, dir, filepath.Join(dir, "run.json")); code != 0 || c.Regressed || len(c.Rows) == 0 || c.Rows[0].Change != comparison.ChangeEqual {
		t.Errorf("compare DIR DIR/run.json: exit %d, %+v", code, c)
	}
	r, err := result.Load(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := report.Render(&want, "markdown", comparison.Compare(r, r, 0.1)); err != nil {
		t.Fatal(err)
	}
	if md := inProcess(t, env, "compare", "--format", "markdown", dir, filepath.Join(dir, "run.json")); md.code != 0 || md.stdout != want.String() {
		t.Errorf("compare --format markdown: exit %d: %q %s", md.code, md.stdout, md.stderr)
	}
	rec := inProcess(t, env, "check", "--record", dir)
	var exp result.Expectations
	if rec.code != 0 || json.Unmarshal([]byte(rec.stdout), &exp) != nil || len(exp.Jobs) != 1 {
		t.Errorf("check --record DIR: exit %d, stdout %.200q, stderr %s", rec.code, rec.stdout, rec.stderr)
	}
	oneLineError(t, inProcess(t, env, "report", t.TempDir()), exitUsage, "run.json")
}
