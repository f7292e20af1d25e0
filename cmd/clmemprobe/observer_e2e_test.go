package main

import (
	"os/exec"
	"strings"
	"testing"
)

// On a terminal the run shows a live line per strategy on stderr.
func TestProgressLineOnATerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed: no pseudo-terminal to test with")
	}
	env := PoCLEnv(t)
	cmd := exec.Command(script, "-qec", Binary(t)+" run --max-allocs 20000 --strategies shared,per-device", "/dev/null")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"\rshared", "buffers", "completed in"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("terminal output lacks %q:\n%q", want, out)
		}
	}
}
