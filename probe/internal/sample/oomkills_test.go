package sample

import (
	"path/filepath"
	"testing"
)

// TestOOMKillsReadsVmstat reads the kernel's count of OOM kills, and refuses to make one up.
func TestOOMKillsReadsVmstat(t *testing.T) {
	n, err := Under("testdata").OOMKills()
	if err != nil || n != 7 {
		t.Errorf("OOMKills() = %d, %v; want the fixture's oom_kill 7", n, err)
	}
	// A kernel before 4.13 has no such line, and a missing file is an error too: neither is a count of 0.
	for _, tree := range []string{"vmstat-old", "cgroup-none"} {
		if _, err := Under(filepath.Join("testdata", tree)).OOMKills(); err == nil {
			t.Errorf("OOMKills() under %s gave no error", tree)
		}
	}
}
