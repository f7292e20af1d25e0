package ticket

import (
	"fmt"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/repro"
)

// The trackers' templates, field by field in their order (docs/DESIGN.md says which each follows).
var (
	// Intel compute-runtime, .github/ISSUE_TEMPLATE/1-linux-gpu-driver-issue.yml.
	intelTracker = tracker{"Intel compute-runtime's Linux GPU driver issue form", []field{
		{"Pre-submission Checklist", fillChecklist},
		{"GPU Hardware", fillGPUHardware},
		{"DRI Devices Information", fillDRI},
		{"GPU Detailed Information (lspci output)", fillLspci},
		{"Driver Version", fillDriverVersion},
		{"Installed GPU Driver Packages", fillPackages},
		{"Driver Installation Details", fillInstallation},
		{"Linux Distribution", fillIntelDistro},
		{"Other Linux Distribution", fillOtherDistro},
		{"Kernel Version & Boot Parameters", fillKernel},
		{"Actual Behavior", fillActual},
		{"Expected Behavior", fillExpected},
		{"Reproduction Rate", fillRate},
		{"Steps to Reproduce", fillSteps},
		{"Is this a regression?", fillIsRegression},
		{"Last Known Working Driver Version", fillLastWorking},
		{"First Known Failing Driver Version", fillFirstFailing},
		{"API Call Logs", fillAPILog},
		{"strace Logs", fillStrace},
		{"System Logs / dmesg Output", fillKernelLog},
		{"Backtrace (if crash or hang occurred)", fillBacktrace},
		{"Source Code / Reproducer", fillReproducer},
		{"Command Line / Application Details", fillCommand},
		{"oneAPI Version (if applicable)", fillOneAPI},
		{"Screenshots / Video", fillNone("screenshots")},
		{"Additional Notes", fillNotes},
	}}
	// NVIDIA open-gpu-kernel-modules, .github/ISSUE_TEMPLATE/10_functional_bug.yml.
	nvidiaTracker = tracker{"NVIDIA open-gpu-kernel-modules' functional bug form", []field{
		{"NVIDIA Open GPU Kernel Modules Version", fillNVIDIAModule},
		{"Comparison with proprietary kernel module", fillProprietary},
		{"Operating System and Version", fillDistribution},
		{"Kernel Release", fillUnameA},
		{"Please confirm you are running a stable release kernel (e.g. not a -rc). We do not accept bug reports for unreleased kernels.", fillStableKernel},
		{"Hardware: GPU", fillGPUSummary},
		{"Describe the bug", fillDescribe},
		{"To Reproduce", fillSteps},
		{"Bug Incidence", fillIncidence},
		{"nvidia-bug-report.log.gz", fillNVIDIABugReport},
		{"More Info", fillMoreInfo},
	}}
	// ROCm, .github/ISSUE_TEMPLATE/issue_report.yml.
	rocmTracker = tracker{"ROCm's issue report form", []field{
		{"Problem Description", fillDescribe},
		{"Operating System", fillDistribution},
		{"CPU", fillCPU},
		{"GPU", fillGPUSummary},
		{"ROCm Version", fillROCmVersion},
		{"ROCm Component", fillROCmComponent},
		{"Steps to Reproduce", fillSteps},
		{"(Optional for Linux users) Output of /opt/rocm/bin/rocminfo --support", fillRocminfo},
		{"Additional Information", fillMoreInfo},
	}}
	// Mesa's GitLab default issue description (rusticl, clover).
	mesaTracker = tracker{"Mesa's default issue description", []field{
		{"System information", fillSystemInfo},
		{"Describe the issue", fillDescribe},
		{"Regression", fillRegressionText},
		{"Log files as attachment", fillLogAttachments},
		{"Screenshots/video files", fillNone("screenshots")},
		{"Any extra information would be greatly appreciated", fillNotes},
	}}
	// PoCL has no issue template: the evidence its maintainers ask reporters for, under plain headings.
	poclTracker = tracker{"the evidence PoCL's maintainers ask for (PoCL has no issue template)", []field{
		{"Description", fillActual},
		{"Expected behaviour", fillExpected},
		{"Reproduction rate", fillRate},
		{"PoCL version and devices", fillGPUHardwareAndVersion},
		{"Installed packages", fillPackages},
		{"Operating system and kernel", fillDistroAndKernel},
		{"Steps to reproduce", fillSteps},
		{"Regression", fillRegressionText},
		{"API call log", fillAPILog},
		{"Kernel log (dmesg)", fillKernelLog},
		{"Debug output (POCL_DEBUG=all)", fillPoCLDebug},
		{"Reproducer", fillReproducer},
		{"Additional information", fillNotes},
	}}
)

// fillChecklist leaves Intel's checklist for the reporter: only they can say it.
func fillChecklist(*ticket) (string, string) {
	return "- [ ] I am using the latest GPU driver version\n- [ ] I have searched for similar issues and found none\n\n(For the reporter to check: clmemprobe cannot.)", ""
}

// intelDistros are the options of Intel's Linux Distribution dropdown, by what os-release's name starts with.
var intelDistros = []struct{ prefix, option string }{
	{"Ubuntu 24.04", "Ubuntu 24.04 LTS"}, {"Ubuntu 22.04", "Ubuntu 22.04 LTS"}, {"Fedora", "Fedora / RHEL"},
	{"Red Hat", "Fedora / RHEL"}, {"SUSE", "SLES / openSUSE"}, {"openSUSE", "SLES / openSUSE"}, {"Arch Linux", "Arch Linux"},
}

// intelDistro is the dropdown's option for the machine's distribution, "" for Other.
func (t *ticket) intelDistro() string {
	if t.sys == nil {
		return ""
	}
	for _, d := range intelDistros {
		if strings.HasPrefix(t.sys.Distribution, d.prefix) {
			return d.option
		}
	}
	return ""
}

func fillIntelDistro(t *ticket) (string, string) {
	if t.sys == nil || t.sys.Distribution == "" {
		return fillDistribution(t)
	}
	if o := t.intelDistro(); o != "" {
		return o, ""
	}
	return "Other (please specify below)", ""
}

func fillOtherDistro(t *ticket) (string, string) {
	if t.sys != nil && t.sys.Distribution != "" && t.intelDistro() == "" {
		return render.MdLine(t.sys.Distribution), ""
	}
	return "Not needed: the distribution is one of the list's.", ""
}

func fillGPUHardwareAndVersion(t *ticket) (string, string) {
	hw, todo := fillGPUHardware(t)
	if hw == "" {
		return hw, todo
	}
	v, _ := fillDriverVersion(t)
	return hw + "\n\n" + v, ""
}

func fillDistroAndKernel(t *ticket) (string, string) {
	d, todo := fillDistribution(t)
	k, _ := fillKernel(t)
	if d == "" && k == "" {
		return "", todo
	}
	return d + "\n\n" + k, ""
}

// runSteps are the steps that reproduce a run: the preconditions it recorded, the command, the reproducer.
func runSteps(j findings.Judged, o IssueOptions) []string {
	r := j.Run()
	steps := preconditionSteps(r.Environment)
	steps = append(steps, mdWithCode("Run clmemprobe (https://github.com/clmemprobe/clmemprobe"+render.FromClone(r)+") as the run did:")+"\n\n"+indent(render.MdBlock(render.ReproduceCommand(r), "sh"), "   "))
	if o.HasRepro {
		what, _ := repro.ReproSubject(j)
		steps = append(steps, render.MdLine("Or without clmemprobe, with the OpenCL API alone ("+what+"):")+"\n\n"+indent(render.MdBlock("cc repro.c -lOpenCL -o repro && ./repro", "sh"), "   "))
	}
	return steps
}

// preconditionSteps are the steps that set up what the run or trace ran under, as it recorded them: its
// memory cgroup's limit, without which following the steps fills the whole machine instead.
func preconditionSteps(e *result.Environment) []string {
	if step := render.CgroupPrecondition(e); step != "" {
		return []string{render.MdLine(step)}
	}
	return nil
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = by + lines[i]
	}
	return strings.Join(lines, "\n")
}

// runExpected is what the run says should have happened: what another job reached where one did better,
// and the devices' capacity against what the failing jobs placed.
func runExpected(j findings.Judged) []string {
	r := j.Run()
	var out []string
	for i := range r.Jobs {
		s := &r.Jobs[i]
		if s.Outcome == result.OutcomeCompleted {
			continue
		}
		// The job that went furthest of those placed as s was: one that placed nothing goes as far as its
		// budget and shows nothing s could have reached.
		var best *result.JobResult
		for k := range r.Jobs {
			if o := &r.Jobs[k]; j.PlacedAlike(s, o) && (best == nil || o.AllocationsOK > best.AllocationsOK) {
				best = o
			}
		}
		if best == s {
			continue
		}
		if best != nil && best.AllocationsOK > s.AllocationsOK+s.AllocationsOK/10 {
			verb := "reached"
			if best.Outcome == result.OutcomeCompleted {
				verb = "completed"
			}
			out = append(out, fmt.Sprintf("%s to go as far as %s, which %s %d buffers of %s on the same devices (it ended at %d).",
				ticketJob(s), ticketJob(best), verb, best.AllocationsOK, units.Size(best.SizeBytes), s.AllocationsOK))
		}
	}
	// Devices whose memory is host memory share it: their capacity is the largest's, not the sum.
	var global uint64
	for _, d := range r.Devices {
		if d.HostUnified {
			global = max(global, d.GlobalMemBytes)
		} else {
			global += d.GlobalMemBytes
		}
	}
	if s := noteJob(j); s != nil && s.Outcome != result.OutcomeCompleted {
		bytes := s.AllocationsOK * s.SizeBytes
		switch {
		case s.Outcome == result.OutcomeCrashed || s.Outcome == result.OutcomeHung:
			out = append(out, fmt.Sprintf("%s to end with an OpenCL error code the program can handle (CL_OUT_OF_HOST_MEMORY, CL_OUT_OF_RESOURCES, CL_MEM_OBJECT_ALLOCATION_FAILURE) when memory runs out, not with its process %s after %s buffers.",
				ticketJob(s), map[result.Outcome]string{result.OutcomeCrashed: "killed", result.OutcomeHung: "hung"}[s.Outcome], render.Made(s)))
		case global > 0 && bytes < global:
			out = append(out, fmt.Sprintf("%s to place buffers up to the devices' memory (%s reported) before failing, or to fail with an OpenCL error code; it ended after %s (%.0f%% of it) as the findings above say.",
				ticketJob(s), units.Bytes(global), units.Bytes(bytes), 100*float64(bytes)/float64(global)))
		}
	}
	return out
}

// noteJob is the job the ticket's note and expected behaviour are about: the title's, else the job repro.c
// repeats (one the host guard stopped, which no title names), else none.
func noteJob(j findings.Judged) *result.JobResult {
	if s := titleJob(j); s != nil {
		return s
	}
	if s, err := repro.ReproJob(j, "", "", ""); err == nil {
		return s
	}
	return nil
}

func ticketJob(s *result.JobResult) string {
	name := string(s.Strategy)
	if s.Flags != "" {
		name += " (" + s.Flags + ")"
	}
	if s.Variant != "" {
		name += " [" + s.Variant + "]"
	}
	return name
}

// runCalls are the calls of the title's job s, as its loop makes them, around its failure.
func runCalls(s *result.JobResult, touch result.Touch) ([]string, string) {
	if s == nil {
		return nil, ""
	}
	flags := "CL_MEM_READ_WRITE"
	if s.Flags != "" {
		flags = s.Flags
	}
	n, made := s.MadeRange() // n: the buffers the device confirmed; to made, a batch was in flight
	var last string
	if f := s.FirstFailure; f != nil && s.Outcome == result.OutcomeFailed {
		n = f.Index
		last = fmt.Sprintf("#%d: %s = %d (%s), device %d, %s already allocated", f.Index, f.Call, f.Code, f.Name, f.Device, units.Bytes(f.BytesBefore))
	} else {
		last = fmt.Sprintf("then the worker %s during %s (%s), with the commands of up to a batch of buffers in flight", s.Outcome, render.OrDash(string(s.LastStage)), render.OrDash(s.Signal))
	}
	var lines []string
	if n > 0 {
		then := ""
		if touch != result.TouchNone && touch != "" {
			then = fmt.Sprintf(", each followed by its %s", touch)
		}
		lines = append(lines, fmt.Sprintf("#0..#%d: clCreateBuffer(context, %s, %d, NULL, &err) = CL_SUCCESS%s: %d calls", n-1, flags, s.SizeBytes, then, n))
	}
	if made > n && (s.FirstFailure == nil || s.Outcome != result.OutcomeFailed) {
		lines = append(lines, fmt.Sprintf("#%d..#%d: created and enqueued, not confirmed by the device (a batch in flight when the worker died): %d calls", n, made-1, made-n))
	}
	lines = append(lines, last)
	return lines, fmt.Sprintf("clmemprobe's own loop (%s): every call is in repro.c. The calls up to the end:", s.Strategy)
}

// regressionAnswer is what the regression fields say.
type regressionAnswer struct {
	known, regressed   bool
	lastGood, firstBad string
	why                string
}

// regression compares the run with its baseline: the same job (strategy, size, flags, variant) that
// failed first here, there.
func (t *ticket) regression() regressionAnswer {
	if t.baseline == nil || t.current == nil {
		return regressionAnswer{why: "not known: give a result from an earlier driver with `clmemprobe bundle --baseline OLD/run.json` to fill this"}
	}
	cur := t.job
	if cur == nil {
		return regressionAnswer{known: true, why: "No: nothing failed in this run."}
	}
	var base *result.JobResult
	for i := range t.baseline.Jobs {
		b := &t.baseline.Jobs[i]
		if b.Strategy == cur.Strategy && b.SizeBytes == cur.SizeBytes && b.Flags == cur.Flags && b.Variant == cur.Variant {
			base = b
		}
	}
	oldV, newV := driverOf(t.baseline), driverOf(t.current)
	if base == nil {
		return regressionAnswer{why: fmt.Sprintf("not known: the baseline (driver %s) did not run %s at %s", oldV, ticketJob(cur), units.Size(cur.SizeBytes))}
	}
	if base.Outcome == result.OutcomeCompleted && base.AllocationsOK <= cur.AllocationsOK {
		return regressionAnswer{why: fmt.Sprintf("not known: the baseline's budget ended it after %d buffers, before this run ended at %d; run the baseline with a larger --max-allocs", base.AllocationsOK, cur.AllocationsOK)}
	}
	if base.Outcome != result.OutcomeCompleted && base.AllocationsOK <= cur.AllocationsOK+cur.AllocationsOK/10 {
		return regressionAnswer{known: true, why: fmt.Sprintf("No, by the baseline: with driver %s the same job ended too (%s after %d buffers, here %d).", oldV, base.Outcome, base.AllocationsOK, cur.AllocationsOK)}
	}
	if oldV == newV {
		return regressionAnswer{known: true, why: fmt.Sprintf("Not a driver regression: the baseline ran the same driver (%s) and went further (%d buffers against %d); compare the two environments.", oldV, base.AllocationsOK, cur.AllocationsOK)}
	}
	return regressionAnswer{known: true, regressed: true, lastGood: oldV, firstBad: newV,
		why: fmt.Sprintf("With driver %s the same job (%s) reached %d buffers (%s); with %s it ended after %d.", oldV, ticketJob(cur), base.AllocationsOK, base.Outcome, newV, cur.AllocationsOK)}
}

// firstEnded is the run's first job that failed, crashed or hung.
func firstEnded(r *result.Run) *result.JobResult {
	for i := range r.Jobs {
		if ended(&r.Jobs[i]) {
			return &r.Jobs[i]
		}
	}
	return nil
}

// titleJob is the job a run's ticket is about, its title, rate, steps and repro.c alike: the one the
// verdict's headline names, which repro.c repeats, where it failed, crashed or hung; else the first that did.
func titleJob(j findings.Judged) *result.JobResult {
	if s, err := repro.ReproJob(j, "", "", ""); err == nil && ended(s) {
		return s
	}
	return firstEnded(j.Run())
}

// ended says job s failed, crashed, hung or placed nothing provably: what a ticket is about.
func ended(s *result.JobResult) bool {
	switch s.Outcome {
	case result.OutcomeFailed, result.OutcomeCrashed, result.OutcomeHung, result.OutcomeWrong:
		return true
	}
	return false
}

// driverOf names a run's driver: its first device's driver version, with the platform's version.
func driverOf(r *result.Run) string {
	v := r.Platform.Version
	if len(r.Devices) > 0 && r.Devices[0].DriverVersion != "" {
		v = r.Devices[0].DriverVersion + " (" + r.Platform.Version + ")"
	}
	return v
}
