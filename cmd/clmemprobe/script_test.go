package main

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The end-to-end cases that are a command line and what it must answer are scripts in testdata/script,
// one file per behaviour (testscript's txtar format, as age writes its CLI tests): each runs the real
// command line, `clmemprobe`, on PoCL's two CPU devices or, where a script sets OCL_ICD_VENDORS=$FAULTCL, on
// the fault-injection runtime through the real ICD loader. Besides testscript's own commands they have
// `exits CODE PROGRAM ARGS...` (the program must end with that exit code; its output is kept for stdout
// and stderr) and `oneline` (the last stderr is one clmemprobe: line, without a stack trace).
func TestScripts(t *testing.T) {
	pocl := PoCLEnv(t)
	fault := FaultCL(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			for _, kv := range pocl {
				if k, v, ok := strings.Cut(kv, "="); ok && (k == "POCL_DEVICES" || k == "OCL_ICD_VENDORS" || k == "LANG") {
					e.Setenv(k, v)
				}
			}
			e.Setenv("FAULTCL", fault)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":   exitsCmd,
			"oneline": onelineCmd,
		},
	})
}

// exitsCmd runs a program and wants the exit code it was given.
func exitsCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit code", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d; stderr:\n%s", args[1], got, want, ts.ReadFile("stderr"))
	}
}

// onelineCmd wants the last command's stderr to be one line that starts "clmemprobe:", with no panic or
// goroutine dump in it.
func onelineCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: oneline")
	}
	msg := strings.TrimSpace(ts.ReadFile("stderr"))
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "clmemprobe:") {
		ts.Fatalf("want one line starting clmemprobe:, got %q", msg)
	}
	if strings.Contains(msg, "panic") || strings.Contains(msg, "goroutine") {
		ts.Fatalf("a stack trace on stderr: %q", msg)
	}
}
