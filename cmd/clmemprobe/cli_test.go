package main

// The command line's behaviour for bad input, run in this process through realMain (its children are this
// test binary): cheap enough for a long table. Every case must end with one line on stderr and its
// documented exit code.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inProcess runs the command line in this process with exactly the environment env.
func inProcess(t *testing.T, env []string, args ...string) invocation {
	t.Helper()
	saved := os.Environ()
	os.Clearenv()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	defer func() {
		os.Clearenv()
		for _, kv := range saved {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
	}()
	var out, errb bytes.Buffer
	code := realMain(append([]string{"clmemprobe"}, args...), &out, &errb)
	return invocation{out.String(), errb.String(), code}
}

func TestBadInputGetsOneClearLine(t *testing.T) {
	env := PoCLEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		args    []string
		mention string
	}{
		{"unknown strategy", []string{"run", "--strategies", "shared,bogus"}, "unknown strategy"},
		{"duplicate strategy", []string{"run", "--strategies", "shared,shared"}, "twice"},
		{"size without number", []string{"run", "--size", "MiB"}, "no number"},
		{"size with unknown unit", []string{"run", "--size", "12XB"}, "unknown unit"},
		{"zero size", []string{"run", "--size", "0"}, "at least 1 byte"},
		{"negative size", []string{"run", "--size", "-5MiB"}, "positive"},
		{"size over max allocation", []string{"run", "--size", overMaxAlloc(t, env), "--max-allocs", "1"}, "maximum allocation"},
		{"duplicate sweep sizes", []string{"run", "--sizes", "1MiB,4KiB,1024KiB"}, "listed twice"},
		{"byte budget below the size", []string{"run", "--size", "1MiB", "--max-bytes", "512KiB"}, "not one buffer"},
		{"zero count", []string{"run", "--max-allocs", "0"}, "positive"},
		{"negative count", []string{"run", "--max-allocs", "-3"}, "positive"},
		{"count not a number", []string{"run", "--max-allocs", "many"}, "max-allocs"},
		{"device that does not exist", []string{"run", "--devices", "7"}, "device 7 does not exist"},
		{"duplicate devices", []string{"run", "--devices", "0,0"}, "twice"},
		{"device not a number", []string{"run", "--devices", "x"}, "not a device index"},
		{"unknown platform index", []string{"run", "--platform", "9"}, "platform 9 does not exist"},
		{"unknown platform name", []string{"run", "--platform", "nosuchvendor"}, "no platform matches"},
		{"unwritable out", []string{"run", "--out", filepath.Join(file, "sub")}, "--out"},
		{"timeout that does not parse", []string{"run", "--timeout", "soon"}, "does not parse"},
		{"negative hang timeout", []string{"run", "--hang-timeout", "-1s"}, "positive"},
		{"setup timeout that does not parse", []string{"devices", "--setup-timeout", "later"}, "does not parse"},
		{"unknown touch", []string{"run", "--touch", "wiggle"}, "unknown touch"},
		{"unknown format", []string{"run", "--format", "xml"}, "format"},
		{"unknown flag, with the closest", []string{"run", "--formt", "json"}, "did you mean --format?"},
		{"unknown flag", []string{"run", "--bogus"}, "bogus"},
		{"unknown command, with the closest", []string{"reprot", "x.json"}, "did you mean report?"},
		{"unknown command", []string{"frobnicate"}, "frobnicate"},
		{"arguments to run", []string{"run", "extra"}, "no arguments"},
		{"report without a file", []string{"report"}, "exactly one RUN.json"},
		{"compare without files", []string{"compare"}, "two arguments"},
		{"compare with one file", []string{"compare", file}, "two arguments"},
		{"report of a missing file", []string{"report", "/nonexistent/run.json"}, "no such file"},
		{"report of a file that is not a result", []string{"report", file}, "not a clmemprobe result"},
		{"report of /dev/zero", []string{"report", "/dev/zero"}, "does not start with {"},
		{"report of a folder", []string{"report", dir}, "is a directory"},
		{"report format", []string{"report", "--format", "pdf", file}, "format"},
		{"report format after the file", []string{"report", file, "--format", "pdf"}, "format"},
		{"compare tolerance", []string{"compare", "--tolerance", "lots", file, file}, "percentage"},
		{"version with arguments", []string{"version", "x"}, "no arguments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			oneLineError(t, inProcess(t, env, c.args...), exitUsage, c.mention)
		})
	}
}

func TestVersionBothWays(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		res := inProcess(t, Env(), args...)
		if res.code != 0 || strings.TrimSpace(res.stdout) != "clmemprobe "+version {
			t.Errorf("%v: exit %d, %q", args, res.code, res.stdout)
		}
	}
}
