package sample

import (
	"path/filepath"
	"testing"
)

func TestOOMKillsReadsVmstat(t *testing.T) {
	n, err := Under("testdata").OOMKills()
	if err != nil || n != 7 {
		t.Errorf("OOMKills() = %d, %v; want the fixture's oom_kill 7", n, err)
	}
	// A kernel before 4.13 has no such line; a missing file is an error too: neither is a count of 0.
	if _, err := Under(filepath.Join("testdata", "cgroup-none")).OOMKills(); err == nil {
		t.Error("OOMKills() without /proc/vmstat gave no error")
	}
}
