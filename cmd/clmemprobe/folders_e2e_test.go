package main

import (
	"path/filepath"
	"testing"
)

// A run's folder stands for its run.json in every command that reads a result: check --expect and bundle
// refused one (a walk-through on a fresh clone found them; report, compare and merge took it already).
func TestCheckAndBundleTakeARunsFolder(t *testing.T) {
	env := FaultEnv(t)
	_, _, dir := runOut(t, env, "--strategies", "shared", "--max-allocs", "50")
	if res := runTool(t, env, "check", "--expect", dir, "--time-limit", "20s"); res.code != exitOK {
		t.Errorf("check --expect DIR: exit %d: %s", res.code, res.stderr)
	}
	out := filepath.Join(t.TempDir(), "ticket.tar.gz")
	if res := runTool(t, env, "bundle", "--output", out, dir); res.code != exitOK {
		t.Errorf("bundle DIR: exit %d: %s", res.code, res.stderr)
	}
}
