package findings

import (
	"fmt"
	"math"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// The resource rules. A resource with a limit explains a failure when it was at its limit when the
// strategy ended (within limitSlack of it, or two buffers' worth), or when the index its slope predicts
// for reaching the limit (its value at the start plus the slope times the buffers) lands within
// predictionSlack of the observed index (or predictionBuffers buffers, whichever is more).
const (
	limitSlack        = 0.02
	predictionSlack   = 0.05
	predictionBuffers = 8
	// perBufferFloor is the least slope that counts as a cost per buffer: below it the resource did not
	// grow with the buffers (a descriptor per hundred buffers is noise of the runtime's own).
	perBufferFloor = 0.01
	cgroupFull     = 0.90 // a memory cgroup at this fraction of its limit is full
	sharedDevice   = 0.05 // memory in use before the loop above this fraction of the device: others held it
)

// prediction is where a resource's slope says it reaches its limit, against where the strategy ended.
type prediction struct {
	name          string // "descriptors"
	res           *result.Resource
	predicted     float64 // the buffer index at which the limit is reached, by the slope; +Inf without one
	observed      uint64
	atLimit, meet bool
}

func predict(name string, r *result.Resource, observed uint64) prediction {
	p := prediction{name: name, res: r, observed: observed, predicted: math.Inf(1)}
	if r == nil || r.Limit == 0 {
		return p
	}
	perBuffer := 0.0
	if r.PerBuffer != nil {
		perBuffer = *r.PerBuffer
	}
	p.atLimit = float64(r.AtEnd)+max(limitSlack*float64(r.Limit), 2*perBuffer) >= float64(r.Limit)
	if perBuffer >= perBufferFloor && r.Limit > r.AtStart {
		p.predicted = float64(r.Limit-r.AtStart) / perBuffer
		p.meet = math.Abs(p.predicted-float64(observed)) <= max(predictionSlack*float64(observed), predictionBuffers)
	}
	return p
}

// explains says whether the resource accounts for the end.
func (p prediction) explains() bool { return p.atLimit || p.meet }

// predictedText is the predicted index in words.
func (p prediction) predictedText() string {
	if math.IsInf(p.predicted, 1) {
		return "no slope to predict from"
	}
	return fmt.Sprintf("predicted #%.0f", p.predicted)
}

// endIndex is where a strategy ended: its failed buffer, or the buffers it reached.
func endIndex(v *limitInput) uint64 {
	if f := v.failure; f != nil && v.outcome == result.OutcomeFailed {
		return f.index
	}
	return v.allocationsOK
}

// oomKilled says whether the worker's memory cgroup's OOM killer ended it: the worker died by SIGKILL and
// the cgroup's count of OOM kills grew while it ran.
func oomKilled(v *limitInput) (*result.Cgroup, bool) {
	cg := v.cgroup
	return cg, cg != nil && v.outcome == result.OutcomeCrashed && v.signal == "SIGKILL" && cg.OOMKillsAtEnd > cg.OOMKillsAtStart
}

// kernelSaidIt quotes the kernel's line for a sentence, "" where it said nothing.
func kernelSaidIt(line result.KernelLine, said bool) string {
	if !said {
		return ""
	}
	return fmt.Sprintf("; the kernel logged %q at %.3f s", result.KernelQuote(line.Text), line.Seconds)
}

// gpuFault is the rule of a GPU that faulted: the kernel logged a GPU fault, hang or reset (an NVIDIA Xid,
// i915's GPU HANG, an amdgpu ring timeout) while the job's worker ran, so its failure or crash is that
// fault's, not a memory limit's.
func gpuFault(v *limitInput, ev map[string]float64) (limitFinding, bool) {
	faults := v.gpuFaults
	if len(faults) == 0 {
		return limitFinding{}, false
	}
	ev["kernel_gpu_faults"], ev["kernel_fault_t"] = float64(len(faults)), faults[0].Seconds
	what := "failed"
	if f := v.failure; f != nil && v.outcome == result.OutcomeFailed {
		what = fmt.Sprintf("failed with %d (%s) at #%d", f.code, f.name, f.index)
	} else if v.outcome != result.OutcomeFailed {
		what = string(v.outcome)
	}
	return limitFinding{result.LimitGPUFault, ev, fmt.Sprintf("it %s while the kernel logged %s: %q at %.3f s; the GPU faulted, hung or was reset, so this is a driver or hardware fault to report, not a memory limit (gpu-fault)",
			what, plural(float64(len(faults)), "GPU fault line"), result.KernelQuote(faults[0].Text), faults[0].Seconds), nil},
		true
}

// resourceLimit classifies an end by the resource ledger: the cgroup's OOM killer, the cgroup's memory at
// its limit, descriptors at RLIMIT_NOFILE. ok is false when no resource explains it.
func resourceLimit(v *limitInput, ev map[string]float64) (limitFinding, bool) {
	line, kernelSaid := v.oomLine, v.oomLogged
	if kernelSaid {
		ev["kernel_oom_pid"], ev["kernel_oom_t"] = float64(line.PID), line.Seconds
	}
	if cg, killed := oomKilled(v); killed {
		ev["cgroup_limit_bytes"], ev["cgroup_oom_kills"] = float64(cg.Memory.Limit), float64(cg.OOMKillsAtEnd-cg.OOMKillsAtStart)
		ev["cgroup_used_bytes"], ev["cgroup_oom_kills_at_start"], ev["cgroup_oom_kills_at_end"] = float64(cg.Memory.AtEnd), float64(cg.OOMKillsAtStart), float64(cg.OOMKillsAtEnd)
		// The cgroup's memory is read with the samples: the last reading comes before the kill, by up to a
		// sample's interval of buffers (970.54 MiB read, 65 buffers before a kill at the 1 GiB limit).
		return limitFinding{result.LimitCgroupMemory, ev, fmt.Sprintf("the OOM killer of the memory cgroup %s ended it %s (its oom_kill count went from %d to %d%s); the cgroup's last reading before the kill was %s of its %s limit (%s): the container's or job's memory limit, not the machine's, is the limit (cgroup-memory)",
				cg.Path, v.after(), cg.OOMKillsAtStart, cg.OOMKillsAtEnd, kernelSaidIt(line, kernelSaid), units.Bytes(cg.Memory.AtEnd), limitText(cg.Memory.Limit), cg.Memory.LimitSource), nil},
			true
	}
	if kernelSaid && line.ByMemoryCgroup() {
		// The kernel's line says a memory cgroup's OOM killer acted, where the cgroup's own count was not read.
		which := "its memory cgroup"
		if cg := v.cgroup; cg != nil && cg.Memory.Limit > 0 {
			ev["cgroup_limit_bytes"] = float64(cg.Memory.Limit)
			which = fmt.Sprintf("its memory cgroup %s, whose limit is %s,", cg.Path, units.Bytes(cg.Memory.Limit))
		}
		return limitFinding{result.LimitCgroupMemory, ev, fmt.Sprintf("the OOM killer of %s ended %s %s%s: the container's or job's memory limit, not the machine's, is the limit (cgroup-memory)",
				which, v.subject, v.after(), kernelSaidIt(line, true)), nil},
			true
	}
	if kernelSaid {
		// No memory cgroup counted it: the machine's OOM killer, which acts when the system's memory ran out.
		ev["host_available_bytes"], ev["host_ram_bytes"] = float64(v.availAtEnd), float64(v.ram)
		return limitFinding{result.LimitHostMemory, ev, fmt.Sprintf("the kernel's OOM killer ended it %s%s, with %s of the system's memory available at the last sample: host memory ran out (host-memory)",
				v.after(), kernelSaidIt(line, true), units.Bytes(v.availAtEnd)), nil},
			true
	}
	if v.outcome == result.OutcomeStopped || v.outcome == result.OutcomeCompleted {
		return limitFinding{}, false
	}
	fds := v.fds
	if p := predict("descriptors", fds, endIndex(v)); p.explains() {
		ev["fds_at_start"], ev["fd_limit"], ev["fds_at_end"] = float64(fds.AtStart), float64(fds.Limit), float64(fds.AtEnd)
		per := "no measurable count per buffer"
		if fds.PerBuffer != nil {
			ev["fds_per_buffer"] = *fds.PerBuffer
			per = fmt.Sprintf("%s per buffer", plural(*fds.PerBuffer, "descriptor"))
		}
		return limitFinding{result.LimitFileDescriptors, ev, fmt.Sprintf("%s, %d open at the start, limit %d (%s): descriptors ran out at #%d (%s, %d open at the end) (file-descriptors)",
				per, fds.AtStart, fds.Limit, fds.LimitSource, p.observed, p.predictedText(), fds.AtEnd), nil},
			true
	}
	if cg := v.cgroup; cg != nil && cg.Memory.Limit > 0 && float64(cg.Memory.AtEnd) >= cgroupFull*float64(cg.Memory.Limit) {
		ev["cgroup_limit_bytes"], ev["cgroup_used_bytes"] = float64(cg.Memory.Limit), float64(cg.Memory.AtEnd)
		return limitFinding{result.LimitCgroupMemory, ev, fmt.Sprintf("the memory cgroup %s held %s, %.0f%% of its %s limit (%s), when it ended: the container's or job's memory limit, not the machine's, ran out (cgroup-memory)",
				cg.Path, units.Bytes(cg.Memory.AtEnd), 100*float64(cg.Memory.AtEnd)/float64(cg.Memory.Limit), limitText(cg.Memory.Limit), cg.Memory.LimitSource), nil},
			true
	}
	return limitFinding{}, false
}

// guardLimit is the limit of a strategy the host guard stopped: the worker's address space under the limit
// it inherited (ulimit -v), the cgroup's memory or the host's.
func guardLimit(v *limitInput, ev map[string]float64) limitFinding {
	if as := v.addressSpaceBytes; v.guard == result.GuardAddressSpace && as > 0 {
		ev["vms_bytes"], ev["address_space_bytes"] = float64(v.vmsAtEnd), float64(as)
		return limitFinding{result.LimitAddressSpace, ev, fmt.Sprintf("the host guard stopped it before the worker's address space reached its limit of %s (ulimit -v, which the worker inherits): it held %s, %.0f%% of it, when it ended; address space, not memory, is the limit (address-space)",
			units.Bytes(as), units.Bytes(v.vmsAtEnd), 100*float64(v.vmsAtEnd)/float64(as)), nil}

	}
	if cg := v.cgroup; v.guard == result.GuardCgroup && cg != nil {
		ev["cgroup_limit_bytes"], ev["cgroup_used_bytes"] = float64(cg.Memory.Limit), float64(cg.Memory.AtEnd)
		return limitFinding{result.LimitCgroupMemory, ev, fmt.Sprintf("the host guard stopped it before the memory cgroup %s ran out: %s of its %s limit (%s) in use, a container's or a batch job's limit, far below the machine's memory (cgroup-memory)",
			cg.Path, units.Bytes(cg.Memory.AtEnd), limitText(cg.Memory.Limit), cg.Memory.LimitSource), nil}

	}
	ev["host_reserve_bytes"] = float64(v.hostReserve)
	if v.availAtEnd > 0 {
		ev["host_available_bytes"] = float64(v.availAtEnd)
	}
	return limitFinding{result.LimitHostMemory, ev, fmt.Sprintf("the host guard stopped it before system available memory fell below the reserve of %s (--host-reserve): host memory, as far as this run may use it, is the limit (host-memory)",
		units.Bytes(v.hostReserve)), nil}

}

// deviceShare is, for one device, the memory in use before the loop began and what other processes held,
// by the ledger (othersKnown: where it lists processes), with those processes.
type deviceShare struct {
	device              int
	usedAtStart, others uint64
	othersKnown         bool
	procs               []result.DeviceProcess
}

// ledgerShare is one device's share as a run's ledger tells it: the processes at the end, else at the start.
func ledgerShare(d *result.DeviceLedger) deviceShare {
	sh := deviceShare{device: d.Device, usedAtStart: d.UsedAtStartBytes}
	sh.others, sh.othersKnown = d.OthersBytes()
	sh.procs = d.ProcessesAtEnd
	if sh.procs == nil {
		sh.procs = d.ProcessesAtStart
	}
	return sh
}

// shareOf is a device's share; ok is false where the ledger has no figure for the device.
func (v *limitInput) shareOf(dev int) (deviceShare, bool) {
	for _, sh := range v.shares {
		if sh.device == dev {
			return sh, true
		}
	}
	return deviceShare{}, false
}

// shared says whether other processes held a part of the device that matters: by the process list where
// there is one, else by the memory in use before the loop.
func (sh deviceShare) shared(global uint64) bool {
	held := sh.usedAtStart
	if sh.othersKnown {
		held = sh.others
	}
	return global > 0 && float64(held) >= sharedDevice*float64(global)
}

// othersText names who held the device besides the run: the processes with their memory, or the memory in
// use before the loop.
func (sh deviceShare) othersText() string {
	if !sh.othersKnown {
		return fmt.Sprintf("%s was in use before its loop began (other processes, and this worker's context)", units.Bytes(sh.usedAtStart))
	}
	var names []string
	for _, p := range sh.procs {
		if p.Own || p.PID == 0 || len(names) == 4 {
			continue // the run's own, a figure for all others together, or past the four named
		}
		name := p.Name
		if name == "" {
			name = "not visible here"
		}
		names = append(names, fmt.Sprintf("pid %d %s: %s", p.PID, name, units.Bytes(p.UsedBytes)))
	}
	if len(names) == 0 {
		return fmt.Sprintf("other processes held %s", units.Bytes(sh.others))
	}
	return fmt.Sprintf("other processes held %s (%s)", units.Bytes(sh.others), strings.Join(names, ", "))
}

// limitText is a limit in bytes, or "no".
func limitText(b uint64) string {
	if b == 0 {
		return "no"
	}
	return units.Bytes(b)
}

// plural writes a count per buffer with its noun.
func plural(n float64, noun string) string {
	s := fmt.Sprintf("%.2g %s", n, noun)
	if math.Abs(n-1) > 0.005 {
		s += "s"
	}
	return s
}
