package main

// Every output a command writes is checked before its work, and what cannot be written at the end anyway
// is said: the scripts in testdata/script/output_checked_first_*.txtar hold each command to a folder that
// takes no file (/proc), a missing folder and a file where the folder goes; these tests add a read-only
// mount, which a script cannot make, and a disk that fills while the command works.

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readOnlyDisk mounts an empty read-only tmpfs: a folder that refuses every new file, root's too, where
// a folder's mode bits would not stop root. It skips where mounting needs a privilege the test lacks.
func readOnlyDisk(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a read-only tmpfs here (it needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// Into a read-only folder, every output flag of every command is refused with exit 4 and one line that
// names the flag and the read-only file system, before any work: the OpenCL library named does not exist,
// so a command that loaded the runtime first would end with 3, and a trace that started its program would
// leave its mark.
func TestReadOnlyFolderRefusedBeforeWork(t *testing.T) {
	ro := readOnlyDisk(t)
	work := t.TempDir()
	run, _ := failedRun(t)
	exp := filepath.Join(work, "expect.json")
	if res := runTool(t, Env(), "check", "--record", "--output", exp, run); res.code != 0 {
		t.Fatalf("check --record: exit %d: %s", res.code, res.stderr)
	}
	mark := filepath.Join(work, "ran")
	noLib := []string{"--opencl-lib", "/nonexistent/libOpenCL.so"}
	in := func(name string) string { return filepath.Join(ro, name) }
	for _, c := range []struct {
		flag string
		args []string
	}{
		{"--output", append([]string{"run", "-o", in("out.json")}, noLib...)},
		{"--prom", append([]string{"run", "--prom", in("run.prom")}, noLib...)},
		{"--out", append([]string{"run", "--out", ro}, noLib...)},
		{"--out", append([]string{"run", "--out", in("sub")}, noLib...)},
		{"--output", append([]string{"largest", "-o", in("out.json")}, noLib...)},
		{"--output", append([]string{"remedy", "-o", in("out.json")}, noLib...)},
		{"--output", append([]string{"exchange", "-o", in("out.json")}, noLib...)},
		{"--output", append([]string{"devices", "-o", in("out.json")}, noLib...)},
		{"--output", []string{"env", "-o", in("env.txt")}},
		{"--output", []string{"trace", "-o", in("trace.txt"), "--", "touch", mark}},
		{"--out", []string{"trace", "--out", ro, "--", "touch", mark}},
		{"--prom", append([]string{"check", "--expect", exp, "--prom", in("check.prom")}, noLib...)},
		{"--output", []string{"check", "--record", "-o", in("expect.json"), run}},
		{"--output", []string{"report", "-o", in("report.md"), run}},
		{"--output", []string{"compare", "-o", in("compare.txt"), run, run}},
		{"--output", []string{"merge", "-o", in("fleet.txt"), run}},
		{"--output", []string{"bundle", "--output", in("ticket.tar.gz"), run}},
	} {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			res := runTool(t, Env(), c.args...)
			oneLineError(t, res, exitOutput, "read-only file system")
			if !strings.HasPrefix(res.stderr, "clmemprobe: "+c.flag+" ") {
				t.Errorf("the line does not start with the flag %s: %q", c.flag, res.stderr)
			}
			if res.stdout != "" {
				t.Errorf("stdout %q, want nothing", res.stdout)
			}
		})
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("trace started its program before it found its output unwritable")
	}
}

// A disk that is full by the end of a run (the check before it found a folder that takes a file: an empty
// one takes no space) is said in one line, exit 4, naming every file that could not be written; the run
// itself is not lost from view, as its --out folder holds it.
func TestOutputsThatFillTheDiskAreSaid(t *testing.T) {
	disk := smallDisk(t, "64k")
	fill(t, disk, 0)
	out := t.TempDir()
	output, prom := filepath.Join(disk, "out.json"), filepath.Join(disk, "run.prom")
	res := runTool(t, FaultEnv(t), "run", "--strategies", "shared", "--max-allocs", "20", "--format", "json", "-o", output, "--prom", prom, "--out", out)
	// One line names both files and why neither was written.
	errorLine(t, res, exitOutput, "clmemprobe: cannot write "+prom+": no space left on device; cannot write "+output+": no space left on device")
	for _, name := range []string{output, prom} {
		if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is there after a failed write (%v)", name, err)
		}
	}
	noTemporaryFiles(t, disk)
	if _, err := os.Stat(filepath.Join(out, "run.json")); err != nil {
		t.Errorf("the --out folder on another disk lacks run.json: %v", err)
	}
}

// An exit code 4 is never silent: where a command returned it without words, a line still says that the
// output could not be written. Other codes without words say nothing more (the command said its verdict).
func TestExitCode4IsNeverSilent(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"4 without words", &exitError{exitOutput, nil}, "clmemprobe: could not write the output"},
		{"4 with words", outputErr("cannot write x.json: no space left on device"), "clmemprobe: cannot write x.json: no space left on device"},
		{"1 without words", &exitError{exitRegression, nil}, ""},
		{"no error", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			sayError(&b, c.err)
			got := strings.TrimSuffix(b.String(), "\n")
			if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) || strings.Contains(got, "\n") {
				t.Errorf("sayError(%v) wrote %q, want one line starting %q", c.err, b.String(), c.want)
			}
		})
	}
}
