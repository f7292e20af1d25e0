package findings

import (
	"fmt"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// limitInput is what the limit classifier (classify and every rule it calls) reads of one end: a run's job
// (jobInput) or a traced program's (traceInput). The rules read nothing else, so a trace is judged by the
// rules a run's job is, from what the trace holds, and no rule can come to depend on a field that only a
// run's job has.
type limitInput struct {
	// How it ended.
	outcome      result.Outcome
	reason       string
	signal       string
	guard        result.Guard
	guardStopped bool // the host guard stopped it (result.JobResult.GuardStopped)
	interrupted  bool // the user stopped it (result.JobResult.Interrupted)
	failure      *failure
	// allocationsOK and bytesOK are the buffers made before the end, and their bytes.
	allocationsOK, bytesOK uint64

	// What it allocated, and where: buffers of sizeBytes with flags, in turn over devices.
	sizeBytes     uint64
	flags         string
	devices       []int
	sharesContext bool // one context over all its devices

	// The process's limits and the ledger of what it held.
	maxMappings, maxMapCount uint64
	addressSpaceBytes        uint64
	fds                      *result.Resource
	cgroup                   *result.Cgroup
	shares                   []deviceShare // each ledgered device's memory before the loop and who held it
	hostReserve              uint64        // what the host guard keeps (--host-reserve)

	// The host's costs per buffer, for what a buffer held outside the process's RSS.
	fit                                 *result.Fit
	hostPerBuffer                       float64
	systemPerBuffer, committedPerBuffer *float64
	noise                               result.SlopeNoise
	// ownCgroupPerBuffer is the slope of the run's own memory cgroup (one with a limit, or below the root;
	// not the root's, which is the whole machine's): the witness of the memory charged to the run, which
	// other processes do not move. nil: none fitted.
	ownCgroupPerBuffer *float64
	// inFlight is how many of the buffers made the device had not confirmed when a worker died with a batch
	// in flight: the job's end lies between allocationsOK less it and allocationsOK (afterBuffers).
	inFlight uint64
	// createdOnly says the count is of buffers created (a traced program's: nothing says each was done with),
	// and issuedSince the commands the program issued after its last create, as its call log has them.
	createdOnly bool
	issuedSince []string
	// subject names the process that ran the calls, in the limit's words: "the worker" (a run's job) or
	// "the program" (a trace).
	subject string
	// placement is how a run's job placed its buffers (placementUnknown for a traced program), so that a
	// comparison is made only between jobs placed alike.
	placement placement

	// What the kernel logged while it ran: its OOM killer's line for the worker, its GPU faults.
	oomLine   result.KernelLine
	oomLogged bool
	gpuFaults []result.KernelLine
	// runtimeName and aborts are the runtime's row (RuntimeOf): how it fails where it returns no code.
	runtimeName, aborts string
	// rlimitAS is the address-space limit the job's variant set (rlimitASSet), and variantName that variant.
	rlimitAS    string
	rlimitASSet bool
	variantName string

	// At the end (atEnd): the device the failed buffer was meant for (-1 when none), its sizes, its use.
	failDev   int
	global    uint64 // that device's global memory, 0 when unknown
	maxAlloc  uint64 // that device's largest allocation, 0 when unknown
	sampled   bool   // a device sampler applied
	used      uint64 // that device's sampled use at the end, when sampled
	usedKnown bool
	given     uint64 // bytes of the buffers meant for that device before the failure
	// availAtEnd is system available memory at the end, vmsAtEnd the process's address space then, ram the
	// host's memory.
	availAtEnd, vmsAtEnd, ram uint64

	// failedWhat names what failed, where a limit says "when ... failed": "buffer #N" (the failure's index),
	// unless set (a traced program's command on a buffer the index does not stand for).
	failedWhat string
	// givenUnknown, where set, says why the bytes given to the failing device before the failure are not
	// known (a traced command on an older buffer): the rules that read them do not apply.
	givenUnknown string
}

// after says where the job ended, in buffers: "after 1031 buffers", or a range where a batch was in flight.
// A traced program's count is of the buffers it created, which is all a trace knows of them: "after
// creating 953 buffers", with the commands it had issued since the last, whose answers a trace does not log.
func (v *limitInput) after() string {
	if v.createdOnly {
		s := "after creating " + units.Counted(v.allocationsOK, "buffer")
		if len(v.issuedSince) > 0 {
			s += fmt.Sprintf(" (it had issued %s since the last create; whether they returned is not logged)", listOf(v.issuedSince, func(c string) string { return c }))
		}
		return s
	}
	return afterBuffers(v.allocationsOK-min(v.inFlight, v.allocationsOK), v.allocationsOK)
}

// afterBuffers says where a job ended in buffers, from the last the device confirmed to the last made:
// "after 1031 buffers", or, where a batch of buffers was in flight when its worker died, "after 967 to
// 1031 buffers (967 confirmed by the device, the rest of a batch in flight; --attribution per-buffer pins
// the buffer)".
func afterBuffers(from, to uint64) string {
	if from >= to {
		return "after " + units.Counted(to, "buffer")
	}
	return fmt.Sprintf("after %s buffers (%d confirmed by the device, the rest of a batch in flight; --attribution per-buffer pins the buffer)", render.Span(from, to, " to "), from)
}

// AfterBuffers is afterBuffers of a run's job, for the other renderers.
func AfterBuffers(s *result.JobResult) string { return afterBuffers(s.MadeRange()) }

// failure is the first failure as the rules read it: the buffer's index (the buffers made before it), the
// loop's stage, the code, the device the buffer was meant for, and the host's available memory then (0:
// not read).
type failure struct {
	index     uint64
	stage     result.Stage
	code      int32
	name      string
	device    int
	hostAvail uint64
}

// jobInput is a run's job as the limit classifier reads it.
func jobInput(r *result.Run, s *result.JobResult) *limitInput {
	in := &limitInput{subject: "the worker", outcome: s.Outcome, reason: s.Reason, signal: s.Signal, guard: s.Guard, guardStopped: s.GuardStopped(),
		interrupted: s.Interrupted(), allocationsOK: s.AllocationsOK, bytesOK: s.BytesOK, sizeBytes: s.SizeBytes, flags: s.Flags,
		devices: s.Devices, sharesContext: s.Strategy.SharesContext(), maxMappings: s.MaxMappings, maxMapCount: s.MaxMapCount,
		addressSpaceBytes: s.AddressSpaceBytes, hostReserve: r.Config.HostReserveByte, fit: s.JudgedFit(),
		hostPerBuffer: s.HostBytesPerBuffer, systemPerBuffer: s.SystemBytesPerBuffer, committedPerBuffer: s.CommittedBytesPerBuffer,
		noise: s.Noise()}
	if from, to := s.MadeRange(); from < to {
		in.inFlight = to - from
	}
	if f := s.FirstFailure; f != nil {
		in.failure = &failure{index: f.Index, stage: f.Stage, code: f.Code, name: f.Name, device: f.Device, hostAvail: f.HostAvail}
	}
	if rs := s.Resources; rs != nil {
		in.fds, in.cgroup = rs.FDs, rs.Cgroup
		// A cgroup with a memory limit is a container's or a job's even where a cgroup namespace names it
		// "/"; one without a limit is the run's own only below the root.
		if cg := rs.Cgroup; cg != nil && (cg.Memory.Limit > 0 || cg.Path != "" && cg.Path != "/") {
			in.ownCgroupPerBuffer = cg.Memory.PerBuffer
		}
		for i := range rs.Devices {
			in.shares = append(in.shares, ledgerShare(&rs.Devices[i]))
		}
	}
	rt := RuntimeOf(r.Platform)
	in.runtimeName, in.aborts = rt.Name, rt.Aborts
	if set, ok := s.VariantSettings["RLIMIT_AS"]; ok {
		in.rlimitAS, in.rlimitASSet, in.variantName = set, true, variantLabel(r, s.Variant)
	}
	if s.Outcome == result.OutcomeCrashed && s.Signal == "SIGKILL" {
		in.oomLine, in.oomLogged = r.KernelLog.Killed(s.WorkerPID)
	}
	if from, to, ok := s.Window(); ok {
		in.gpuFaults = r.KernelLog.FaultsDuring(from, to)
	}
	if r.Environment != nil {
		in.ram = r.Environment.HostMemBytes
	}
	var last *result.Sample
	if n := len(s.Samples); n > 0 {
		last = &s.Samples[n-1]
	}
	in.atEnd(last, s.DeviceSampler.Measured(), func(dev int) (uint64, uint64) {
		return result.GlobalOf(r, s, dev), result.MaxAllocOf(r, s, dev)
	})
	return in
}

// atEnd derives what the rules read of the end from its last sample (nil: none), whether a device sampler
// applied, and the devices' global memory and largest allocation (sizes): the failing device and its
// figures, and the host's memory. The failure's own reading of available memory is the later one.
func (in *limitInput) atEnd(last *result.Sample, sampled bool, sizes func(dev int) (global, maxAlloc uint64)) {
	in.failDev, in.sampled = -1, sampled
	if last != nil {
		in.availAtEnd, in.vmsAtEnd = last.AvailBytes, last.VMSBytes
	}
	if f := in.failure; f != nil {
		if f.hostAvail > 0 {
			in.availAtEnd = f.hostAvail
		}
		if f.stage != result.StageSetup {
			in.failDev = f.device
		}
	}
	if in.failDev < 0 {
		return
	}
	in.global, in.maxAlloc = sizes(in.failDev)
	if last != nil && sampled {
		for _, d := range last.DeviceSamples {
			if d.Device == in.failDev {
				in.used, in.usedKnown = d.UsedBytes, true
			}
		}
	}
	// Buffers i < index with i mod n == pos were meant for the failing device.
	pos := -1
	for i, d := range in.devices {
		if d == in.failDev {
			pos = i
		}
	}
	if pos >= 0 {
		n := uint64(len(in.devices))
		idx := in.failure.index
		count := idx / n
		if idx%n > uint64(pos) {
			count++
		}
		in.given = count * in.sizeBytes
	}
}

// failed is what failed, for "when ... failed".
func (in *limitInput) failed() string {
	if in.failedWhat != "" {
		return in.failedWhat
	}
	return fmt.Sprintf("buffer #%d", in.failure.index)
}

// fill is used (or given) bytes as a fraction of the failing device's memory.
func (in *limitInput) fill(bytes uint64) float64 {
	if in.global == 0 {
		return 0
	}
	return float64(bytes) / float64(in.global)
}

// outsideRSS is host memory per buffer that the run was charged, or the system lost, while the process's
// RSS did not grow with it: memory a driver or a runtime holds outside the process (shared memory, pinned
// staging), or promised and not yet touched. signal names which measurement shows it. Where the run has a
// memory cgroup of its own, that is the witness, and the only one: the cgroup's growth beyond the RSS is
// what was charged to the run, and the machine's counters, which every other process moves, say nothing
// more (oclgrind beside another suite: 27 MiB a buffer by MemAvailable, where the cgroup grew 95 KiB a
// buffer more than the RSS). Without one, system available memory is the better witness of memory taken;
// Committed_AS also sees shared memory that MemAvailable under-counts.
func (in *limitInput) outsideRSS() (bytes float64, signal string, ok bool) {
	if cg := in.ownCgroupPerBuffer; cg != nil {
		if out := *cg - in.hostPerBuffer; in.fit.OK && out > in.outsideThreshold()+in.noise.Host {
			return out, "its memory cgroup's usage", true
		}
		return 0, "", false
	}
	return in.machineOutsideRSS()
}

// machineOutsideRSS is outsideRSS by the machine's counters alone.
func (in *limitInput) machineOutsideRSS() (bytes float64, signal string, ok bool) {
	if !in.fit.OK {
		return 0, "", false
	}
	// The difference rests on a machine-wide slope: it must clear the threshold by that slope's noise (and
	// RSS's), or it is the machine, not the buffers.
	threshold := in.outsideThreshold()
	noise := in.noise
	if sys := in.systemPerBuffer; sys != nil && *sys-in.hostPerBuffer > threshold+noise.System+noise.Host {
		return *sys - in.hostPerBuffer, "system available memory", true
	}
	if c := in.committedPerBuffer; c != nil && *c-in.hostPerBuffer > threshold+noise.Committed+noise.Host {
		return *c - in.hostPerBuffer, "the system's committed memory (Committed_AS)", true
	}
	return 0, "", false
}

// outsideEvidence puts into ev what a claim of memory held outside the process rests on: the difference per
// buffer, the threshold it cleared, and the run's own cgroup's growth beside its RSS where it has one.
func (in *limitInput) outsideEvidence(ev map[string]float64, out float64) {
	ev["outside_rss_bytes_per_buffer"], ev["outside_threshold_bytes"] = out, in.outsideThreshold()
	if cg := in.ownCgroupPerBuffer; cg != nil {
		ev["cgroup_bytes_per_buffer"], ev["host_bytes_per_buffer"] = *cg, in.hostPerBuffer
	}
}

// outsideThreshold is the least difference per buffer that is memory held outside the process.
func (in *limitInput) outsideThreshold() float64 {
	return max(cheapFraction*float64(in.sizeBytes), 4096)
}

// notSetUp says whether a job failed before its runtime did anything: its own settings could not be applied
// (a limit above the hard one), which is no finding about the runtime.
func (in *limitInput) notSetUp() bool {
	f := in.failure
	return f != nil && f.stage == result.StageSetup && f.name == "" && in.reason != ""
}
