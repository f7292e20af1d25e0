package main

// End-to-end tests of the bug ticket bundle writes (ISSUE.md): the real binary on PoCL in a real memory
// cgroup whose OOM killer ends the workers, read from the kernel's own log, and on the fault-injection
// runtime through the real ICD loader for a traced program's API log.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
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

// bundledRunOf is the run.json of a bundle's files.
func bundledRunOf(files map[string]string) (*result.Run, error) {
	return result.Decode(strings.NewReader(files["run.json"]), "run.json")
}

// bundleIssueOptions are the options bundle fills ISSUE.md of a run with, given the files it packed (in
// the order it packs them): the reproducer and the kernel's log where the bundle holds them.
func bundleIssueOptions(files map[string]string) report.IssueOptions {
	o := report.IssueOptions{Files: []string{"README.md"}}
	for _, name := range []string{"run.json", "report.md", "run.png", "run.svg", "timeline.json", "repro.c", "environment.txt", kernelLogFile} {
		if _, ok := files[name]; ok {
			o.Files = append(o.Files, name)
		}
	}
	_, o.HasRepro = files["repro.c"]
	if _, ok := files[kernelLogFile]; ok {
		o.KernelLogFile = kernelLogFile
	}
	return o
}

// bundledTraceIssue is the ISSUE.md bundle writes for the trace.json of a bundle's files, given the files
// it packed beside it (in the order it packs them).
func bundledTraceIssue(t *testing.T, files map[string]string) string {
	t.Helper()
	var tr result.Trace
	if err := json.Unmarshal([]byte(files["trace.json"]), &tr); err != nil {
		t.Fatalf("the bundle's trace.json: %v", err)
	}
	o := report.IssueOptions{}
	for _, name := range []string{"README.md", "report.md", "trace.json", "timeline.json", "repro.c", apiLogFile, profileEndFile, profileFailureFile, kernelLogFile} {
		if _, ok := files[name]; ok {
			o.Files = append(o.Files, name)
		}
	}
	_, o.HasRepro = files["repro.c"]
	if _, ok := files[apiLogFile]; ok {
		o.APILogFile = apiLogFile
	}
	if _, ok := files[kernelLogFile]; ok {
		o.KernelLogFile = kernelLogFile
	}
	return string(report.IssueTrace(findings.JudgeTrace(&tr), o))
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
	// What the ticket is filled from, in the bundle's run.json: the kernel release and boot parameters as
	// /proc has them, the packages at dpkg-query's versions, the OOM killer's lines naming both workers, two
	// runs that ended alike, the command of the steps. ISSUE.md is what IssueRun makes of it (its prose:
	// report's golden tickets); kernel-log.txt the kernel's window.
	bundled, err := bundledRunOf(files)
	if err != nil {
		t.Fatal(err)
	}
	release, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	cmdline, _ := os.ReadFile("/proc/cmdline")
	if e := bundled.Environment; e.Kernel != strings.TrimSpace(string(release)) || e.System == nil || strings.Fields(e.System.BootParameters)[0] != strings.Fields(string(cmdline))[0] {
		t.Errorf("kernel %q, system %+v; want /proc's release and boot parameters", e.Kernel, e.System)
	}
	for _, pkg := range []string{"pocl-opencl-icd", "ocl-icd-libopencl1"} {
		if !slices.ContainsFunc(bundled.Environment.System.Packages, func(p result.Package) bool { return p.Name == pkg && p.Version == dpkgVersion(t, pkg) }) {
			t.Errorf("packages %+v lack %s at dpkg-query's version", bundled.Environment.System.Packages, pkg)
		}
	}
	for _, pid := range []int{s.WorkerPID, s.Repeats[0].WorkerPID} {
		if _, ok := bundled.KernelLog.Killed(pid); !ok {
			t.Errorf("the kernel's log has no OOM kill of worker %d", pid)
		}
	}
	bs := bundled.Jobs[0]
	if len(bs.Repeats) != 1 || bs.Repeats[0].Outcome != bs.Outcome || bs.Outcome != result.OutcomeCrashed {
		t.Errorf("job %s with repeats %+v: want two runs, both killed", bs.Outcome, bs.Repeats)
	}
	if got := strings.Join(report.PortableCommand(bundled.Command)[1:], " "); got != "run --strategies shared --touch fill --max-allocs 2000 --host-reserve 0 --repeat 2" {
		t.Errorf("the steps' command %q", got)
	}
	if want := report.IssueRun(findings.Judge(bundled), bundleIssueOptions(files)); files["ISSUE.md"] != string(want) {
		t.Errorf("ISSUE.md is not the ticket of the bundled result:\n%s", files["ISSUE.md"])
	}
	if files["kernel-log.txt"] != string(report.KernelLogText(bundled.KernelLog)) {
		t.Errorf("kernel-log.txt is not the run's kernel window:\n%s", files["kernel-log.txt"])
	}
	// report shows what the renderers make of the result (the verdict quotes the kernel's line: the
	// judge's tests hold the sentence).
	if got := runTool(t, env, "report", dir); got.stdout != renderedRun(t, filepath.Join(dir, "run.json"), "table") {
		t.Errorf("report of the result:\n%s", got.stdout)
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
	var tr result.Trace
	if err := json.Unmarshal([]byte(files["trace.json"]), &tr); err != nil {
		t.Fatal(err)
	}
	// The calls kept: the context's create over 2 devices, every create before the failure (however the
	// tool's reads cut them into runs), and the failed one as the program printed it. api-calls.log is
	// what CallsLogText writes of them, and the ticket shows them (how: report's golden issue-trace).
	var before uint64
	var context, failed *result.TraceCall
	for i, c := range tr.Calls {
		switch {
		case c.Call == "clCreateContext":
			context = &tr.Calls[i]
		case c.Failure:
			failed = &tr.Calls[i]
		case c.Call == "clCreateBuffer" && c.Code == 0 && c.Size == 4096 && c.Flags == "read-write" && failed == nil:
			before += c.Count
		}
	}
	if context == nil || context.Devices != 2 || context.Code != 0 {
		t.Errorf("the context's create: %+v", context)
	}
	if failed == nil || failed.Index != idx || failed.Code != code || failed.Call != "clCreateBuffer" || failed.Size != 4096 || before != idx {
		t.Errorf("the failed call %+v after %d creates; the program printed index %d code %d", failed, before, idx, code)
	}
	if files["api-calls.log"] != string(report.CallsLogText(&tr)) {
		t.Errorf("api-calls.log is not the trace's calls:\n%s", files["api-calls.log"])
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
