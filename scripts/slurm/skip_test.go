package slurm

// test.sh decides, before it installs or starts anything, whether this machine can host slurmd: without a
// cgroup file system it cannot, and the test says so and is skipped, unless CLMEMPROBE_REQUIRE_SLURM=1
// asks for it (CI as root), which makes it fail.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testScript runs test.sh with a cgroup root that is not a mount, and stubs on PATH that stand in for
// Slurm and Go: a script that went on past the decision would reach them and leave its mark.
func testScript(t *testing.T, extra ...string) (string, int, bool) {
	t.Helper()
	stubs, mark := t.TempDir(), filepath.Join(t.TempDir(), "went-on")
	for _, name := range []string{"slurmctld", "slurmd", "sbatch", "munged", "go", "apt-get"} {
		stub := "#!/bin/sh\ntouch " + mark + "\nexit 0\n"
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(here(), "test.sh"))
	cmd.Env = append([]string{"PATH=" + stubs + ":/usr/bin:/bin", "CLMEMPROBE_TOOLCHAIN=/nonexistent",
		"CLMEMPROBE_CGROUP_ROOT=" + t.TempDir()}, extra...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	_, statErr := os.Stat(mark)
	return out.String(), code, statErr == nil
}

func TestSkippedWithoutCgroups(t *testing.T) {
	out, code, wentOn := testScript(t)
	if code != 0 || wentOn || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.HasPrefix(out, "slurm: skipped the Slurm recipe test: no cgroup file system mounted on ") ||
		!strings.HasSuffix(out, ", which slurmd needs (a container without one cannot host it)\n") {
		t.Errorf("exit %d, went on %v, output %q: want one line saying the test is skipped for want of cgroups", code, wentOn, out)
	}
	out, code, wentOn = testScript(t, "CLMEMPROBE_REQUIRE_SLURM=1")
	if code == 0 || wentOn || !strings.HasPrefix(out, "slurm: no cgroup file system mounted on ") ||
		!strings.HasSuffix(out, ", so slurmd cannot run here; CLMEMPROBE_REQUIRE_SLURM=1 asks for the test\n") {
		t.Errorf("with CLMEMPROBE_REQUIRE_SLURM=1: exit %d, went on %v, output %q: want a failure that says why", code, wentOn, out)
	}
	// Where cgroups are mounted, the script goes on to Slurm (here its stubs).
	if mounts, err := os.ReadFile("/proc/self/mounts"); err == nil && slices.ContainsFunc(strings.Split(string(mounts), "\n"), func(l string) bool {
		f := strings.Fields(l)
		return len(f) > 1 && strings.HasPrefix(f[1], "/sys/fs/cgroup")
	}) {
		if out, code, wentOn := testScript(t, "CLMEMPROBE_CGROUP_ROOT=/sys/fs/cgroup"); !wentOn || strings.HasPrefix(out, "slurm: skipped") {
			t.Errorf("with cgroups mounted: exit %d, went on %v, output %q: want it to go on to Slurm", code, wentOn, out)
		}
	}
}
