package ticket_test

import (
	"flag"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/ticket"
)

// fields are the "### Label" headings of a rendered ticket, in order, with the text under each.
func fields(md string) ([]string, map[string]string) {
	var labels []string
	body := map[string]string{}
	for _, part := range strings.Split(md, "\n### ")[1:] {
		label, text, _ := strings.Cut(part, "\n")
		labels = append(labels, label)
		body[label] = strings.TrimSpace(text)
	}
	return labels, body
}

// ticketRun is the fixture run with the evidence a run records for a ticket.
func ticketRun(t *testing.T) *result.Run {
	r := fixture.Run(t)
	r.Platform = result.Platform{Name: "Intel(R) OpenCL Graphics", Vendor: "Intel(R) Corporation", Version: "OpenCL 3.0 "}
	r.Devices[0].PCIBusID = "0000:03:00.0"
	r.Devices[0].GlobalMemBytes, r.Devices[0].HostUnified = 16<<30, false
	r.Environment.System = &result.System{Distribution: "### Injected from os-release", BootParameters: "ro quiet i915.enable_guc=3",
		PCI: []result.PCIDevice{{Address: "0000:03:00.0", Class: "0x030000", Vendor: "0x8086", Device: "0x56a0", Driver: "i915",
			BARs: []result.PCIBar{{Index: 2, Bytes: 256 << 20, Prefetchable: true, Bits64: true}}}},
		PackageManager: "dpkg\n\n### PM <script>x</script>", Packages: []result.Package{{Name: "intel-opencl-icd", Version: "24.35.30872.22", Owns: "/etc/OpenCL/vendors/intel.icd"},
			{Name: "evil|pkg", Version: "1`2"}}}
	r.KernelLog = &result.KernelLog{Source: "kmsg\n\n### SRC <img src=x onerror=alert(1)>", Lines: []result.KernelLine{{Seconds: 12.5, Kind: result.KernelGPUFault, Text: "i915 0000:03:00.0: [drm] GPU HANG: ecode 12:1:85dffffb ```"}}}
	return r
}

func TestIssueFollowsIntelsFormInOrder(t *testing.T) {
	r := ticketRun(t)
	md := string(ticket.IssueRun(findings.Judge(r), ticket.IssueOptions{HasRepro: true}))
	labels, body := fields(md)
	want := []string{"Pre-submission Checklist", "GPU Hardware", "DRI Devices Information", "GPU Detailed Information (lspci output)", "Driver Version",
		"Installed GPU Driver Packages", "Driver Installation Details", "Linux Distribution", "Other Linux Distribution", "Kernel Version & Boot Parameters",
		"Actual Behavior", "Expected Behavior", "Reproduction Rate", "Steps to Reproduce", "Is this a regression?",
		"Last Known Working Driver Version", "First Known Failing Driver Version", "API Call Logs", "strace Logs",
		"System Logs / dmesg Output", "Backtrace (if crash or hang occurred)", "Source Code / Reproducer",
		"Command Line / Application Details", "oneAPI Version (if applicable)", "Screenshots / Video", "Additional Notes"}
	if strings.Join(labels, "\n") != strings.Join(want, "\n") {
		t.Fatalf("fields:\n%s\nwant Intel's:\n%s", strings.Join(labels, "\n"), strings.Join(want, "\n"))
	}
	// The text of every field (lspci's BAR and driver lines with the small BAR named, the kernel's
	// parameters, the one-line rate, the escaped package names and kernel line) is the golden file's.
	goldenText(t, "issue-intel", md)
	// Intel's dropdown has no such distribution: Other, with the name in the field after it.
	if body["Linux Distribution"] != "Other (please specify below)" || body["Other Linux Distribution"] != `\### Injected from os-release` {
		t.Errorf("distribution fields %q / %q", body["Linux Distribution"], body["Other Linux Distribution"])
	}
	// The run ran once: the rate says how to measure it, in one line.
	if rate := body["Reproduction Rate"]; !strings.HasPrefix(rate, "_Not filled in by clmemprobe:_") || strings.Count(rate, "\n") != 0 {
		t.Errorf("rate: %q", rate)
	}
	// Nothing from the machine starts a heading of its own, or carries HTML.
	headings, fenced := 0, false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			headings++
		}
	}
	if headings != len(want)+1 || regexp.MustCompile(`[^\\]<(script|img)`).MatchString(md) { // the fields and the title
		t.Errorf("%d lines start with #, want %d; or HTML got through:\n%s", headings, len(want)+1, md)
	}
	// Every field is filled, or says in one line what to run.
	for _, l := range labels {
		if b := body[l]; b == "" || (strings.HasPrefix(b, "_Not filled in") && strings.Count(b, "\n") > 0) {
			t.Errorf("field %q: %q", l, b)
		}
	}
}

func TestIssuePicksTheVendorsTracker(t *testing.T) {
	for _, c := range []struct {
		platform, first string
	}{
		{"NVIDIA CUDA", "NVIDIA Open GPU Kernel Modules Version"},
		{"AMD Accelerated Parallel Processing", "Problem Description"},
		{"Portable Computing Language", "Description"},
		{"rusticl", "System information"},
		{"Intel(R) OpenCL Graphics", "Pre-submission Checklist"},
		{"Some Other Runtime", "Pre-submission Checklist"},
	} {
		r := ticketRun(t)
		r.Platform.Name, r.Platform.Vendor = c.platform, ""
		r.Devices = nil
		labels, _ := fields(string(ticket.IssueRun(findings.Judge(r), ticket.IssueOptions{})))
		if len(labels) == 0 || labels[0] != c.first {
			t.Errorf("%s: first field %v, want %q", c.platform, labels, c.first)
		}
	}
}

func TestIssueRateAndRegressionFromTheRuns(t *testing.T) {
	r := ticketRun(t)
	s := firstFailed(r)
	if s == nil {
		t.Fatal("the fixture has no failed job")
	}
	// Two repeats: one failed the same way at another index, one did not fail.
	again := result.AttemptOf(s)
	again.FirstFailure = &result.FirstFailure{Index: s.FirstFailure.Index + 3, Code: s.FirstFailure.Code, Call: s.FirstFailure.Call}
	other := result.AttemptOf(s)
	other.Outcome, other.FirstFailure = result.OutcomeCompleted, nil
	s.Repeats = []result.Attempt{again, other}
	baseline := fixture.Run(t)
	baseline.Devices[0].DriverVersion = "older-1.0"
	for i := range baseline.Jobs {
		baseline.Jobs[i].Outcome, baseline.Jobs[i].AllocationsOK, baseline.Jobs[i].FirstFailure = result.OutcomeCompleted, 100000, nil
	}
	md := string(ticket.IssueRun(findings.Judge(r), ticket.IssueOptions{Baseline: baseline}))
	_, body := fields(md)
	wantRate := regexp.MustCompile(`^Sometimes reproduces \\~ 50% - 74%: 2 of 3 runs, at #\d+ to #\d+`) // Markdown's escape of ~, shown as ~
	if !wantRate.MatchString(body["Reproduction Rate"]) {
		t.Errorf("rate: %q", body["Reproduction Rate"])
	}
	if !strings.HasPrefix(body["Is this a regression?"], "- [x] Yes") {
		t.Errorf("regression field: %q", body["Is this a regression?"])
	}
	goldenText(t, "issue-regression", md) // the driver versions the regression fields name
	// A baseline that failed the same way says it is not a regression.
	_, body = fields(string(ticket.IssueRun(findings.Judge(r), ticket.IssueOptions{Baseline: fixture.Run(t)})))
	if !strings.HasPrefix(body["Is this a regression?"], "- [ ] Yes") {
		t.Errorf("a baseline that failed too: %q", body["Is this a regression?"])
	}
}

// goldenText compares a rendering made outside package report with testdata/NAME.golden, under the
// package's -update flag.
func goldenText(t *testing.T, name, got string) {
	t.Helper()
	fixture.Golden(t, name, []byte(got), flag.Lookup("update").Value.(flag.Getter).Get().(bool), "./report/ticket")
}

func firstFailed(r *result.Run) *result.JobResult {
	for i := range r.Jobs {
		if r.Jobs[i].Outcome == result.OutcomeFailed && r.Jobs[i].FirstFailure != nil {
			return &r.Jobs[i]
		}
	}
	return nil
}

func TestIssueOfATraceShowsTheCallsAroundTheFailure(t *testing.T) {
	tr := &result.Trace{Program: "/home/alice/solver", Environment: &result.Environment{Kernel: "6.1.0"},
		Libraries:    []result.TraceLibrary{{Path: "/usr/lib/x86_64-linux-gnu/libpocl.so.2", Kind: result.LibraryRuntime}},
		FirstFailure: &result.TraceFailure{Index: 41, Call: "clCreateBuffer", Code: -6, CodeName: "CL_OUT_OF_HOST_MEMORY", SizeBytes: 1 << 20},
		Calls: []result.TraceCall{{T: 0.001, Call: "clCreateContext", Devices: 2}, {T: 0.002, Call: "clCreateBuffer", Size: 1 << 20, Flags: "read-write", Count: 41},
			{T: 0.004, Index: 41, Call: "clCreateBuffer", Size: 1 << 20, Flags: "read-write", Code: -6, CodeName: "CL_OUT_OF_HOST_MEMORY", Count: 1, Failure: true}},
		Judgement: result.Judgement{Verdict: []string{"clCreateBuffer failed"}}}
	md := string(ticket.IssueTrace(findings.JudgeTrace(tr), ticket.IssueOptions{APILogFile: "api-calls.log"}))
	_, body := fields(md)
	if _, ok := body["API call log"]; !ok { // PoCL's tracker, by the runtime the program mapped
		t.Errorf("no API call log field in PoCL's form:\n%s", md)
	}
	goldenText(t, "issue-trace", md) // the calls around #41, the failure marked, the log file named
}

// A trace without a failure (a program killed in a fill, or one that ended well) has a call log whose intro
// says what it shows: the last calls, not "before its first failure" (issue 46). A command logged as it
// was made shows no result.
func TestIssueOfATraceWithoutAFailureSaysSo(t *testing.T) {
	calls := []result.TraceCall{{T: 0.001, Call: "clCreateContext", Devices: 2}, {T: 0.002, Call: "clCreateBuffer", Size: 4096, Flags: "read-write", Count: 5}}
	for i := 0; i < 5; i++ {
		calls = append(calls, result.TraceCall{T: 0.003, Index: uint64(i + 1), Call: "clEnqueueFillBuffer", Size: 4096, Issued: true, Count: 1})
	}
	tr := &result.Trace{Program: "/opt/solver", Environment: &result.Environment{Kernel: "6.1.0"},
		Libraries: []result.TraceLibrary{{Path: "/usr/lib/x86_64-linux-gnu/libpocl.so.2", Kind: result.LibraryRuntime}},
		Calls:     calls, Judgement: result.Judgement{Verdict: []string{"killed"}}}
	md := string(ticket.IssueTrace(findings.JudgeTrace(tr), ticket.IssueOptions{}))
	_, body := fields(md)
	intro, _, _ := strings.Cut(body["API call log"], "\n")
	if want := fmt.Sprintf("The program's calls as the layer recorded them (trace --calls), the last %d of them; it had no failure; "+
		"the time is when the tool read the call (every 2 ms), seconds from the start; a command marked issued was logged as it was made, before its result:", len(calls)); intro != want {
		t.Errorf("intro %q, want %q", intro, want)
	}
	goldenText(t, "issue-trace-no-failure", md)
	// A command logged as it was made shows no result: the whole line, no status after "issued".
	if fill, want := ticket.CallLine(calls[len(calls)-1]), "    0.003 #5        clEnqueueFillBuffer(context 0, 4096 bytes) issued"; fill != want {
		t.Errorf("a command logged as it was made: %q, want %q", fill, want)
	}
}

// A run whose every buffer is over the devices' maximum allocation, refused with -61 at the first: the
// ticket's "Before filing" note says the specification asks for that, and the title and the expected
// behaviour rest on the size (the golden file).
func TestIssueOfASizeOverTheMaximum(t *testing.T) {
	r := fixture.Run(t)
	for i := range r.Jobs {
		s := &r.Jobs[i]
		if s.Outcome == result.OutcomeUnsupported {
			continue
		}
		s.SizeBytes = 2 * r.Devices[0].MaxAllocBytes
		s.Outcome, s.AllocationsOK, s.BytesOK, s.Samples = result.OutcomeFailed, 0, 0, nil
		s.FirstFailure = &result.FirstFailure{Index: 0, Stage: result.StageCreate, Code: -61, Name: "CL_INVALID_BUFFER_SIZE", Call: "clCreateBuffer"}
	}
	r.Config.Sizes = []uint64{2 * r.Devices[0].MaxAllocBytes}
	goldenText(t, "issue-over-max-alloc", string(ticket.IssueRun(findings.Judge(r), ticket.IssueOptions{HasRepro: true})))
}

// A traced program its memory cgroup's OOM killer ended: the ticket is about that kill, so its rate is not
// "nothing failed", its steps start in the cgroup (without its limit the program fills the machine), and
// without a C reproducer the debug steps run the program itself, not a ./repro the bundle does not hold.
func TestIssueOfAKilledTraceFollowsItsKill(t *testing.T) {
	env := &result.Environment{Kernel: "6.1.0", MemoryCgroup: &result.CgroupInfo{Path: "/walk1g", LimitBytes: 1 << 30, Version: 1}}
	tr := &result.Trace{Program: "/usr/bin/python3", Args: []string{"fill.py"}, Environment: env, Allocations: 957,
		Libraries: []result.TraceLibrary{{Path: "/usr/lib/x86_64-linux-gnu/libpocl.so.2", Kind: result.LibraryRuntime}},
		Exit:      result.TraceExit{Signal: "SIGKILL", Description: "killed by SIGKILL"}}
	md := string(ticket.IssueTrace(findings.JudgeTrace(tr), ticket.IssueOptions{}))
	_, body := fields(md)
	if rate := body["Reproduction rate"]; strings.Contains(rate, "nothing failed") {
		t.Errorf("Reproduction rate of a killed program: %q", rate)
	}
	steps := body["Steps to reproduce"]
	if want := "1. " + render.CgroupPrecondition(env); !strings.HasPrefix(steps, want) {
		t.Errorf("steps %q, want them to start with %q", steps, want)
	}
	if debug := body["Debug output (POCL_DEBUG=all)"]; strings.Contains(debug, "./repro") || !strings.Contains(debug, "POCL_DEBUG=all /usr/bin/python3 fill.py") {
		t.Errorf("debug step without a reproducer: %q", debug)
	}
}
