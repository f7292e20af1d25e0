package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The cases of a hostile-input review of merge, check, bundle and the reproducer: each failed before its fix.

// failedRun makes a real run on the fault-injection runtime whose shared strategy fails at #40, and returns
// its run.json as a generic JSON object to edit.
func failedRun(t *testing.T, env ...string) (string, map[string]any) {
	t.Helper()
	_, res, dir := runOut(t, FaultEnv(t, append([]string{hostBudget(40)}, env...)...), "--strategies", "shared,per-device", "--max-allocs", "100")
	if res.code != 0 {
		t.Fatalf("run: exit %d: %s", res.code, res.stderr)
	}
	path := filepath.Join(dir, "run.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return path, doc
}

// writeJSON writes doc as a run.json in a folder of its own.
func writeJSON(t *testing.T, doc any) string {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// An edited run.json whose words land in shell commands, C code or array indices is refused by every
// command that reads results: a stage that closes the C string (it compiled to a program calling system()),
// a negative device index (check panicked), a variable name holding a shell command (pasted with the
// reproduce line, it ran).
func TestEditedResultsThatWouldInjectAreRefused(t *testing.T) {
	_, base := failedRun(t)
	edits := map[string]func(doc map[string]any){
		"a stage that closes the C string": func(doc map[string]any) {
			ff := doc["strategies"].([]any)[0].(map[string]any)["first_failure"].(map[string]any)
			ff["stage"] = `create\n", ""); system("id"); printf("%s`
		},
		"a negative device index": func(doc map[string]any) {
			doc["config"].(map[string]any)["devices"] = []any{-1}
		},
		"a variable name holding a command": func(doc map[string]any) {
			doc["environment"].(map[string]any)["env_vars"] = map[string]any{"POCL_A;touch /tmp/pwned;B": "1"}
		},
		// Words shown as they are, in tables, CSV cells, chart text and labels: only the tool's own may load.
		"a strategy holding an escape sequence": func(doc map[string]any) {
			doc["strategies"].([]any)[0].(map[string]any)["strategy"] = "shared\x1b]0;pwned\x07"
		},
		"a touch holding a formula": func(doc map[string]any) {
			doc["config"].(map[string]any)["touch"] = "=HYPERLINK(\"x\")"
		},
		"a code name holding a bidirectional control": func(doc map[string]any) {
			doc["strategies"].([]any)[0].(map[string]any)["first_failure"].(map[string]any)["name"] = "CL_\u202eOK"
		},
		"a device cost keyed by a word": func(doc map[string]any) {
			doc["strategies"].([]any)[0].(map[string]any)["device_bytes_per_buffer"] = map[string]any{"<b>": 1}
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			var doc map[string]any
			b, _ := json.Marshal(base)
			_ = json.Unmarshal(b, &doc)
			edit(doc)
			path := writeJSON(t, doc)
			out := t.TempDir()
			for _, args := range [][]string{
				{"report", "--format", "repro", path},
				{"report", "--format", "markdown", path},
				{"merge", path},
				{"check", "--expect", path, "--budget", "10s"},
				{"bundle", "--output", filepath.Join(out, "t.tar.gz"), path},
			} {
				res := runTool(t, FaultEnv(t), args...)
				oneLineError(t, res, exitUsage, "")
				if strings.Contains(res.stdout, "system(") || strings.Contains(res.stdout, "pwned") {
					t.Errorf("%v printed the injected text: %s", args, res.stdout)
				}
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("bundle left %d files", len(entries))
			}
		})
	}
}

// A variable in the environment whose name is not a name (the environment may hold any string before its
// '=') is not recorded, so no report pastes it into a command.
func TestVariablesThatAreNotNamesAreNotRecorded(t *testing.T) {
	const bad = "POCL_A;touch /tmp/pwned;B"
	path, doc := failedRun(t, bad+"=1", "POCL_GOOD=2")
	vars := doc["environment"].(map[string]any)["env_vars"].(map[string]any)
	if _, ok := vars[bad]; ok {
		t.Errorf("recorded %q", bad)
	}
	if vars["POCL_GOOD"] != "2" {
		t.Errorf("POCL_GOOD is a name and should be recorded: %v", vars)
	}
	md := runTool(t, Env(), "report", "--format", "markdown", path)
	if md.code != 0 || strings.Contains(md.stdout, "pwned") || !strings.Contains(md.stdout, "POCL_GOOD=2") {
		t.Errorf("exit %d; the reproduce line must carry POCL_GOOD=2 and nothing of %q", md.code, bad)
	}
}

// Outputs are replaced by a rename, so a device, a FIFO or a link to one must be refused, not replaced (as
// root, --output /dev/null replaced the system's /dev/null with a plain file); nor may an output be the
// command's own input.
func TestOutputsThatMustNotBeReplaced(t *testing.T) {
	run, _ := failedRun(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	devLink := filepath.Join(dir, "null-link")
	if err := os.Symlink("/dev/null", devLink); err != nil {
		t.Fatal(err)
	}
	exp := filepath.Join(dir, "expect.json")
	if res := runTool(t, Env(), "check", "--record", "--output", exp, run); res.code != 0 {
		t.Fatalf("check --record: exit %d: %s", res.code, res.stderr)
	}
	for _, target := range []string{fifo, devLink} {
		for _, args := range [][]string{
			{"report", "--format", "markdown", "--output", target, run},
			{"merge", "--output", target, run},
			{"bundle", "--output", target, run},
			{"check", "--record", "--output", target, run},
			{"check", "--expect", exp, "--budget", "10s", "--prom", target},
		} {
			res := runTool(t, FaultEnv(t, hostBudget(40)), args...)
			oneLineError(t, res, exitUsage, "")
		}
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}
	if st, err := os.Lstat(devLink); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to /dev/null was replaced: %v", err)
	}
	before, _ := os.ReadFile(run)
	for _, args := range [][]string{
		{"report", "--format", "json", "--output", run, run},
		{"merge", "--format", "json", "--output", run, filepath.Dir(run)},
		{"check", "--record", "--output", run, run},
	} {
		res := runTool(t, Env(), args...)
		oneLineError(t, res, exitUsage, "is the input")
	}
	if after, _ := os.ReadFile(run); !bytes.Equal(before, after) {
		t.Error("an input was overwritten by its own command")
	}
	for _, name := range []string{"ticket.zip", "ticket.json", "ticket"} {
		res := runTool(t, Env(), "bundle", "--output", filepath.Join(dir, name), run)
		oneLineError(t, res, exitUsage, "gzip-compressed tar")
	}
	// An input of merge that does not load is still an input.
	broken := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(broken, []byte("{\"schema_version\": 2}"), 0o644); err != nil {
		t.Fatal(err)
	}
	oneLineError(t, runTool(t, Env(), "merge", "--output", broken, run, broken), exitUsage, "is the input")
	if b, _ := os.ReadFile(broken); string(b) != "{\"schema_version\": 2}" {
		t.Errorf("merge overwrote an input that did not load: %q", b)
	}
	// run --prom cannot be one of run --out's own files.
	out := t.TempDir()
	oneLineError(t, runTool(t, FaultEnv(t), "run", "--max-allocs", "10", "--out", out, "--prom", filepath.Join(out, "run.json")), exitUsage, "own run.json")
	// A FIFO where a result file goes is not an old result: even --force refuses it, before any job runs.
	if err := syscall.Mkfifo(filepath.Join(out, "samples.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	oneLineError(t, runTool(t, FaultEnv(t), "run", "--max-allocs", "10", "--out", out, "--force"), exitUsage, "a FIFO")
	if st, err := os.Lstat(filepath.Join(out, "samples.jsonl")); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO in --out was replaced: %v", err)
	}
}

// A file named twice (a folder and the run.json in it) is one node, not two: counted twice it moved the
// median and the outliers.
func TestMergeCountsAFileOnce(t *testing.T) {
	run, _ := failedRun(t)
	res := runTool(t, Env(), "merge", "--format", "json", filepath.Dir(run), run, run)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var f struct {
		Results int `json:"results"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &f); err != nil || f.Results != 1 {
		t.Errorf("results %d (%v), want 1", f.Results, err)
	}
	if table := runTool(t, Env(), "merge", run, run); !strings.Contains(table.stdout, "1 result in") {
		t.Errorf("the header should say 1 result: %s", table.stdout)
	}
	// One unusable input is one line, not that line and a summary.
	oneLineError(t, runTool(t, Env(), "merge", filepath.Join(t.TempDir(), "missing")), exitUsage, "missing")
}

// A FIFO nobody writes into, given as expectations or as a result, ends at once (check hung past its budget).
func TestFIFOInputEndsAtOnce(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "--expect", fifo, "--budget", "5s"}, {"report", fifo}, {"merge", fifo}} {
		start := time.Now()
		res := runTool(t, FaultEnv(t), args...)
		oneLineError(t, res, exitUsage, "")
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%v took %s", args, took)
		}
	}
}

// A FIFO held open by a writer that never writes: check refuses it at once (it must end within its budget).
func TestCheckRefusesAFIFOHeldOpen(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			<-done
			f.Close()
		}
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	oneLineError(t, runTool(t, FaultEnv(t), "check", "--expect", fifo, "--budget", "5s"), exitUsage, "not a plain file")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s", took)
	}
	// The writer is waiting for a reader; let it through.
	if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

// feed writes b into the FIFO from a writer that opens it first, as with <(cat run.json), and returns once
// that writer is waiting for its reader.
func feed(fifo string, b []byte) {
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, _ = f.Write(b)
			f.Close()
		}
	}()
	time.Sleep(200 * time.Millisecond)
}

// A result read through a pipe (process substitution) still loads, and a bundle made from one holds the
// bytes that were read and checked (it read its input twice, and bundled an empty run.json).
func TestResultThroughAPipe(t *testing.T) {
	run, _ := failedRun(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(run)
	feed(fifo, b)
	res := runTool(t, Env(), "report", "--format", "json", fifo)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var r result.Run
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || len(r.Jobs) != 2 {
		t.Errorf("the result through the pipe: %v, %d strategies", err, len(r.Jobs))
	}
	feed(fifo, b)
	tarball := filepath.Join(dir, "t.tar.gz")
	if res := runTool(t, Env(), "bundle", "--keep-identity", "--output", tarball, fifo); res.code != 0 {
		t.Fatalf("bundle from a pipe: exit %d: %s", res.code, res.stderr)
	}
	found := false
	for name, body := range untar(t, tarball) {
		if filepath.Base(name) == "run.json" {
			found = true
			if !bytes.Equal(body, b) {
				t.Errorf("the bundle's run.json is %d bytes, not the %d read", len(body), len(b))
			}
		}
	}
	if !found {
		t.Error("the bundle holds no run.json")
	}
}
