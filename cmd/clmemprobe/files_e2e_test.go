package main

// What the tool writes and reads: results are never lost, never written through a symlink, never left
// half written, and carry no secret.

import (
	"bufio"
	"bytes"
	"encoding/json"

	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clmemprobe/clmemprobe/cmd/clmemprobe/internal/safefile"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// quickRun is a run on faultcl that takes a moment: two strategies, 200 buffers each.
var quickRun = []string{"--strategies", "shared,per-device", "--max-allocs", "200"}

// noTemporaryFiles checks that no temporary file of the tool is left in dir: a hidden name, as safefile's
// renameio gives them ("." and the file's name before its random part), other than a folder's lock.
func noTemporaryFiles(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != safefile.LockName {
			t.Errorf("a temporary file was left behind: %s", e.Name())
		}
	}
}

// A re-run with --force killed part way leaves a whole run.json (the new, partial one) and no chart or
// timeline of the old result beside it.
func TestForcedRerunKilledLeavesNoHalfFile(t *testing.T) {
	env := FaultEnv(t, "FAULTCL_SLOW_US=1000")
	dir := t.TempDir()
	if res := runTool(t, FaultEnv(t), append([]string{"run", "--out", dir}, quickRun...)...); res.code != 0 {
		t.Fatalf("first run: exit %d: %s", res.code, res.stderr)
	}
	cmd, _ := startRun(t, env, dir, "--force", "--max-allocs", "100000", "--strategies", "shared,per-device")
	workerOf(t, cmd.Process.Pid, map[int]bool{}) // the run has begun its files before it starts a worker
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	r, err := result.Load(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatalf("run.json after a kill: %v", err)
	}
	if !r.Partial {
		t.Errorf("the run.json left by a killed run must be the new partial one")
	}
	for _, name := range []string{"run.png", "timeline.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("the old result's %s stands beside the new run.json", name)
		}
	}
}

func TestTwoRunsIntoOneFolder(t *testing.T) {
	dir := t.TempDir()
	first, out := startRun(t, FaultEnv(t, "FAULTCL_SLOW_US=1000"), dir, "--max-allocs", "1500", "--strategies", "shared")
	workerOf(t, first.Process.Pid, map[int]bool{})
	second := runTool(t, FaultEnv(t), append([]string{"run", "--force", "--out", dir}, quickRun...)...)
	oneLineError(t, second, exitUsage, "another clmemprobe command is writing into it")
	if err := first.Wait(); err != nil {
		t.Fatalf("the first run: %v\n%s", err, out)
	}
	r, err := result.Load(filepath.Join(dir, "run.json"))
	if err != nil || len(r.Jobs) != 1 || r.Jobs[0].AllocationsOK != 1500 {
		t.Fatalf("the first run's result: %v %+v", err, r)
	}
	lines, _ := os.ReadFile(filepath.Join(dir, "samples.jsonl"))
	for i, l := range bytes.Split(bytes.TrimSpace(lines), []byte("\n")) {
		if !json.Valid(l) {
			t.Fatalf("samples.jsonl line %d is not JSON: %q", i+1, l)
		}
	}
}

// Symlinks planted in the output folder, or at report --output, are replaced, never followed: the files
// they point to stay byte for byte as they were.
func TestPlantedSymlinksAreNotFollowed(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	targets := map[string]string{}
	for _, name := range []string{"run.json", "run.png", "samples.jsonl", "report.md"} {
		target := filepath.Join(outside, "precious-"+name)
		if err := os.WriteFile(target, []byte("do not touch "+name), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		targets[target] = "do not touch " + name
	}
	res := runTool(t, FaultEnv(t), append([]string{"run", "--force", "--out", dir}, quickRun...)...)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	if res := runTool(t, FaultEnv(t), "report", "--format", "markdown", "--output", filepath.Join(dir, "report.md"), filepath.Join(dir, "run.json")); res.code != 0 {
		t.Fatalf("report --output: exit %d: %s", res.code, res.stderr)
	}
	for target, want := range targets {
		if b, err := os.ReadFile(target); err != nil || string(b) != want {
			t.Errorf("%s was written through a symlink: %q", target, b)
		}
	}
	for _, name := range []string{"run.json", "run.png", "samples.jsonl", "report.md"} {
		if st, err := os.Lstat(filepath.Join(dir, name)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s: %v, want a regular file in place of the symlink", name, err)
		}
	}
}

// Every file is mode 0644 whatever the umask.
func TestFilesAreMode0644UnderUmask000(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", `umask 000; exec "$0" "$@"`, Binary(t), "run", "--out", dir, "--strategies", "shared", "--max-allocs", "50")
	cmd.Env = FaultEnv(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	report := filepath.Join(dir, "report.md")
	cmd = exec.Command("sh", "-c", `umask 000; exec "$0" "$@"`, Binary(t), "report", "--format", "markdown", "--output", report, filepath.Join(dir, "run.json"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, name := range []string{"run.json", "run.png", "samples.jsonl", "report.md"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v (%v), want 0644", name, st.Mode().Perm(), err)
		}
	}
}

// smallDisk mounts a tmpfs of the given size on a new folder; only root may, so it skips elsewhere.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0777", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (it needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill leaves about free bytes on the file system of dir.
func fill(t *testing.T, dir string, free int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	avail := int64(st.Bavail) * st.Bsize
	if avail <= free {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "filler"), make([]byte, avail-free), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A disk that fills up during a run: run.json stays the last version that could be written, no file is
// left with half a record, the remaining strategies still run, the table still reaches stdout, and the
// command ends with one line and exit code 4.
func TestFullDiskKeepsTheLastWholeResult(t *testing.T) {
	disk := smallDisk(t, "256k")
	dir := filepath.Join(disk, "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fill(t, disk, 24<<10)
	res := runTool(t, FaultEnv(t, "FAULTCL_SLOW_US=2000"), "run", "--out", dir, "--strategies", "shared,per-device,migrate-first",
		"--max-allocs", "250", "--sample-interval", "1ms")
	oneLineError(t, res, exitOutput, "could not write")
	for _, s := range []string{"shared", "per-device", "migrate-first"} {
		if !strings.Contains(res.stdout, "│ "+s+" ") {
			t.Errorf("the table on stdout lacks %s:\n%s", s, res.stdout)
		}
	}
	if _, err := result.Load(filepath.Join(dir, "run.json")); err != nil {
		t.Errorf("run.json must stay the last whole version: %v", err)
	}
	f, err := os.Open(filepath.Join(dir, "samples.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	lines := 0
	for sc.Scan() {
		lines++
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("samples.jsonl line %d is cut: %q", lines, sc.Text())
		}
	}
	if lines == 0 {
		t.Errorf("samples.jsonl holds no sample at all")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "run.png")); err == nil {
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("run.png is cut: %v", err)
		}
	}
	noTemporaryFiles(t, dir)
}

// A full temporary folder, where the progress page lives, is one line, not a SIGBUS.
func TestFullTmpdirIsOneLine(t *testing.T) {
	disk := smallDisk(t, "64k")
	fill(t, disk, 0)
	oneLineError(t, runTool(t, append(FaultEnv(t), "TMPDIR="+disk), "devices"), exitOutput, "TMPDIR")
}

func TestStdoutThatCannotBeWrittenIsExitCode4(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer full.Close()
	for _, format := range []string{"json", "table", "markdown"} {
		cmd := exec.Command(Binary(t), "run", "--strategies", "shared", "--max-allocs", "20", "--format", format)
		cmd.Env = FaultEnv(t)
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = full, &errb
		err := cmd.Run()
		oneLineError(t, invocation{"", errb.String(), exitOf(err)}, exitOutput, "cannot write the output")
	}
}

// Secrets never reach run.json or the Markdown report; the runtime variables that are recorded keep their
// values unless their names mark a secret.
func TestSecretsStayOutOfReports(t *testing.T) {
	const apiKey, token = "nvapi-0123456789abcdef", "pocl-token-fedcba9876543210"
	env := FaultEnv(t, "NVIDIA_API_KEY="+apiKey, "POCL_AUTH_TOKEN="+token, "POCL_DEVICES=pthread")
	_, res, dir := runOut(t, env, "--strategies", "shared", "--max-allocs", "20")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	md := runTool(t, env, "report", filepath.Join(dir, "run.json"), "--format", "markdown")
	for _, doc := range []string{string(raw), md.stdout} {
		for _, secret := range []string{apiKey, token} {
			if strings.Contains(doc, secret) {
				t.Errorf("a secret reached the report: %q", secret)
			}
		}
		if !strings.Contains(doc, "POCL_AUTH_TOKEN") || !strings.Contains(doc, "redacted") || !strings.Contains(doc, "POCL_DEVICES") {
			t.Errorf("the recorded variables should list POCL_DEVICES and POCL_AUTH_TOKEN (redacted)")
		}
	}
}

// Files written by hand or by another tool that contradict themselves render, or are refused with one line
// and exit 2, in every format; never a panic.
func TestInconsistentFilesInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"failed without first_failure": `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":1048576,"outcome":"failed","allocations_ok":5,"samples":[]}]}`,
		"size 0":                       `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":0,"outcome":"completed","allocations_ok":5,"samples":[]}]}`,
		"indices near 2^53":            `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":1,"outcome":"completed","allocations_ok":9007199254740990,"samples":[{"index":9007199254740980,"t":1},{"index":9007199254740990,"t":2}],"samples_total":2}]}`,
		"indices near 2^64":            `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":1,"outcome":"completed","allocations_ok":18446744073709551615,"samples":[]}]}`,
		"NaN":                          `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":1,"outcome":"completed","host_bytes_per_buffer":"NaN","samples":[]}]}`,
		"negative count":               `{"schema_version":1,"tool":{"name":"clmemprobe"},"strategies":[{"strategy":"shared","size_bytes":1,"outcome":"completed","allocations_ok":-3,"samples":[]}]}`,
		"huge count and one sample":    `{"schema_version":1,"tool":{"name":"clmemprobe"},"devices":[{"index":0,"global_mem_bytes":1}],"strategies":[{"strategy":"shared","devices":[0],"size_bytes":1,"outcome":"failed","allocations_ok":0,"first_failure":{"index":0,"stage":"create","device":0},"samples":[]},{"strategy":"shared","devices":[0],"size_bytes":9007199254740992,"outcome":"completed","allocations_ok":9007199254740992,"samples":[]}]}`,
	}
	for name, content := range files {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"table", "json", "markdown", "csv", "png", "svg"} {
			res := runTool(t, Env(), "report", "--format", format, "--output", filepath.Join(dir, "out."+format), path)
			if strings.Contains(res.stderr, "panic") || strings.Contains(res.stderr, "goroutine") {
				t.Fatalf("%s as %s: %s", name, format, res.stderr)
			}
			if res.code == exitUsage {
				oneLineError(t, res, exitUsage, "not a clmemprobe result")
			} else if res.code != 0 {
				t.Errorf("%s as %s: exit %d: %s", name, format, res.code, res.stderr)
			}
		}
		if res := runTool(t, Env(), "compare", path, path); res.code != 0 && res.code != exitUsage {
			t.Errorf("compare of %s: exit %d: %s", name, res.code, res.stderr)
		}
	}
}
