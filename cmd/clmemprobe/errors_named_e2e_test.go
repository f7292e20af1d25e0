package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Each bad input names what it was for (from the walk-through of issue 33): a result file that is not there
// names the argument and what to give; a device that does not exist names --devices; a size written with
// a space says so; -v means --verbose wherever it exists, and is no alias of --version.
func TestBadInputNamesWhatItWasFor(t *testing.T) {
	env := PoCLEnv(t)
	missing := filepath.Join(t.TempDir(), "nowhere", "run.json")
	for _, args := range [][]string{{"report", missing}, {"compare", missing, missing}, {"bundle", "-o", filepath.Join(t.TempDir(), "t.tar.gz"), missing}} {
		res := runTool(t, env, args...)
		oneLineError(t, res, exitUsage, missing+": no such file or folder")
		if strings.Contains(res.stderr, "open ") {
			t.Errorf("%v: the system call's words instead of the argument's: %q", args, res.stderr)
		}
	}
	oneLineError(t, runTool(t, env, "run", "--devices", "5", "--dry-run"), exitUsage, "--devices: device 5 does not exist")
	oneLineError(t, runTool(t, env, "run", "--size", "1.5", "MB", "--dry-run"), exitUsage, "write it without a space (--size 1.5MB) or quote it (--size '1.5 MB')")
	oneLineError(t, runTool(t, env, "run", "--dry-run", "extra"), exitUsage, "run takes no arguments")
	if res := runTool(t, env, "--version"); res.code != 0 || !strings.HasPrefix(res.stdout, "clmemprobe ") {
		t.Errorf("--version: exit %d, %q", res.code, res.stdout)
	}
	if res := runTool(t, env, "-v"); res.code != exitUsage {
		t.Errorf("-v before a command: exit %d, stdout %q; want a usage error (it is --verbose where it exists)", res.code, res.stdout)
	}
}

// The warning that the host guard is off names the flag as it was typed: "off" is not "0".
func TestHostReserveOffIsSaidAsTyped(t *testing.T) {
	for _, typed := range []string{"off", "0"} {
		res := runTool(t, FaultEnv(t), "run", "--host-reserve", typed, "--max-allocs", "10", "--strategies", "shared", "--format", "json")
		if !strings.Contains(res.stderr, "--host-reserve "+typed+": the host guard is off") {
			t.Errorf("--host-reserve %s: stderr %q", typed, res.stderr)
		}
	}
}

// A missing --expect file names the flag and says how to make one.
func TestMissingExpectationsSayWhatToDo(t *testing.T) {
	oneLineError(t, runTool(t, FaultEnv(t), "check", "--expect", filepath.Join(t.TempDir(), "nope.json")), exitUsage,
		"no such file; give the expectations file check --record wrote")
}
