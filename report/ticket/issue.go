// Package ticket writes ISSUE.md, a run's or a trace's bug ticket in its vendor tracker's template, and the
// kernel and call logs that a bundle attaches to it.
package ticket

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// ISSUE.md is the ticket a driver team's tracker asks for, filled in from the result: the fields of the
// vendor's bug template in its order and with its labels (Intel's compute-runtime Linux GPU driver form;
// NVIDIA's open-gpu-kernel-modules functional bug form; ROCm's issue report form; Mesa's default issue
// description; for PoCL, which has no template, the evidence its maintainers ask for), each "### Label" as a
// GitHub issue form writes it. A field the result cannot fill says, in one line, what to run for it.

// IssueOptions are what a ticket takes besides the result.
type IssueOptions struct {
	// Baseline is an earlier result on a driver that worked, for the regression fields (bundle --baseline).
	Baseline *result.Run
	// HasRepro says the bundle holds repro.c; KernelLogFile names the bundle's file of the whole kernel
	// window ("" where there is none); APILogFile the bundle's file of the traced calls.
	HasRepro      bool
	KernelLogFile string
	APILogFile    string
	// Files are the bundle's other files, for the ticket to name.
	Files []string
}

// ticket is what every tracker's fields are filled from: one result (a run or a trace) seen as a ticket.
type ticket struct {
	platform  result.Platform
	devices   []result.Device
	env       *result.Environment
	sys       *result.System
	klog      *result.KernelLog
	findings  []result.Finding
	verdict   []string
	command   string // the command that reproduces it
	rate      rate
	failed    bool // an allocation failed, or a worker crashed or hung
	crashed   bool
	apiLog    []string // the calls around the failure
	apiWhat   string   // what those lines are
	steps     []string
	expected  []string
	baseline  *result.Run
	current   *result.Run
	o         IssueOptions
	subjectOf string            // "clmemprobe run" or "the traced program"
	job       *result.JobResult // a run's job the ticket is about (titleJob); nil for a trace
	program   string            // a traced program's own command line, with its environment ("" for a run)
	headline  string            // the title's what
	rateHow   string            // how to measure the rate where the result did not
	notes     string            // what is not a driver's fault, for the reporter to weigh before filing ("" none)
}

// rate is how often the failure came back.
type rate struct {
	same, of int
	at       []uint64
	known    bool // a job ran more than once
	// after: the runs ended by a crash or a hang, so at counts the buffers made before it, not a failed
	// call's index; batched: up to a batch of buffers were in flight then.
	after, batched bool
}

// tracker is one vendor's template: its name and its fields in order.
type tracker struct {
	name   string
	fields []field
}

// field is one labelled field and how it is filled: fill returns the text, or "" and the one line that
// says what to run for it.
type field struct {
	label string
	fill  func(t *ticket) (text, todo string)
}

// IssueRun renders ISSUE.md for a judged run.
func IssueRun(j findings.Judged, o IssueOptions) []byte {
	r := j.Run()
	t := &ticket{platform: r.Platform, devices: r.Devices, env: r.Environment, klog: r.KernelLog, findings: j.Findings(),
		verdict: j.Verdict(), command: render.ReproduceCommand(r), o: o, baseline: o.Baseline, current: r,
		subjectOf: "clmemprobe run, the allocation probe: it repeats the allocation loop under the context layouts asked for, each in its own worker process, and samples host and device memory."}
	if r.Environment != nil {
		t.sys = r.Environment.System
	}
	for i := range r.Jobs {
		s := &r.Jobs[i]
		if s.Outcome != result.OutcomeFailed && s.Outcome != result.OutcomeCrashed && s.Outcome != result.OutcomeHung && s.Outcome != result.OutcomeWrong {
			continue
		}
		t.failed = true
		t.crashed = t.crashed || s.Outcome != result.OutcomeFailed
	}
	t.job = titleJob(j)
	if s := t.job; s != nil {
		// The rate is the title's job's.
		same, of, at := s.Reproduced()
		t.rate = rate{same: same, of: of, at: at, known: of > 1, after: s.Outcome != result.OutcomeFailed,
			batched: r.Config.Attribution != "per-buffer"}
	}
	t.rateHow = "add `--repeat 3` to the command in the steps below to measure it"
	t.headline = runHeadline(j, t.job)
	t.steps = runSteps(j, o)
	t.expected = runExpected(j)
	if s := noteJob(j); s != nil {
		t.notes = limitNote(j.Limit(s))
		if s.GuardStopped() && t.notes != "" {
			// The guard, not the limit, ended it: the runtime never met the limit, and cannot be faulted there.
			t.notes = fmt.Sprintf("clmemprobe's host guard stopped %s short of the limit the findings name (%s), before the runtime could fail or be killed there: nothing in this run is the runtime's; run again with `--host-reserve off` to let that limit end it, and file what the runtime does then", ticketJob(s), j.Limit(s).Limit)
		}
		if t.notes != "" {
			t.expected = []string{"Nothing else of the runtime at this limit; see the note at the top."}
		}
	}
	t.apiLog, t.apiWhat = runCalls(t.job, r.Config.Touch)
	return t.render(trackerFor(result.VendorOf(r.Platform, r.Devices...)))
}

// trackerFor picks the template of the runtime's vendor: Intel's, the fullest form, for a vendor without
// its own.
func trackerFor(v result.Vendor) tracker {
	switch {
	case v == result.VendorPoCL:
		return poclTracker
	case v.Mesa():
		return mesaTracker
	case v == result.VendorNVIDIA:
		return nvidiaTracker
	case v == result.VendorAMD:
		return rocmTracker
	}
	return intelTracker
}

func (t *ticket) render(tr tracker) []byte {
	b := &strings.Builder{}
	fmt.Fprintf(b, "<!-- ISSUE.md: the fields of %s, filled in by clmemprobe from this bundle. Paste it into a new issue. -->\n\n", tr.name)
	fmt.Fprintf(b, "# %s\n\n", render.MdLine(t.title()))
	if t.notes != "" {
		fmt.Fprintf(b, "> **Before filing:** %s\n\n", mdWithCode(t.notes))
	}
	for _, f := range tr.fields {
		text, todo := f.fill(t)
		fmt.Fprintf(b, "### %s\n\n", f.label)
		if text == "" {
			text = "_Not filled in by clmemprobe:_ " + mdWithCode(todo) + "\n"
		}
		b.WriteString(strings.TrimRight(text, "\n") + "\n\n")
	}
	return []byte(b.String())
}

// limitNote says, for a limit that is the machine's or the device's own rather than a fault of the runtime,
// what to weigh before filing: a maintainer closes a ticket about a limit working as it should.
func limitNote(jl result.JobLimit) string {
	if _, over := jl.Evidence["max_alloc_bytes"]; over && jl.Limit == result.LimitRuntime {
		return maxAllocNote
	}
	switch l := jl.Limit; l {
	case result.LimitCgroupMemory:
		return fmt.Sprintf("the findings say this run met its memory cgroup's limit (%s: a container's or a batch job's, not the machine's), not a fault of the runtime; file it only if what each buffer costs on the host is more than the runtime should take, or the runtime should have returned an error code instead", l)
	case result.LimitHostMemory, result.LimitFileDescriptors, result.LimitMappings, result.LimitAddressSpace:
		return fmt.Sprintf("the findings say this run met a limit of the machine (%s), not a fault of the runtime; file it only if what each buffer costs on the host is more than the runtime should take, or the runtime should have returned an error code instead", l)
	case result.LimitDeviceMemory:
		return "the findings say the device's memory ran out (device-memory): that is its capacity; file it only if the buffers should have fit"
	case result.LimitFlags:
		return "the findings say the runtime refused the buffers' flags (flags); file it only if the device documents them"
	}
	return ""
}

// maxAllocNote is the note on a buffer refused with -61 for a size over the device's maximum allocation.
const maxAllocNote = "CL_INVALID_BUFFER_SIZE is what the specification asks for a buffer larger than the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE; file it only if the size is within the device's maximum"

// mdWithCode is a line of the tool's own words with `code` spans: the text between the spans escaped, the
// spans kept as code. Only the first part starts the line (render.MdLine, which drops leading spaces); the text
// after a span keeps its spaces (render.MdText), or the span would run into the next word ("`--repeat 3`to").
func mdWithCode(s string) string {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an odd number of backticks: no spans to trust
		return render.MdLine(s)
	}
	for i := range parts {
		switch {
		case i%2 == 1:
			parts[i] = render.MdCode(parts[i])
		case i == 0:
			parts[i] = render.MdLine(parts[i])
		default:
			parts[i] = render.MdText(parts[i])
		}
	}
	return strings.Join(parts, "")
}

// title is the ticket's title: what ended first and how, on what.
func (t *ticket) title() string {
	what := t.headline
	if what == "" {
		what = "OpenCL allocations without a failure"
	}
	dev := "no device"
	if len(t.devices) > 0 {
		dev = result.DeviceModel(t.devices)
	}
	return fmt.Sprintf("%s on %s (%s)", what, dev, t.platform.Name)
}

// runHeadline says in a title's words how the title's job s ended: "clCreateBuffer failed with -6
// (CL_OUT_OF_HOST_MEMORY) at buffer #1024 of 1 MiB (shared context; limit: context)".
func runHeadline(j findings.Judged, s *result.JobResult) string {
	if s == nil {
		return ""
	}
	how := fmt.Sprintf("%s after %s buffers of %s", s.Outcome, render.Made(s), units.Size(s.SizeBytes))
	switch {
	case s.Outcome == result.OutcomeFailed && s.FirstFailure != nil:
		f := s.FirstFailure
		how = fmt.Sprintf("%s failed with %d (%s) at buffer #%d of %s", f.Call, f.Code, f.Name, f.Index, units.Size(s.SizeBytes))
	case s.Signal != "":
		how = fmt.Sprintf("Worker killed by %s after %s buffers of %s", s.Signal, render.Made(s), units.Size(s.SizeBytes))
	}
	how += " (" + ticketJob(s)
	if l := j.Limit(s).Limit; l != "" {
		how += "; limit: " + string(l)
	}
	return how + ")"
}

// The fields, each a function of the ticket.

func fillGPUHardware(t *ticket) (string, string) {
	if len(t.devices) == 0 {
		return "", "no OpenCL device was listed; run `clinfo -l`"
	}
	var parts []string
	for _, d := range t.devices {
		p := fmt.Sprintf("%s (%s, %s global memory, %s max allocation)", d.Name, d.Type, units.Bytes(d.GlobalMemBytes), units.Bytes(d.MaxAllocBytes))
		if pci := t.pciOf(d); pci != nil {
			p += fmt.Sprintf(", PCI %s [%s:%s]", pci.Address, render.HexID(pci.Vendor), render.HexID(pci.Device))
		}
		parts = append(parts, p)
	}
	return render.MdLine(strings.Join(parts, "; ")), ""
}

func fillDRI(t *ticket) (string, string) {
	var lines []string
	if t.env != nil {
		lines = append(lines, t.env.DRIDevices...)
	}
	if t.sys != nil {
		for _, k := range render.SortedKeys(t.sys.DRIByPath) {
			lines = append(lines, fmt.Sprintf("/dev/dri/by-path/%s -> %s", k, t.sys.DRIByPath[k]))
		}
	}
	if len(lines) == 0 {
		return "", "this machine has no /dev/dri nodes (a compute stack without DRM, or a container without them); where the GPU has them, run `ls -l /dev/dri /dev/dri/by-path`"
	}
	return render.MdBlock(strings.Join(lines, "\n"), ""), ""
}

func fillLspci(t *ticket) (string, string) {
	if t.sys == nil || len(t.sys.PCI) == 0 {
		return "", t.unread("pci", "no display controller or accelerator was found on the PCI bus") + "; run `lspci -vvv -k -d ::0300 -d ::0302 -d ::0380 -d ::1200`"
	}
	var b strings.Builder
	for _, d := range t.sys.PCI {
		fmt.Fprintf(&b, "%s class %s [%s:%s]", d.Address, d.Class, render.HexID(d.Vendor), render.HexID(d.Device))
		if d.Revision != "" {
			fmt.Fprintf(&b, " (rev %s)", strings.TrimPrefix(d.Revision, "0x"))
		}
		b.WriteByte('\n')
		if d.SubsystemVendor != "" {
			fmt.Fprintf(&b, "\tSubsystem: [%s:%s]\n", render.HexID(d.SubsystemVendor), render.HexID(d.SubsystemDevice))
		}
		for _, bar := range d.BARs {
			attrs := []string{}
			if bar.Bits64 {
				attrs = append(attrs, "64-bit")
			}
			if bar.Prefetchable {
				attrs = append(attrs, "prefetchable")
			} else {
				attrs = append(attrs, "non-prefetchable")
			}
			fmt.Fprintf(&b, "\tRegion %d: Memory, %s [size=%s]\n", bar.Index, strings.Join(attrs, ", "), units.Size(bar.Bytes))
		}
		if d.LinkSpeed != "" {
			fmt.Fprintf(&b, "\tLnkSta: Speed %s, Width x%s (LnkCap: Speed %s, Width x%s)\n", d.LinkSpeed, d.LinkWidth, d.MaxLinkSpeed, d.MaxLinkWidth)
		}
		if d.NUMANode != "" && d.NUMANode != "-1" {
			fmt.Fprintf(&b, "\tNUMA node: %s\n", d.NUMANode)
		}
		if len(d.DRM) > 0 {
			fmt.Fprintf(&b, "\tDRM nodes: %s\n", strings.Join(d.DRM, ", "))
		}
		for _, k := range render.SortedKeys(d.Firmware) {
			fmt.Fprintf(&b, "\tFirmware %s: %s\n", k, d.Firmware[k])
		}
		fmt.Fprintf(&b, "\tKernel driver in use: %s\n", render.OrDash(d.Driver))
	}
	out := render.MdBlock(b.String(), "")
	for _, note := range t.barNotes() {
		out += "\n" + render.MdLine(note) + "\n"
	}
	return out, ""
}

// barNotes says where a device's largest BAR is far smaller than its memory: without a resizable BAR the
// host sees the device's memory through a small window, a known cause of failing large allocations.
func (t *ticket) barNotes() []string {
	var notes []string
	for _, d := range t.devices {
		pci := t.pciOf(d)
		if pci == nil || len(pci.BARs) == 0 || d.GlobalMemBytes == 0 {
			continue
		}
		var largest uint64
		for _, bar := range pci.BARs {
			largest = max(largest, bar.Bytes)
		}
		if largest < d.GlobalMemBytes/4 && !d.HostUnified {
			notes = append(notes, fmt.Sprintf("%s's largest BAR is %s against its %s of memory: no resizable BAR, so the host reaches the device's memory through a small window.",
				pci.Address, units.Size(largest), units.Bytes(d.GlobalMemBytes)))
		}
	}
	return notes
}

// unread is why a collector read nothing, as it said, else the fallback.
func (t *ticket) unread(collector, fallback string) string {
	if t.sys != nil && t.sys.Unread[collector] != "" {
		return t.sys.Unread[collector]
	}
	return fallback
}

// pciOf is the PCI device of an OpenCL device, by its bus id; with one GPU-class device and one OpenCL
// device that tells none, that one.
func (t *ticket) pciOf(d result.Device) *result.PCIDevice {
	if t.sys == nil {
		return nil
	}
	for i := range t.sys.PCI {
		if id := t.sys.PCI[i].Address; d.PCIBusID != "" && (strings.EqualFold(id, d.PCIBusID) || strings.HasSuffix(strings.ToLower(id), strings.ToLower(d.PCIBusID))) {
			return &t.sys.PCI[i]
		}
	}
	return nil
}

func fillDriverVersion(t *ticket) (string, string) {
	var parts []string
	seen := map[string]bool{}
	for _, d := range t.devices {
		if v := d.DriverVersion; v != "" && !seen[v] {
			seen[v] = true
			parts = append(parts, fmt.Sprintf("OpenCL driver %s (%s)", v, d.Name))
		}
	}
	if t.platform.Version != "" {
		parts = append(parts, "platform "+t.platform.Version)
	}
	if t.sys != nil {
		if t.sys.NVIDIADriver != "" {
			parts = append(parts, t.sys.NVIDIADriver)
		}
		for _, m := range t.sys.Modules {
			if m.Version != "" && !seen[m.Name+m.Version] {
				seen[m.Name+m.Version] = true
				parts = append(parts, fmt.Sprintf("kernel module %s %s", m.Name, m.Version))
			}
		}
	}
	if len(parts) == 0 {
		return "", "the result holds no driver version; run `clinfo | grep -i 'driver version'`"
	}
	return render.MdLine(strings.Join(parts, "; ")), ""
}

func fillPackages(t *ticket) (string, string) {
	if t.sys == nil || len(t.sys.Packages) == 0 {
		return "", t.unread("packages", "no package database was read") + "; run `dpkg -l | grep -Ei 'opencl|icd|igc|gmm|level-zero|nvidia|rocm|hsa|pocl|mesa'` (or `rpm -qa` with the same pattern)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "From %s:\n\n| package | version | why |\n|:--|:--|:--|\n", render.MdLine(t.sys.PackageManager))
	for _, p := range t.sys.Packages {
		why := "a GPU or OpenCL package installed here"
		if p.Owns != "" {
			why = "owns " + p.Owns
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", render.MdLine(p.Name), render.MdLine(p.Version), render.MdLine(why))
	}
	if len(t.sys.Unowned) > 0 {
		fmt.Fprintf(&b, "\nNo package owns %s: installed by hand, by a vendor's installer or by a container runtime.\n", render.MdLine(strings.Join(t.sys.Unowned, ", ")))
	}
	return b.String(), ""
}

func fillInstallation(t *ticket) (string, string) {
	if t.env == nil || len(t.env.ICDFiles) == 0 {
		return "", "say how the driver was installed (distribution packages, the vendor's repository, a tarball, a container image)"
	}
	var b strings.Builder
	b.WriteString("Registered OpenCL runtimes (ICD files and the library each names):\n\n")
	for _, k := range render.SortedKeys(t.env.ICDFiles) {
		fmt.Fprintf(&b, "- %s -> %s\n", render.MdCode(k), render.MdCode(t.env.ICDFiles[k]))
	}
	if t.env.OpenCLLibrary != "" {
		fmt.Fprintf(&b, "\nThe ICD loader the run opened: %s.", render.MdCode(t.env.OpenCLLibrary))
	}
	if t.sys != nil && t.sys.PackageManager != "" {
		fmt.Fprintf(&b, "\n\nThe versions under Installed GPU Driver Packages are from %s; say whether they came from the distribution or the vendor's repository.", render.MdLine(t.sys.PackageManager))
	}
	return b.String(), ""
}

func fillDistribution(t *ticket) (string, string) {
	if t.sys != nil && t.sys.Distribution != "" {
		return render.MdLine(t.sys.Distribution), ""
	}
	if t.env != nil && t.env.OS != "" {
		return render.MdLine(t.env.OS), ""
	}
	return "", "run `cat /etc/os-release`"
}

func fillKernel(t *ticket) (string, string) {
	if t.env == nil || t.env.Kernel == "" {
		return "", "run `uname -a; cat /proc/cmdline`"
	}
	lines := []string{"Kernel: " + t.env.Kernel}
	if t.sys != nil && t.sys.KernelBuild != "" {
		lines[0] += " " + t.sys.KernelBuild
	}
	if t.sys != nil && t.sys.BootParameters != "" {
		lines = append(lines, "Boot parameters: "+t.sys.BootParameters)
	}
	if t.sys != nil && len(t.sys.Modules) > 0 {
		var mods []string
		for _, m := range t.sys.Modules {
			mods = append(mods, strings.TrimSpace(m.Name+" "+m.Version))
		}
		lines = append(lines, "GPU modules loaded: "+strings.Join(mods, ", "))
	} else if t.sys != nil && t.sys.Unread["modules"] != "" {
		lines = append(lines, "GPU modules: "+t.sys.Unread["modules"])
	}
	return render.MdBlock(strings.Join(lines, "\n"), ""), ""
}

func fillActual(t *ticket) (string, string) {
	var b strings.Builder
	headFailure := false // a headline about the first failure says it: its first-failure finding would again
	for _, f := range t.findings {
		headFailure = headFailure || (f.Kind == result.FindingHeadline && f.About == result.FindingFailure)
	}
	for _, f := range t.findings {
		if f.Kind == result.FindingFailure && headFailure {
			continue
		}
		switch f.Kind {
		case result.FindingHeadline, result.FindingLimit, result.FindingFailure, result.FindingOutcome, result.FindingRepeated, result.FindingCode:
			fmt.Fprintf(&b, "- %s\n", render.MdLine(f.Sentence))
		}
	}
	if b.Len() == 0 {
		for _, v := range t.verdict {
			fmt.Fprintf(&b, "- %s\n", render.MdLine(v))
		}
	}
	if b.Len() == 0 {
		return "", "describe what happened"
	}
	return b.String(), ""
}

func fillExpected(t *ticket) (string, string) {
	if len(t.expected) == 0 {
		return "", "say what you expected (how many buffers, of what size)"
	}
	var b strings.Builder
	for _, e := range t.expected {
		fmt.Fprintf(&b, "- %s\n", render.MdLine(e))
	}
	return b.String(), ""
}

// intelRate is the option of Intel's dropdown a share of runs falls in.
func intelRate(same, of int) string {
	pct := 100 * same / max(of, 1)
	switch {
	case pct == 100:
		return "Always reproduces - 100%"
	case pct >= 75:
		return "Frequently reproduces ~ 75% - 99%"
	case pct >= 50:
		return "Sometimes reproduces ~ 50% - 74%"
	case pct >= 26:
		return "Rarely reproduces ~ 26% - 49%"
	}
	return "Sporadic ~ 0% - 25%"
}

// rateDetail says the rate in numbers: "2 of 2 runs, each at #482"; a crash's "after 482 to 495 buffers".
func (t *ticket) rateDetail() string {
	lo, hi := slices.Min(t.rate.at), slices.Max(t.rate.at)
	where := fmt.Sprintf("each at #%d", lo)
	if lo != hi {
		where = fmt.Sprintf("at #%d to #%d", lo, hi)
	}
	if t.rate.after {
		where = fmt.Sprintf("each after %d buffers", lo)
		if lo != hi {
			where = fmt.Sprintf("after %s buffers", render.Span(lo, hi, " to "))
		}
		if t.rate.batched {
			where += " were made (with up to a batch of 64 in flight; --attribution per-buffer counts them one by one)"
		}
	}
	return fmt.Sprintf("%d of %d runs, %s (clmemprobe run --repeat %d, each run in its own process)", t.rate.same, t.rate.of, where, t.rate.of)
}

func fillRate(t *ticket) (string, string) {
	if !t.failed {
		return "", "nothing failed in this run"
	}
	if !t.rate.known {
		return "", "it ran once; " + t.rateHow
	}
	return render.MdLine(intelRate(t.rate.same, t.rate.of) + ": " + t.rateDetail()), ""
}

func fillIncidence(t *ticket) (string, string) {
	if !t.failed || !t.rate.known {
		return fillRate(t)
	}
	word := "Sometimes"
	if t.rate.same == t.rate.of {
		word = "Always"
	}
	return render.MdLine(word + ": " + t.rateDetail()), ""
}

func fillSteps(t *ticket) (string, string) {
	if len(t.steps) == 0 {
		return "", "give the commands that reproduce it"
	}
	var b strings.Builder
	for i, s := range t.steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	return b.String(), ""
}

func fillIsRegression(t *ticket) (string, string) {
	r := t.regression()
	if r.known {
		mark := " "
		if r.regressed {
			mark = "x"
		}
		return fmt.Sprintf("- [%s] Yes, this is a regression - functionality that previously worked is now broken\n\n%s\n", mark, render.MdLine(r.why)), ""
	}
	return "", r.why
}

func fillLastWorking(t *ticket) (string, string) {
	r := t.regression()
	switch {
	case r.regressed:
		return render.MdLine(r.lastGood), ""
	case t.baseline != nil:
		return "Not known: " + render.MdLine(render.LowerFirst(r.why)), ""
	}
	return "", "not known: give a result from the last driver that worked with `clmemprobe bundle --baseline OLD/run.json`"
}

func fillFirstFailing(t *ticket) (string, string) {
	r := t.regression()
	switch {
	case r.regressed:
		return render.MdLine(r.firstBad), ""
	case t.baseline != nil:
		return "Not known: " + render.MdLine(render.LowerFirst(r.why)), ""
	}
	return "", "not known: this driver fails; bundle with --baseline to compare an earlier one"
}

func fillAPILog(t *ticket) (string, string) {
	if len(t.apiLog) == 0 {
		return "", "trace the program with `clmemprobe trace --calls -- PROGRAM`"
	}
	out := render.MdLine(t.apiWhat) + "\n\n" + render.MdBlock(strings.Join(t.apiLog, "\n"), "")
	if t.o.APILogFile != "" {
		out += "\nEvery recorded call: " + render.MdCode(t.o.APILogFile) + " in the bundle.\n"
	}
	return out, ""
}

func fillStrace(t *ticket) (string, string) {
	if t.withoutRepro() {
		return "", "run the program under strace: `strace -f -tt -o strace.log " + t.program + "`"
	}
	return "", "run the reproducer under strace: `strace -f -tt -o strace.log ./repro` (repro.c is in the bundle)"
}

// withoutRepro says the ticket is a traced program's without a C reproducer: the steps that would run
// ./repro run the program itself.
func (t *ticket) withoutRepro() bool { return t.program != "" && !t.o.HasRepro }

func fillKernelLog(t *ticket) (string, string) {
	if t.klog == nil {
		return "", "this result has no kernel log (written by an older clmemprobe); run `sudo dmesg -T | tail -200` right after reproducing"
	}
	if t.klog.Unreadable != "" {
		return "", t.klog.Unreadable + "; then run it again, or attach `sudo dmesg -T | tail -200` from right after it"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The kernel's log from the start of the run to its end (%s, %d lines", render.MdLine(t.klog.Source), len(t.klog.Window)+t.klog.WindowDropped)
	if t.klog.Lost {
		b.WriteString("; the kernel's ring overwrote some before they were read")
	}
	b.WriteString("), the lines of the GPU drivers, the OOM killer and faults of the run's processes:\n\n")
	if len(t.klog.Lines) == 0 {
		b.WriteString("_None: the kernel logged nothing of the GPU drivers, the OOM killer or the run's processes while it ran._\n")
	} else {
		b.WriteString(render.MdBlock(kernelLines(t.klog.Lines), ""))
	}
	if len(t.klog.Before) > 0 {
		fmt.Fprintf(&b, "\nThe GPU drivers' last %d lines before the run:\n\n%s", len(t.klog.Before), render.MdBlock(kernelLines(t.klog.Before), ""))
	}
	if t.o.KernelLogFile != "" {
		fmt.Fprintf(&b, "\nThe whole window: %s in the bundle.\n", render.MdCode(t.o.KernelLogFile))
	}
	return b.String(), ""
}

// kernelLines writes kernel lines as dmesg does: "[seconds] text".
func kernelLines(lines []result.KernelLine) string {
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "[%12.6f] %s\n", l.Seconds, l.Text)
	}
	return b.String()
}

// KernelLogText is a kernel window as a text file, dmesg's layout.
func KernelLogText(k *result.KernelLog) []byte {
	if k == nil {
		return nil
	}
	s := kernelLines(k.Window)
	if k.WindowDropped > 0 {
		s += fmt.Sprintf("... %d more lines not kept\n", k.WindowDropped)
	}
	return []byte(plainLines(s))
}

// plainLines keeps a text's lines, each as a terminal may show it.
func plainLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = render.Plain(l)
	}
	return strings.Join(lines, "\n")
}

func fillBacktrace(t *ticket) (string, string) {
	if !t.crashed {
		return "No crash or hang: the calls returned their error codes.", ""
	}
	if t.withoutRepro() {
		return "", "run the program under gdb: `gdb -batch -ex run -ex 'thread apply all bt' --args " + t.program + "`"
	}
	return "", "run the reproducer under gdb: `gdb -batch -ex run -ex 'thread apply all bt' --args ./repro`"
}

func fillReproducer(t *ticket) (string, string) {
	if !t.o.HasRepro {
		return "", "there is no C reproducer for this result; the command in the steps repeats it"
	}
	return "`repro.c` in the bundle: the OpenCL API alone, no clmemprobe.\n\n" + render.MdBlock("cc repro.c -lOpenCL -o repro && ./repro", "sh"), ""
}

func fillCommand(t *ticket) (string, string) {
	return render.MdBlock(t.command, "sh") + "\n" + t.subjectOf + "\n", ""
}

func fillOneAPI(t *ticket) (string, string) {
	if t.sys != nil {
		for _, p := range t.sys.Packages {
			if strings.HasPrefix(p.Name, "intel-oneapi") {
				return render.MdLine(p.Name + " " + p.Version), ""
			}
		}
	}
	return "Not applicable: OpenCL through the ICD loader, no oneAPI toolkit.", ""
}

func fillNone(string) func(*ticket) (string, string) {
	return func(*ticket) (string, string) { return "None: the evidence is text, in the bundle.", "" }
}

func fillNotes(t *ticket) (string, string) {
	var b strings.Builder
	if t.env != nil {
		fmt.Fprintf(&b, "- Host: %s, %d CPUs, %s RAM, %s swap, overcommit_memory %s\n", render.MdLine(t.env.CPU), t.env.CPUs,
			units.Bytes(t.env.HostMemBytes), units.Bytes(t.env.SwapBytes), render.MdLine(render.OrDash(t.env.Overcommit)))
		if cg := t.env.MemoryCgroup; cg != nil && cg.LimitBytes > 0 {
			fmt.Fprintf(&b, "- Run in the memory cgroup %s (v%d) with a limit of %s\n", render.MdLine(cg.Path), cg.Version, units.Bytes(cg.LimitBytes))
		}
		if t.env.FDLimit > 0 {
			fmt.Fprintf(&b, "- Open file limit (ulimit -n): %d\n", t.env.FDLimit)
		}
		if vars := t.env.EnvVars; len(vars) > 0 {
			fmt.Fprintf(&b, "- Environment variables that change runtimes (secrets redacted): %s\n", render.MdLine(strings.Join(result.Assignments(vars), " ")))
		}
	}
	if len(t.o.Files) > 0 {
		fmt.Fprintf(&b, "- The bundle also holds %s.\n", render.MdLine(strings.Join(t.o.Files, ", ")))
	}
	return b.String(), ""
}

func fillGPUSummary(t *ticket) (string, string) {
	text, todo := fillGPUHardware(t)
	if text == "" {
		return text, todo
	}
	lspci, _ := fillLspci(t)
	return text + "\n\n" + lspci, ""
}

func fillNVIDIAModule(t *ticket) (string, string) {
	if t.sys != nil && t.sys.NVIDIADriver != "" {
		return render.MdLine(t.sys.NVIDIADriver), ""
	}
	return fillDriverVersion(t)
}

func fillProprietary(t *ticket) (string, string) {
	switch {
	case t.sys == nil || t.sys.NVIDIADriver == "":
		return "", "say whether this ran on the open or the proprietary kernel modules (`cat /proc/driver/nvidia/version`), and whether it reproduces on the other of the same version"
	case strings.Contains(t.sys.NVIDIADriver, "Open Kernel Module"):
		return "", "this ran on the open kernel modules; run the same command on the proprietary modules of the same version and say whether it reproduces"
	}
	return "", "this ran on the proprietary kernel modules; say whether it reproduces on the open ones of the same version"
}

func fillUnameA(t *ticket) (string, string) {
	text, todo := fillKernel(t)
	return text, todo
}

func fillStableKernel(t *ticket) (string, string) {
	if t.env == nil || t.env.Kernel == "" {
		return "", "check that `uname -r` is not a -rc kernel"
	}
	if strings.Contains(t.env.Kernel, "-rc") {
		return "- [ ] I am running on a stable kernel release. (" + render.MdLine(t.env.Kernel) + " is a release candidate)", ""
	}
	return "- [x] I am running on a stable kernel release. (" + render.MdLine(t.env.Kernel) + ")", ""
}

func fillDescribe(t *ticket) (string, string) {
	actual, _ := fillActual(t)
	expected, _ := fillExpected(t)
	if expected != "" {
		actual += "\nExpected:\n\n" + expected
	}
	return actual, ""
}

func fillNVIDIABugReport(*ticket) (string, string) {
	return "", "right after reproducing, run `sudo nvidia-bug-report.sh` and attach nvidia-bug-report.log.gz"
}

func fillMoreInfo(t *ticket) (string, string) {
	var parts []string
	for _, f := range []func(*ticket) (string, string){fillPackages, fillKernelLog, fillAPILog, fillBaseline, fillNotes} {
		if text, _ := f(t); text != "" {
			parts = append(parts, text)
		}
	}
	return strings.Join(parts, "\n"), ""
}

// fillBaseline is the regression's answer for forms without fields of their own, where a baseline was given.
func fillBaseline(t *ticket) (string, string) {
	if t.baseline == nil {
		return "", ""
	}
	text, _ := fillRegressionText(t)
	return "Regression (against the baseline given): " + text, ""
}

func fillCPU(t *ticket) (string, string) {
	if t.env == nil || t.env.CPU == "" {
		return "", "run `grep -m1 'model name' /proc/cpuinfo`"
	}
	return render.MdLine(t.env.CPU), ""
}

func fillROCmVersion(t *ticket) (string, string) {
	if t.sys != nil {
		for _, p := range t.sys.Packages {
			if p.Name == "rocm-core" || strings.HasPrefix(p.Name, "rocm-opencl") {
				return render.MdLine(p.Name + " " + p.Version), ""
			}
		}
	}
	return fillDriverVersion(t)
}

func fillROCmComponent(*ticket) (string, string) {
	return "OpenCL (ROCm-OpenCL-Runtime / CLR): buffer allocation", ""
}

func fillRocminfo(*ticket) (string, string) {
	return "", "run `/opt/rocm/bin/rocminfo --support` and paste its output"
}

func fillPoCLDebug(t *ticket) (string, string) {
	if t.withoutRepro() {
		return "", "run the program with `POCL_DEBUG=all " + t.program + " 2>pocl-debug.log` and attach pocl-debug.log"
	}
	return "", "run the reproducer with `POCL_DEBUG=all ./repro 2>pocl-debug.log` and attach pocl-debug.log"
}

func fillSystemInfo(t *ticket) (string, string) {
	var parts []string
	for _, f := range []func(*ticket) (string, string){fillDistribution, fillKernel, fillGPUSummary, fillDriverVersion, fillPackages} {
		if text, _ := f(t); text != "" {
			parts = append(parts, text)
		}
	}
	return strings.Join(parts, "\n"), ""
}

func fillRegressionText(t *ticket) (string, string) {
	r := t.regression()
	if !r.known {
		return "", r.why
	}
	if r.regressed {
		return render.MdLine(fmt.Sprintf("Yes: it worked with %s and fails with %s. %s", r.lastGood, r.firstBad, r.why)), ""
	}
	return render.MdLine(r.why), ""
}

func fillLogAttachments(t *ticket) (string, string) {
	text, todo := fillKernelLog(t)
	if api, _ := fillAPILog(t); api != "" {
		text += "\n" + api
	}
	return text, todo
}
