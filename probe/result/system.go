package result

import (
	"strings"
	"time"
)

// System is what a driver team's bug template asks of the machine beyond the environment block: the GPUs
// on the PCI bus with their kernel drivers and BARs, the DRI nodes' PCI mapping, the kernel's build, boot
// parameters and GPU modules, the driver's own version file and the installed driver packages. Each
// collector fills its part or says in Unread why it could not; collecting never fails.
type System struct {
	// Distribution is os-release's PRETTY_NAME ("Debian GNU/Linux 12 (bookworm)").
	Distribution string `json:"distribution,omitempty"`
	// KernelBuild is /proc/sys/kernel/version ("#1 SMP PREEMPT_DYNAMIC Debian 6.1.129-1"); the release is
	// Environment.Kernel.
	KernelBuild    string `json:"kernel_build,omitempty"`
	BootParameters string `json:"boot_parameters,omitempty"`
	// Modules are the loaded kernel modules that drive or serve GPUs, with the version each declares.
	Modules []KernelModule `json:"kernel_modules,omitempty"`
	// NVIDIADriver is the first line of /proc/driver/nvidia/version, where the NVIDIA module is loaded.
	NVIDIADriver string `json:"nvidia_driver,omitempty"`
	// PCI are the display controllers and processing accelerators on the PCI bus.
	PCI []PCIDevice `json:"pci_devices,omitempty"`
	// DRIByPath maps /dev/dri/by-path names to the node each points at ("pci-0000:03:00.0-render" ->
	// "renderD128").
	DRIByPath map[string]string `json:"dri_by_path,omitempty"`
	// PackageManager is the package database the packages were read from: dpkg or rpm.
	PackageManager string    `json:"package_manager,omitempty"`
	Packages       []Package `json:"packages,omitempty"`
	// Unowned are the run's OpenCL files (the loader, the ICD files and their libraries) that no package
	// owns: installed by hand, by a vendor's installer, or mounted by a container runtime.
	Unowned []string `json:"unowned,omitempty"`
	// Unread names, per collector, what could not be read and why.
	Unread map[string]string `json:"unread,omitempty"`
}

// KernelModule is a loaded kernel module.
type KernelModule struct {
	Name    string   `json:"name"`
	Version string   `json:"version,omitempty"` // /sys/module/NAME/version, where the module declares one
	UsedBy  []string `json:"used_by,omitempty"`
}

// PCIDevice is one PCI function, as lspci -vvv -k shows what matters here.
type PCIDevice struct {
	Address         string   `json:"address"` // dddd:bb:dd.f
	Class           string   `json:"class"`   // 0x030200
	Vendor          string   `json:"vendor"`  // 0x10de
	Device          string   `json:"device"`
	SubsystemVendor string   `json:"subsystem_vendor,omitempty"`
	SubsystemDevice string   `json:"subsystem_device,omitempty"`
	Revision        string   `json:"revision,omitempty"`
	Driver          string   `json:"driver,omitempty"` // the kernel driver in use
	BARs            []PCIBar `json:"bars,omitempty"`
	LinkSpeed       string   `json:"link_speed,omitempty"` // "32.0 GT/s PCIe"
	LinkWidth       string   `json:"link_width,omitempty"`
	MaxLinkSpeed    string   `json:"max_link_speed,omitempty"`
	MaxLinkWidth    string   `json:"max_link_width,omitempty"`
	NUMANode        string   `json:"numa_node,omitempty"`
	// DRM are the device's DRM nodes (card1, renderD128).
	DRM []string `json:"drm,omitempty"`
	// Firmware are the versions sysfs or the driver's /proc files give (vbios_version, video_bios).
	Firmware map[string]string `json:"firmware,omitempty"`
}

// PCIBar is one memory region of a PCI device. A small BAR 0/2 in front of a large VRAM (no resizable BAR)
// is a known cause of failures of large allocations.
type PCIBar struct {
	Index        int    `json:"index"`
	Bytes        uint64 `json:"bytes"`
	Prefetchable bool   `json:"prefetchable,omitempty"`
	Bits64       bool   `json:"64bit,omitempty"`
}

// Package is an installed package and why it was recorded.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Owns is the file of the run's OpenCL the package owns (the loader, an ICD's library), where that
	// is why it was recorded; otherwise it is one of the vendor's usual driver packages.
	Owns string `json:"owns,omitempty"`
}

// KernelLog is the kernel's log over a run's or a trace's window: the lines that matter (GPU drivers, the
// OOM killer, faults of the tool's workers or the traced program) and the whole window beside them.
type KernelLog struct {
	// Source is where it was read: /dev/kmsg, syslog(2) (what dmesg reads) or journalctl.
	Source string `json:"source,omitempty"`
	// Unreadable says why no log could be read and what gives access; the rest is then empty.
	Unreadable string `json:"unreadable,omitempty"`
	// Lines are the window's lines that matter, in order.
	Lines []KernelLine `json:"lines,omitempty"`
	// Before are the GPU drivers' last lines before the window (the driver's load, earlier faults), for
	// the ticket's context.
	Before []KernelLine `json:"before,omitempty"`
	// Window is every line of the window, at most KernelWindowLines; WindowDropped counts the rest.
	Window        []KernelLine `json:"window,omitempty"`
	WindowDropped int          `json:"window_dropped,omitempty"`
	// Lost says the kernel's ring buffer overwrote lines of the window before they were read.
	Lost bool `json:"lost,omitempty"`
}

// KernelWindowLines bounds a recorded window.
const KernelWindowLines = 4000

// KernelLine is one kernel log line.
type KernelLine struct {
	Seconds float64        `json:"t"`              // the kernel's timestamp (seconds since boot)
	Wall    string         `json:"wall,omitempty"` // RFC 3339, from the timestamp and the window's start
	Kind    KernelLineKind `json:"kind,omitempty"`
	// PID is the process the line is about (the one killed, faulted or named), 0 where it names none.
	PID  int    `json:"pid,omitempty"`
	Text string `json:"text"`
}

// KernelLineKind is what a kernel line is about.
type KernelLineKind string

// The kinds of kernel line a report uses.
const (
	KernelOOM      KernelLineKind = "oom"       // the OOM killer: invoked, killed, reaped
	KernelGPU      KernelLineKind = "gpu"       // a GPU driver's line
	KernelGPUFault KernelLineKind = "gpu-fault" // a GPU fault, hang or reset (an NVIDIA Xid, i915's GPU HANG)
	KernelSegfault KernelLineKind = "segfault"  // a process's fault (segfault, trap)
)

// Attempt is one more run of a job (run --repeat), each in its own worker: how it ended.
type Attempt struct {
	WorkerPID     int           `json:"worker_pid,omitempty"`
	Outcome       Outcome       `json:"outcome"`
	Signal        string        `json:"signal,omitempty"`
	AllocationsOK uint64        `json:"allocations_ok"`
	FirstFailure  *FirstFailure `json:"first_failure"`
	Limit         Limit         `json:"limit,omitempty"`
	Seconds       float64       `json:"seconds"`
	LoopStarted   string        `json:"loop_started,omitempty"`
}

// AttemptOf is how a job's own (first) run ended, in an Attempt.
func AttemptOf(s *JobResult) Attempt {
	return Attempt{WorkerPID: s.WorkerPID, Outcome: s.Outcome, Signal: s.Signal, AllocationsOK: s.AllocationsOK,
		FirstFailure: s.FirstFailure, Limit: s.Limit, Seconds: s.Seconds, LoopStarted: s.LoopStarted}
}

// Attempts are every run of the job: its own first, then its repeats.
func (s *JobResult) Attempts() []Attempt {
	return append([]Attempt{AttemptOf(s)}, s.Repeats...)
}

// Reproduced says how many of the job's runs ended as its first did (the same outcome, and for a failure
// the same code at the same call; for a crash the same signal), of how many, with the index each
// reproducing run failed or ended at. A job that ran once has 1 of 1.
func (s *JobResult) Reproduced() (same, of int, at []uint64) {
	all := s.Attempts()
	first := all[0]
	for _, a := range all {
		if !sameEnding(first, a) {
			continue
		}
		same++
		at = append(at, a.endIndex())
	}
	return same, len(all), at
}

func sameEnding(a, b Attempt) bool {
	if a.Outcome != b.Outcome || a.Signal != b.Signal || (a.FirstFailure == nil) != (b.FirstFailure == nil) {
		return false
	}
	return a.FirstFailure == nil || (a.FirstFailure.Code == b.FirstFailure.Code && a.FirstFailure.Call == b.FirstFailure.Call)
}

// endIndex is the buffer a run failed at, else how many it had when it ended.
func (a Attempt) endIndex() uint64 {
	if a.FirstFailure != nil {
		return a.FirstFailure.Index
	}
	return a.AllocationsOK
}

// Killed is the OOM killer's line that names pid as the process it killed ("Killed process PID (NAME)"),
// else its "oom-kill:" line naming it; false where the log has neither (or was not read).
func (k *KernelLog) Killed(pid int) (KernelLine, bool) {
	if k == nil || pid <= 0 {
		return KernelLine{}, false
	}
	var found *KernelLine
	for i, l := range k.Lines {
		if l.Kind != KernelOOM || l.PID != pid {
			continue
		}
		if strings.Contains(l.Text, "Killed process") {
			return l, true
		}
		if found == nil {
			found = &k.Lines[i]
		}
	}
	if found != nil {
		return *found, true
	}
	return KernelLine{}, false
}

// ByMemoryCgroup says the OOM kill this line records was a memory cgroup's, at its limit, not the
// machine's: the kernel writes "Memory cgroup out of memory: Killed process ..." and
// "oom-kill:constraint=CONSTRAINT_MEMCG,..." for those.
func (l KernelLine) ByMemoryCgroup() bool {
	return strings.HasPrefix(l.Text, "Memory cgroup out of memory") || strings.Contains(l.Text, "constraint=CONSTRAINT_MEMCG")
}

// FaultsDuring are the GPU fault, hang and reset lines logged between from and to (wall clock).
func (k *KernelLog) FaultsDuring(from, to time.Time) []KernelLine {
	if k == nil {
		return nil
	}
	var out []KernelLine
	for _, l := range k.Lines {
		if l.Kind != KernelGPUFault {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, l.Wall); err == nil && !t.Before(from) && !t.After(to) {
			out = append(out, l)
		}
	}
	return out
}

// KernelQuote is a kernel line cut to its statement, for a sentence: an OOM kill's line without its
// memory figures ("Memory cgroup out of memory: Killed process 5668 (clmemprobe)").
func KernelQuote(text string) string {
	if i := strings.Index(text, " total-vm:"); i > 0 {
		text = strings.TrimRight(text[:i], ",")
	}
	if len(text) > 160 {
		text = strings.ToValidUTF8(text[:160], "") + "..."
	}
	return text
}

// Window is when the job's worker ran: from its loop's start less its setup to its end, with a second's
// slack for the kernel's clock against the wall clock. ok is false where the job recorded no start.
func (s *JobResult) Window() (from, to time.Time, ok bool) {
	t, err := time.Parse(time.RFC3339Nano, s.LoopStarted)
	if err != nil {
		return time.Time{}, time.Time{}, false
	}
	from = t.Add(-time.Duration((s.SetupSeconds + 1) * float64(time.Second)))
	to = t.Add(time.Duration((s.Seconds + 1) * float64(time.Second))) // Seconds holds the setup too: an end late enough
	return from, to, true
}

// TraceCall is one record of a traced program's calls (trace --calls): a call, or a run of Count identical
// calls, with its arguments and result. T is when the tool read it from the layer's ring, seconds from the
// trace's start (the layer stamps no time on a create: that would cost every call; reads are every 2 ms).
// An entry with Skipped > 0 stands for that many records not kept between its neighbours.
type TraceCall struct {
	T        float64 `json:"t"`
	Index    uint64  `json:"index"` // allocation calls before it
	Call     string  `json:"call,omitempty"`
	Context  int     `json:"context,omitempty"` // -1 where not tracked
	Size     uint64  `json:"size,omitempty"`
	Flags    string  `json:"flags,omitempty"`
	Code     int32   `json:"code,omitempty"`
	CodeName string  `json:"code_name,omitempty"`
	Count    uint64  `json:"count,omitempty"`
	Devices  int     `json:"devices,omitempty"` // of a context create
	Skipped  uint64  `json:"skipped,omitempty"`
	// Failure marks the program's first failed call.
	Failure bool `json:"failure,omitempty"`
	// Issued marks a command logged as the program made it, before the runtime answered (so a call the
	// program was killed in is logged): it has no result; a failure is logged after it as a call of its own.
	Issued bool `json:"issued,omitempty"`
}
