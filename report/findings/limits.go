package findings

import (
	"fmt"
	"sort"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// limitFinding is a strategy's limit: the kind, the numbers it rests on, and a sentence without its subject
// (the strategies it applies to come first when it is written), so strategies that ran into the same limit
// the same way share one sentence.
type limitFinding struct {
	limit    result.Limit
	evidence map[string]float64
	body     string
	// claims are what body asserts that evidence must show (checkLimit holds it to them).
	claims []result.ClaimKind
}

// classify says what ended a strategy that did not complete (or a traced program), from its input alone
// (limitInput: a run's job's, a trace's), with the strategy at every size of a sweep and one context per
// device beside it where a run has them. The rules, in order:
//   - stopped: by the host guard it is host memory; interrupted or timed out it is unknown;
//   - mappings at 90% of vm.max_map_count; the address space at 90% of its limit;
//   - the same count of buffers at every size of a sweep: a cap on the number of allocations;
//   - the failing device full, by its sampled use (90% of its global memory), or, unsampled, by the bytes
//     given to it where the runtime demonstrably enforces its size (between 90% and 105% of it);
//   - system available memory under 10% of RAM (or the worker killed by SIGKILL with memory that low);
//   - a context over several devices that reached less than half of what one context per device reached;
//   - otherwise the runtime's own limit, when the device was measured or given far less than it has and
//     host memory was plentiful; or unknown, when what would tell was not measured.
func classify(v *limitInput, sweep []*limitInput, perDevice *limitInput) limitFinding {
	return checkLimit(classifyByRules(v, sweep, perDevice))
}

// classifyByRules is classify's rules, before the claims they make are checked.
func classifyByRules(v *limitInput, sweep []*limitInput, perDevice *limitInput) limitFinding {
	ev := map[string]float64{"allocations_ok": float64(v.allocationsOK)}
	if v.inFlight > 0 && v.inFlight <= v.allocationsOK {
		ev["confirmed_ok"] = float64(v.allocationsOK - v.inFlight) // a batch in flight when the worker died
	}
	switch v.outcome {
	case result.OutcomeCompleted, result.OutcomeUnsupported, "":
		return limitFinding{}
	case result.OutcomeStopped:
		if v.guardStopped {
			return guardLimit(v, ev)
		}
		if v.interrupted {
			return limitFinding{} // nothing ended it but the user: no limit, known or unknown
		}
		return limitFinding{result.LimitUnknown, ev, fmt.Sprintf("stopped before any limit (%s): raise --timeout or run it to its end (unknown)", firstClause(v.reason)), nil}
	}
	if v.notSetUp() {
		return limitFinding{result.LimitUnknown, ev, "it could not be set up: " + v.reason + " (unknown)", nil}
	}
	if lf, ok := gpuFault(v, ev); ok {
		return lf
	}
	if lf, ok := flagsRejected(v, ev); ok {
		return lf
	}
	if lf, ok := refusedOverMaxAlloc(v, ev); ok {
		return lf
	}
	if v.maxMapCount > 0 && float64(v.maxMappings) >= mapFraction*float64(v.maxMapCount) {
		ev["mappings"], ev["max_map_count"] = float64(v.maxMappings), float64(v.maxMapCount)
		return limitFinding{result.LimitMappings, ev, fmt.Sprintf("the process held %d memory mappings, %.0f%% of vm.max_map_count (%d), when it ended: the limit on mappings, not memory, ended the loop; raise vm.max_map_count or allocate fewer buffers (mappings)",
			v.maxMappings, 100*float64(v.maxMappings)/float64(v.maxMapCount), v.maxMapCount), nil}

	}
	if as := v.addressSpaceBytes; as > 0 && float64(v.vmsAtEnd) >= addressFraction*float64(as) {
		ev["vms_bytes"], ev["address_space_bytes"] = float64(v.vmsAtEnd), float64(as)
		return limitFinding{result.LimitAddressSpace, ev, fmt.Sprintf("the process's address space held %s, %.0f%% of its %s limit, when it ended: address space, not memory, ran out (address-space)",
			units.Bytes(v.vmsAtEnd), 100*float64(v.vmsAtEnd)/float64(as), units.Bytes(as)), nil}

	}
	if lf, ok := resourceLimit(v, ev); ok {
		return lf
	}
	if counts, ok := sameCountEverySize(sweep); ok {
		for size, n := range counts {
			ev[fmt.Sprintf("allocations_ok@%d", size)] = float64(n)
		}
		return limitFinding{result.LimitAllocationCount, ev, fmt.Sprintf("ended after the same %s buffers at every size (%s): the runtime caps the number of allocations, whatever their bytes; allocate fewer, larger buffers (allocation-count)",
			countRange(counts), sizesOf(counts)), nil}

	}
	if lf, ok := deviceFull(v, ev); ok {
		return lf
	}
	if low, why := hostMemoryRanOut(v); low {
		ev["host_available_bytes"], ev["host_ram_bytes"], ev["size_bytes"] = float64(v.availAtEnd), float64(v.ram), float64(v.sizeBytes)
		if v.outcome == result.OutcomeCrashed && v.signal == "SIGKILL" {
			ev["killed_sigkill"] = 1
		}
		claims := []result.ClaimKind{result.ClaimHostRanOut}
		if out, _, ok := v.outsideRSS(); ok {
			v.outsideEvidence(ev, out)
			claims = append(claims, result.ClaimOutside)
			why += fmt.Sprintf(", %s per buffer of it held outside the process's RSS", units.SignedBytes(out))
		}
		return limitFinding{result.LimitHostMemory, ev, why + ": host memory ran out (host-memory)", claims}
	}
	if lf, ok := contextLimit(v, perDevice, ev); ok {
		return lf
	}
	return runtimeOrUnknown(v, ev)
}

// refusedOverMaxAlloc is the rule of a buffer size over the device's reported maximum allocation that the
// runtime refused at create with CL_INVALID_BUFFER_SIZE: it enforces the maximum it reports.
func refusedOverMaxAlloc(v *limitInput, ev map[string]float64) (limitFinding, bool) {
	f := v.failure
	if f == nil || v.outcome != result.OutcomeFailed || f.stage != result.StageCreate || f.code != -61 {
		return limitFinding{}, false
	}
	// At create the failing device is the failure's own (atEnd): its largest allocation is the one asked of.
	limit := v.maxAlloc
	if limit == 0 || v.sizeBytes <= limit {
		return limitFinding{}, false
	}
	ev["max_alloc_bytes"], ev["size_bytes"] = float64(limit), float64(v.sizeBytes)
	return limitFinding{result.LimitRuntime, ev, fmt.Sprintf("the runtime refused a buffer of %s, over the maximum allocation of %s it reports, with -61 (CL_INVALID_BUFFER_SIZE) at create: it enforces that maximum; clmemprobe largest finds the largest buffer it takes (runtime)",
			units.Size(v.sizeBytes), units.Bytes(limit)), nil},
		true
}

// deviceFull is the rule of a full device: the failing device's sampled use at 90% of its global memory,
// or, unsampled, the bytes given to it where the runtime demonstrably enforces its size (between 90% and
// 105% of it); shared with other processes where they held part of it.
func deviceFull(v *limitInput, ev map[string]float64) (limitFinding, bool) {
	if v.failure == nil || v.failDev < 0 || v.global == 0 {
		return limitFinding{}, false
	}
	dev := deviceIndex(v.failDev)
	ev["device"], ev["device_global_bytes"] = float64(v.failDev), float64(v.global)
	if v.usedKnown {
		ev["device_used_bytes"], ev["device_fill"] = float64(v.used), v.fill(v.used)
		if v.fill(v.used) >= fullFraction {
			if sh, ok := v.shareOf(v.failDev); ok && sh.shared(v.global) {
				ev["device_used_at_start_bytes"], ev["device_own_bytes"] = float64(sh.usedAtStart), float64(v.used-min(v.used, sh.usedAtStart))
				if sh.othersKnown {
					ev["device_others_bytes"] = float64(sh.others)
				}
				return limitFinding{result.LimitDeviceMemory, ev, fmt.Sprintf("when %s failed, device %s held %s, %.1f%% of its %s global memory, but not all of it was this run's: its buffers took %s after the loop began, and %s: the device's memory ran out, shared with other processes (device-memory)",
						v.failed(), dev, units.Bytes(v.used), pct(v.fill(v.used)), units.Bytes(v.global), units.Bytes(v.used-min(v.used, sh.usedAtStart)), sh.othersText()), nil},
					true
			}
			return limitFinding{result.LimitDeviceMemory, ev, fmt.Sprintf("when %s failed, device %s held %s, %.1f%% of its %s global memory: the device's memory ran out (device-memory)",
					v.failed(), dev, units.Bytes(v.used), pct(v.fill(v.used)), units.Bytes(v.global)), nil},
				true
		}
	} else if v.givenUnknown == "" {
		ev["bytes_given_to_device"], ev["device_fill"] = float64(v.given), v.fill(v.given)
		if g := v.fill(v.given); g >= fullFraction && g <= overcommitted {
			if sh, ok := v.shareOf(v.failDev); ok && sh.shared(v.global) {
				// Given nearly all of a device that others held a part of: whatever stopped the
				// runtime there, it was not this device's capacity alone.
				ev["device_used_at_start_bytes"], ev["device_own_bytes"] = float64(sh.usedAtStart), float64(v.given)
				return limitFinding{result.LimitDeviceMemory, ev, fmt.Sprintf("when %s failed, device %s had been given %s in buffers, %.1f%% of its %s global memory, and %s: the device's memory ran out, shared with other processes (device-memory)",
						v.failed(), dev, units.Bytes(v.given), pct(g), units.Bytes(v.global), sh.othersText()), nil},
					true
			}
			return limitFinding{result.LimitDeviceMemory, ev, fmt.Sprintf("when %s failed, device %s had been given %s in buffers, %.1f%% of its %s global memory, and the runtime stopped there: it enforces the device's size, and the device is full (device-memory)",
					v.failed(), dev, units.Bytes(v.given), pct(g), units.Bytes(v.global)), nil},
				true
		}
	}
	return limitFinding{}, false
}

// contextLimit is the rule of the context: one context per device went well further (contextRatio), or ran
// its whole budget beyond where this one ended, without failing.
func contextLimit(v *limitInput, perDevice *limitInput, ev map[string]float64) (limitFinding, bool) {
	if perDevice == nil || !v.sharesContext || !placedAlike(v.placement, perDevice.placement) {
		return limitFinding{}, false // per-device placing nothing goes as far as its budget: no measure of a context
	}
	further := perDevice.allocationsOK >= uint64(contextRatio*float64(max(v.allocationsOK, 1)))
	completedBeyond := perDevice.outcome == result.OutcomeCompleted && perDevice.allocationsOK > v.allocationsOK
	if !further && !completedBeyond {
		return limitFinding{}, false
	}
	ratio := float64(perDevice.allocationsOK) / float64(max(v.allocationsOK, 1))
	ev["per_device_allocations_ok"], ev["ratio"] = float64(perDevice.allocationsOK), ratio
	if perDevice.outcome == result.OutcomeCompleted {
		ev["per_device_completed"] = 1
	}
	more := "reached"
	if perDevice.outcome == result.OutcomeCompleted {
		more = "completed its budget, without a failure, at"
	}
	body := fmt.Sprintf("ended at %d buffers where one context per device %s %d (%.2fx): one context over %d devices costs more per buffer than a context per device, and that is the limit here (context)",
		v.allocationsOK, more, perDevice.allocationsOK, ratio, len(v.devices))
	putPlacement(ev, "job", v.placement)
	putPlacement(ev, result.PerDevice, perDevice.placement)
	claims := []result.ClaimKind{result.ClaimFurther}
	if out, _, ok := v.outsideRSS(); ok {
		v.outsideEvidence(ev, out)
		claims = append(claims, result.ClaimOutside)
		body += fmt.Sprintf("; each buffer took %s of host memory outside the process's RSS", units.SignedBytes(out))
	}
	return limitFinding{result.LimitContext, ev, body, claims}, true
}

// hostMemoryRanOut says whether system memory was exhausted when the strategy ended, and in what words.
func hostMemoryRanOut(v *limitInput) (bool, string) {
	if v.ram == 0 || v.availAtEnd == 0 {
		return false, ""
	}
	low := hostLow(v.availAtEnd, v.sizeBytes)
	killed := v.outcome == result.OutcomeCrashed && v.signal == "SIGKILL"
	switch {
	case killed && (low || float64(v.availAtEnd) < hostLowFraction*float64(v.ram)):
		return true, fmt.Sprintf("killed by SIGKILL with %s of system memory available, %.1f%% of RAM (the OOM killer's mark)",
			units.Bytes(v.availAtEnd), 100*float64(v.availAtEnd)/float64(v.ram))
	case low:
		return true, fmt.Sprintf("ended with %s of system memory available, %.1f%% of RAM", units.Bytes(v.availAtEnd),
			100*float64(v.availAtEnd)/float64(v.ram))
	}
	return false, ""
}

// hostLowFloor is the least system available memory that is not "run out" whatever the buffer: the kernel
// keeps up to 64 MiB free for itself, and the last sample may come some hundreds of MiB before the end of a
// fast loop.
const hostLowFloor = 512 << 20

// hostLow says whether system available memory at the end, avail, is low enough for a failed allocation of
// size-byte buffers to be for want of host memory: under hostLowFloor, or four buffers. A machine-wide
// figure alone says no more: other processes move it, and gigabytes available (7% of a 24 GiB machine while
// another process held the rest) did not run out for a buffer of 1 MiB.
func hostLow(avail, size uint64) bool { return avail < max(hostLowFloor, 4*size) }

// runtimeOrUnknown is the last rule: a failure the measurements do not explain is the runtime's own limit
// when the device was measured (or given) far from full and host memory was plentiful, else unknown.
func runtimeOrUnknown(v *limitInput, ev map[string]float64) limitFinding {
	what := firstClause(v.reason)
	if f := v.failure; f != nil {
		what = fmt.Sprintf("%s at %s", codeText(f.name, f.code, v.reason), f.stage)
	}
	switch v.outcome {
	case result.OutcomeCrashed:
		if v.signal != "" && v.signal != "SIGKILL" {
			body := fmt.Sprintf("the runtime crashed (%s) %s: a fault inside it, not a limit these measurements show (runtime)", v.signal, v.after())
			if v.aborts != "" && v.signal == "SIGABRT" {
				body += "; on " + v.runtimeName + ", " + v.aborts
				if v.rlimitASSet {
					body += fmt.Sprintf("; here the %s set it (RLIMIT_AS=%s)", v.variantName, v.rlimitAS)
				}
			}
			return limitFinding{result.LimitRuntime, ev, body, nil}
		}
		if cg := v.cgroup; cg != nil && cg.OOMKillsAtEnd > cg.OOMKillsAtStart {
			ev["cgroup_oom_kills_at_start"], ev["cgroup_oom_kills_at_end"] = float64(cg.OOMKillsAtStart), float64(cg.OOMKillsAtEnd)
			return limitFinding{result.LimitUnknown, ev, fmt.Sprintf("%s died (%s) %s while the OOM killer of its memory cgroup %s ended a process (oom_kill %d to %d): memory there may have run short, but nothing says this SIGKILL was that (unknown)",
				v.subject, firstClause(v.reason), v.after(), cg.Path, cg.OOMKillsAtStart, cg.OOMKillsAtEnd), nil}

		}
		if cg := v.cgroup; cg != nil && cg.Memory.Limit > 0 && cg.Memory.AtEnd == 0 {
			// "Memory to spare" would rest on the machine's figures alone, while the cgroup's limit applied.
			return limitFinding{result.LimitUnknown, ev, fmt.Sprintf("%s died (%s) %s in the memory cgroup %s, whose limit is %s and whose use at the end was not measured: what killed it cannot be told; check dmesg (unknown)",
				v.subject, firstClause(v.reason), v.after(), cg.Path, units.Bytes(cg.Memory.Limit)), nil}

		}
		return diedUnexplained(v, ev)
	case result.OutcomeHung:
		return limitFinding{result.LimitRuntime, ev, fmt.Sprintf("the runtime hung in a call %s (runtime)", v.after()), nil}
	case result.OutcomeWrong:
		return limitFinding{result.LimitRuntime, ev, "the runtime reported the first buffer's fill done and it did not take: a fault of the runtime at this size, to report (clmemprobe largest shows at which sizes and pattern sizes) (runtime)", nil}
	}
	hostPlenty := v.ram > 0 && v.availAtEnd > 0 && !hostLow(v.availAtEnd, v.sizeBytes)
	devFar, devWhy := false, "device memory was not measured"
	switch {
	case v.failDev < 0 || v.global == 0:
		devWhy = "the failing device is not known"
	case !v.usedKnown && v.givenUnknown != "":
		devWhy = v.givenUnknown + ", and its use was not measured"
	case v.usedKnown:
		devFar = v.fill(v.used) < farFraction
		devWhy = fmt.Sprintf("device %d held %.1f%% of its memory", v.failDev, pct(v.fill(v.used)))
	case v.fill(v.given) > overcommitted:
		devFar = true
		devWhy = fmt.Sprintf("device %d had been given %.1f%% of its %s global memory, more than it has: the runtime does not enforce its global size",
			v.failDev, pct(v.fill(v.given)), units.Bytes(v.global))
	default:
		// Unsampled, the device may hold more than the buffers meant for it: a context over several devices
		// may place every buffer on every device. Only the worst case is evidence.
		worst := v.given
		if v.sharesContext && len(v.devices) > 1 {
			worst = v.allocationsOK * v.sizeBytes
		}
		devFar = v.fill(worst) < farFraction
		devWhy = fmt.Sprintf("device %d had been given %.1f%% of its memory", v.failDev, pct(v.fill(v.given)))
		if worst != v.given {
			devWhy += fmt.Sprintf(", %.1f%% if the runtime places every buffer on every device of the context", pct(v.fill(worst)))
		}
		devWhy += ", and its use was not measured"
	}
	if hostPlenty {
		ev["host_available_bytes"] = float64(v.availAtEnd)
	}
	if devFar && hostPlenty {
		return limitFinding{result.LimitRuntime, ev, fmt.Sprintf("%s with %s of system memory available and %s: a limit inside the runtime that these measurements do not explain (runtime)",
			what, units.Bytes(v.availAtEnd), devWhy), nil}

	}
	return limitFinding{result.LimitUnknown, ev, fmt.Sprintf("%s, but what ran out cannot be told: %s (unknown)", what, devWhy), nil}
}

// diedUnexplained is the limit of a worker or program killed by a signal nothing measured explains: "with
// memory to spare" where the run's own readings show room (ClaimSpare), else what cannot be told.
func diedUnexplained(v *limitInput, ev map[string]float64) limitFinding {
	ev["size_bytes"] = float64(v.sizeBytes)
	if v.availAtEnd > 0 {
		ev["host_available_bytes"] = float64(v.availAtEnd)
	}
	if cg := v.cgroup; cg != nil && cg.Memory.Limit > 0 {
		ev["cgroup_limit_bytes"] = float64(cg.Memory.Limit)
		if cg.Memory.AtEnd > 0 {
			ev["cgroup_used_bytes"] = float64(cg.Memory.AtEnd)
		}
	}
	if c, failed := unmet(result.ClaimSpare, ev); failed {
		return limitFinding{result.LimitUnknown, ev, fmt.Sprintf("%s died (%s) %s: what killed it was not measured, and whether memory was to spare cannot be told (that needs %s); check dmesg (unknown)",
			v.subject, firstClause(v.reason), v.after(), c.needs), nil}
	}
	return limitFinding{result.LimitUnknown, ev, fmt.Sprintf("%s died (%s) %s with memory to spare: what killed it was not measured; check dmesg (unknown)", v.subject, firstClause(v.reason), v.after()),
		[]result.ClaimKind{result.ClaimSpare}}
}

// sameCountEverySize reports whether a strategy that failed at two or more sizes, at least twice apart,
// reached the same count at each: then no byte budget can be the limit.
func sameCountEverySize(sweep []*limitInput) (map[uint64]uint64, bool) {
	lo, hi, smallest, largest, ok := sweepSpan(sweep, func(in *limitInput) uint64 { return in.allocationsOK })
	if !ok {
		return nil, false
	}
	counts := map[uint64]uint64{}
	for _, in := range sweep {
		counts[in.sizeBytes] = in.allocationsOK
	}
	if len(counts) < 2 || largest < 2*smallest || float64(hi-lo) > sameCount*float64(hi) {
		return nil, false
	}
	return counts, true
}

// sameBytesEverySize reports the byte budget when a strategy reached the same bytes at every size of a
// sweep (at least two sizes, twice apart).
func sameBytesEverySize(sweep []*limitInput) (uint64, bool) {
	lo, hi, smallest, largest, ok := sweepSpan(sweep, func(in *limitInput) uint64 { return in.bytesOK })
	if !ok || len(sweep) < 2 || largest < 2*smallest || float64(hi-lo) > sameCount*float64(hi)+float64(largest) {
		return 0, false
	}
	return lo, true
}

// sweepSpan is the least and most of a figure (the buffers or bytes reached) over a strategy's sweep, and
// its smallest and largest buffer sizes; ok is false unless every size failed having reached some.
func sweepSpan(sweep []*limitInput, figure func(*limitInput) uint64) (lo, hi, smallest, largest uint64, ok bool) {
	for _, in := range sweep {
		n := figure(in)
		if in.outcome != result.OutcomeFailed || n == 0 {
			return 0, 0, 0, 0, false
		}
		if lo == 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
		if smallest == 0 || in.sizeBytes < smallest {
			smallest = in.sizeBytes
		}
		largest = max(largest, in.sizeBytes)
	}
	return lo, hi, smallest, largest, true
}

func countRange(counts map[uint64]uint64) string {
	var lo, hi uint64
	for _, n := range counts {
		if lo == 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	return render.Span(lo, hi, " to ")
}

func sizesOf(counts map[uint64]uint64) string {
	sizes := make([]uint64, 0, len(counts))
	for s := range counts {
		sizes = append(sizes, s)
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	names := make([]string, len(sizes))
	for i, s := range sizes {
		names[i] = units.Size(s)
	}
	return strings.Join(names, ", ")
}

// firstClause is a reason up to its first colon, for short mentions.
func firstClause(reason string) string {
	if i := strings.Index(reason, ":"); i > 0 {
		return reason[:i]
	}
	if reason == "" {
		return "no reason given"
	}
	return reason
}
