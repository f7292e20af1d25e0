package main

// End-to-end tests of the bug ticket bundle writes (ISSUE.md): the real binary on PoCL in a real memory
// cgroup whose OOM killer ends the workers, read from the kernel's own log, and on the fault-injection
// runtime through the real ICD loader for a traced program's API log.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// bundleFiles runs bundle on a result and returns the files of the .tar.gz by name.
func bundleFiles(t *testing.T, env []string, args ...string) map[string]string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ticket.tar.gz")
	if res := runTool(t, env, append([]string{"bundle", "-q", "-o", out}, args...)...); res.code != 0 {
		t.Fatalf("bundle %v: exit %d, %s", args, res.code, res.stderr)
	}
	files := map[string]string{}
	for name, body := range untar(t, out) {
		files[name] = string(body)
	}
	return files
}

// dpkgVersion is the version dpkg-query gives for an installed package.
func dpkgVersion(t *testing.T, pkg string) string {
	t.Helper()
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	if err != nil || len(out) == 0 {
		skipOrFail(t, "dpkg-query knows no %s: %v", pkg, err)
	}
	return string(out)
}

// On PoCL in a 512 MiB memory cgroup with the guard off, every worker's fills outgrow the limit (2000
// buffers of 1 MiB against 512 MiB), so the cgroup's OOM killer ends each run: the ticket holds the kernel
// release and boot parameters as /proc has them, the packages with dpkg-query's versions, the kernel's OOM
// lines naming the killed worker's process id, "2 of 2" as the rate and the command in the steps; the verdict
// quotes the kernel's own line.
func TestTicketOfACgroupOOMKill(t *testing.T) {
	procs, _ := memoryCgroup(t, 512<<20)
	env := PoCLEnv(t)
	if _, err := os.Stat("/dev/kmsg"); err != nil {
		skipOrFail(t, "no /dev/kmsg: %v", err)
	}
	dir := t.TempDir()
	res := inCgroup(t, procs, env, "run", "--strategies", "shared", "--touch", "fill", "--max-allocs", "2000", "--host-reserve", "0", "--repeat", "2", "--out", dir, "-q")
	if res.code != exitWorkerFault {
		t.Fatalf("exit %d, want %d (the workers killed): %s", res.code, exitWorkerFault, res.stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r result.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	s := r.Jobs[0]
	if len(s.Repeats) != 1 || s.WorkerPID <= 0 || s.Repeats[0].WorkerPID <= 0 || s.Repeats[0].WorkerPID == s.WorkerPID {
		t.Fatalf("job: pid %d, repeats %+v; want one repeat in another worker", s.WorkerPID, s.Repeats)
	}
	files := bundleFiles(t, env, dir)
	issue := files["ISSUE.md"]
	release, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	cmdline, _ := os.ReadFile("/proc/cmdline")
	firstParam := strings.Fields(string(cmdline))[0]
	for _, want := range []string{
		"Kernel: " + strings.TrimSpace(string(release)),
		"Boot parameters: " + firstParam,
		"| pocl-opencl-icd | " + dpkgVersion(t, "pocl-opencl-icd") + " |",
		"| ocl-icd-libopencl1 | " + dpkgVersion(t, "ocl-icd-libopencl1") + " |",
		"Killed process " + strconv.Itoa(s.WorkerPID) + " (",
		"Killed process " + strconv.Itoa(s.Repeats[0].WorkerPID) + " (",
		"2 of 2 runs",
		"run --strategies shared --touch fill --max-allocs 2000 --host-reserve 0 --repeat 2",
	} {
		if !strings.Contains(issue, want) {
			t.Errorf("ISSUE.md lacks %q:\n%s", want, issue)
		}
	}
	if !strings.Contains(files["kernel-log.txt"], "Killed process "+strconv.Itoa(s.WorkerPID)) {
		t.Errorf("kernel-log.txt lacks the kill:\n%s", files["kernel-log.txt"])
	}
	// The verdict quotes the kernel: its line names the first worker's process id.
	report := runTool(t, env, "report", dir)
	if !strings.Contains(report.stdout, `the kernel logged "Memory cgroup out of memory: Killed process `+strconv.Itoa(s.WorkerPID)) {
		t.Errorf("the verdict does not quote the kernel's line:\n%s", report.stdout)
	}
	// The host's name is not in the bundle's result, unless asked for.
	host := func(runJSON string) string {
		var r result.Run
		if err := json.Unmarshal([]byte(runJSON), &r); err != nil || r.Environment == nil {
			t.Fatalf("the bundle's run.json: %v", err)
		}
		return r.Environment.Hostname
	}
	if got := host(files["run.json"]); got != result.HostPlaceholder {
		t.Errorf("the bundle's run.json names the host %q", got)
	}
	if got, want := host(bundleFiles(t, env, "--keep-identity", dir)["run.json"]), r.Environment.Hostname; got != want || want == "" {
		t.Errorf("--keep-identity: host %q, want %q", got, want)
	}
}

// A traced program on faultcl whose 300th create fails: trace --calls keeps its calls, and the bundle's
// ticket shows them around the failure, the failed call marked, with every kept call in api-calls.log.
func TestTicketOfATraceHasTheAPILog(t *testing.T) {
	env := FaultEnv(t, "FAULTCL_OOR_AT=300")
	dir := t.TempDir()
	res := runTool(t, traceEnv(env), "trace", "-q", "--calls", "--out", dir, "--", Traceprog(t), "loop", "4096")
	idx, code := printedFailure(t, res.stdout)
	files := bundleFiles(t, env, dir)
	issue := files["ISSUE.md"]
	failed := "#" + strconv.FormatUint(idx, 10)
	line := ""
	for _, l := range strings.Split(issue, "\n") {
		if strings.Contains(l, "<- the first failure") {
			line = l
		}
	}
	if !strings.Contains(line, failed) || !strings.Contains(line, "clCreateBuffer(context 0, read-write, 4096) = "+strconv.Itoa(int(code))) {
		t.Errorf("the failed call's line %q; the program printed index %d code %d", line, idx, code)
	}
	if !strings.Contains(issue, "clCreateContext(2 devices) = CL_SUCCESS") {
		t.Errorf("the context's create is not in the ticket:\n%s", issue)
	}
	// The log counts every create before the failure, however the tool's reads cut them into runs.
	var before uint64
	for _, l := range strings.Split(files["api-calls.log"], "\n") {
		if !strings.Contains(l, "clCreateBuffer(context 0, read-write, 4096) = CL_SUCCESS") {
			continue
		}
		n := uint64(1)
		if _, count, ok := strings.Cut(l, " x"); ok {
			n, _ = strconv.ParseUint(strings.TrimSpace(count), 10, 64)
		}
		before += n
	}
	if before != idx {
		t.Errorf("api-calls.log counts %d creates before the failure, the program %d:\n%s", before, idx, files["api-calls.log"])
	}
	if !strings.Contains(files["api-calls.log"], "<- the first failure") {
		t.Errorf("api-calls.log:\n%s", files["api-calls.log"])
	}
}

// --baseline fills the regression fields from an earlier run of the same jobs on faultcl: one where the
// loop completed is the last working one; one of another touch is refused, as it measured something else.
func TestTicketRegressionFromABaseline(t *testing.T) {
	_, _, good := runOut(t, FaultEnv(t), "--strategies", "shared", "--max-allocs", "300", "-q")
	_, _, bad := runOut(t, FaultEnv(t, "FAULTCL_OOR_AT=100"), "--strategies", "shared", "--max-allocs", "300", "-q")
	_, _, other := runOut(t, FaultEnv(t), "--strategies", "shared", "--max-allocs", "300", "--touch", "fill", "-q")
	issue := bundleFiles(t, Env(), "--baseline", good, bad)["ISSUE.md"]
	// Both ran the same driver: the ticket says so rather than claim a regression.
	if !strings.Contains(issue, "Not a driver regression: the baseline ran the same driver") {
		t.Errorf("regression fields:\n%s", issue)
	}
	out := filepath.Join(t.TempDir(), "x.tar.gz")
	oneLineError(t, runTool(t, Env(), "bundle", "-o", out, "--baseline", other, bad), exitUsage, "--touch fill")
	oneLineError(t, runTool(t, Env(), "bundle", "-o", out, "--baseline", filepath.Join(t.TempDir(), "none"), bad), exitUsage, "--baseline")
}
