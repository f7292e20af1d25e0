package findings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// DeriveTrace is what a trace of the user's program means: its sentences (the first failure first), and the
// limit, classified by the same rules as a run's strategy (classify). The program is seen as one job: the
// failing context's devices, its live buffers when the call failed, the program's samples and its end.
func DeriveTrace(t *result.Trace) ([]string, result.Limit, map[string]float64) {
	var verdict []string
	if t.FirstFailure == nil {
		verdict = append(verdict, fmt.Sprintf("No allocation failed: the program made %s in %s and %s.",
			units.Counted(t.Allocations, "allocation call"), units.Counted(uint64(len(t.Contexts)), "context"), t.Exit.Description))
	} else {
		verdict = append(verdict, failureSentence(t), devicesAtFailure(t))
	}
	lf, over := overMaxAlloc(t)
	if in, ok := traceInput(t); ok && !over {
		lf = classify(in, nil, nil)
	}
	if lf.body != "" {
		verdict = append(verdict, "The limit: "+lf.body+".")
	}
	if t.FirstFailure != nil {
		verdict = append(verdict, "The program "+t.Exit.Description+".")
	}
	verdict = append(verdict, ledgerSentences(t)...)
	if t.RecordsDropped > 0 {
		verdict = append(verdict, fmt.Sprintf("%d records did not fit the ring and are not in the sequence; the counts and the first failure are exact.", t.RecordsDropped))
	}
	if unseen := unseenCalls(t); unseen != "" {
		// Calls the layer did not see change what every other sentence means: said first.
		verdict = append([]string{unseen}, verdict...)
	}
	return verdict, lf.limit, lf.evidence
}

// unseenCalls says, where the program made OpenCL calls the layer did not see or could not pass on, what
// went around it and what to try; "" where nothing did. "Did not use OpenCL" is said only of a program none
// of whose processes had an OpenCL library mapped when the layer looked (at their ends).
func unseenCalls(t *result.Trace) string {
	var parts []string
	if t.Interception == result.InterceptNone {
		parts = append(parts, noCallsSeen(t))
	}
	if t.LoadersUntraced > 0 {
		parts = append(parts, fmt.Sprintf("Calls through %s after the first in the process (a copy under another name, as a Python wheel bundles one) were not traced: the layer traces one loader per process, and gave the other its own calls back unchanged.",
			units.Counted(uint64(t.LoadersUntraced), "ICD loader")))
	}
	if t.CallsUnresolved > 0 {
		parts = append(parts, fmt.Sprintf("%s of the program found no OpenCL library in the process or on the library path, and the preloaded layer answered CL_INVALID_OPERATION (-59) for the runtime that was not there: the program looked OpenCL up in the global scope before loading it; trace it with --via layer.",
			units.Counted(uint64(t.CallsUnresolved), "call")))
	}
	return strings.Join(parts, " ")
}

// noCallsSeen is the first line of a trace in which no call reached the layer.
func noCallsSeen(t *result.Trace) string {
	var loaders []string
	for _, l := range t.Libraries {
		if l.Kind == result.LibraryLoader {
			loaders = append(loaders, l.Path)
		}
	}
	switch {
	case len(t.Libraries) == 0 && t.LibrariesMore == 0 && (t.Exit.Signal != "" || t.Exit.TimedOut || t.Exit.Interrupted):
		return "No OpenCL call reached the layer, and the program was ended before the layer could read which libraries it had mapped: whether it used OpenCL is not known."
	case len(t.Libraries) == 0 && t.LibrariesMore == 0:
		return "The program did not use OpenCL: no OpenCL call reached the layer, and none of its processes had an OpenCL library (an ICD loader or a runtime) mapped at its end."
	case len(loaders) == 0:
		return fmt.Sprintf("No OpenCL call reached the layer, but the program mapped the OpenCL runtime %s without an ICD loader: it calls the vendor's library itself, which neither the loader's layers nor LD_PRELOAD reach.", t.Libraries[0].Path)
	case t.WayIn == result.WayPreload:
		return fmt.Sprintf("No OpenCL call reached the layer, but the program mapped the ICD loader %s: it looks OpenCL's entry points up in the library it opened (dlopen and dlsym on its handle), which LD_PRELOAD does not reach; try --via layer.", strings.Join(loaders, ", "))
	}
	return fmt.Sprintf("No OpenCL call reached the layer, but the program mapped the ICD loader %s: a loader that did not load the layer named in OPENCL_LAYERS (one without layers, or a copy the program brings); try --via preload.", strings.Join(loaders, ", "))
}

// failureSentence is the first failure in one sentence: the call, its index in the program's sequence, its
// code, its context and devices, and what was live then.
func failureSentence(t *result.Trace) string {
	f := t.FirstFailure
	what := f.Call
	if f.SizeBytes > 0 {
		what += fmt.Sprintf(" of %s (%s)", units.Bytes(f.SizeBytes), f.Flags)
	}
	switch f.Buffer {
	case result.BufferNewest:
		what += fmt.Sprintf(" on a buffer of %s, the newest its thread had made", units.Bytes(f.BufferBytes))
	case result.BufferOlder:
		what += fmt.Sprintf(" on a buffer of %s made before the newest (which one, the layer cannot tell)", units.Bytes(f.BufferBytes))
	}
	where := "in a context the layer did not track"
	live, liveBytes := liveIn(f)
	if f.Context >= 0 {
		where = fmt.Sprintf("in context %d over %s, with %s (%s) live in it", f.Context, devicesText(t, f.Devices), units.Counted(live, "buffer"), units.Bytes(liveBytes))
	}
	others := uint64(0)
	for _, l := range f.Live {
		if l.Context != f.Context {
			others += l.Bytes
		}
	}
	if others > 0 {
		where += fmt.Sprintf(" and %s in its other contexts", units.Bytes(others))
	}
	if n, ok := f.BufferNumber(); ok {
		return fmt.Sprintf("The program's first allocation failure was at buffer #%d (0-based, as the program counts it): %s, %s: it returned %s (%d).", n, what, where, f.CodeName, f.Code)
	}
	return fmt.Sprintf("The program's first allocation failure came after %s: %s, %s: it returned %s (%d).", units.Counted(f.Index, "allocation call"), what, where, f.CodeName, f.Code)
}

// liveIn is the failing context's live buffers and bytes at the first failure.
func liveIn(f *result.TraceFailure) (buffers, bytes uint64) {
	for _, l := range f.Live {
		if l.Context == f.Context {
			buffers, bytes = l.Buffers, l.Bytes
		}
	}
	return buffers, bytes
}

func devicesText(t *result.Trace, devs []int) string {
	var names []string
	for _, d := range devs {
		names = append(names, deviceName(t, d))
	}
	if len(names) == 0 {
		return "no device it listed"
	}
	return fmt.Sprintf("%s: %s", units.Counted(uint64(len(names)), "device"), strings.Join(names, ", "))
}

// deviceName is "device 0 (its name)", the name where the runtime gave one.
func deviceName(t *result.Trace, d int) string {
	name := fmt.Sprintf("device %d", d)
	if d >= 0 && d < len(t.Devices) && t.Devices[d].Name != "" {
		name += " (" + t.Devices[d].Name + ")"
	}
	return name
}

// traceInput is the traced program's end as the limit classifier reads it (jobInput is a run job's): the
// failing context's devices and live buffers, the program's samples, how it ended. A program that ended
// without failing and by itself has no limit to classify.
func traceInput(t *result.Trace) (*limitInput, bool) {
	// The program's end is its exit, in the words a run's job ends in: a timed-out program is stopped before
	// any limit; one the user interrupted has none, known or unknown, as an interrupted job has none.
	in := &limitInput{subject: "the program", outcome: result.OutcomeFailed, reason: t.Exit.Description, signal: t.Exit.Signal, interrupted: t.Exit.Interrupted,
		fit: &result.Fit{}} // a trace fits no costs per buffer: nothing says what a buffer held outside RSS
	f := t.FirstFailure
	switch {
	case f != nil:
	case t.Exit.TimedOut || t.Exit.Interrupted:
		in.outcome = result.OutcomeStopped
	case in.signal != "":
		in.outcome = result.OutcomeCrashed
	default:
		return nil, false
	}
	if f != nil {
		in.devices = f.Devices
		in.allocationsOK, in.bytesOK = liveIn(f)
		in.failure = traceFailure(f, in.allocationsOK)
		in.shares = othersAtFailure(t, f.Devices)
	} else {
		in.allocationsOK = t.CreatesOK // a program killed before any failure: the buffers it had made
		in.createdOnly, in.issuedSince = true, issuedAfterLastCreate(t.Calls)
	}
	if in.signal == "SIGKILL" {
		in.oomLine, in.oomLogged = t.KernelLog.Killed(t.ProgramPID)
	}
	if e := t.Environment; e != nil && e.MemoryCgroup != nil {
		// The cgroup the program ran in and its limit; its use and OOM kills were not counted over the trace.
		in.cgroup = &result.Cgroup{Version: e.MemoryCgroup.Version, Path: e.MemoryCgroup.Path, Memory: result.Resource{Limit: e.MemoryCgroup.LimitBytes}}
	}
	in.sizeBytes = typicalSize(f, in.allocationsOK, in.bytesOK)
	in.sharesContext = len(in.devices) > 1
	if t.Environment != nil {
		in.ram = t.Environment.HostMemBytes
	}
	in.atEnd(endSample(t), t.DeviceSampler.Measured(), func(dev int) (uint64, uint64) {
		for _, d := range t.Devices {
			if d.Index == dev {
				return d.GlobalMemBytes, d.MaxAllocBytes
			}
		}
		return 0, 0
	})
	if f != nil && in.failure.stage != result.StageCreate && f.Buffer != result.BufferNewest {
		in.failedWhat, in.givenUnknown = commandNotOnNewest(f)
	}
	return in, true
}

// issuedAfterLastCreate are the calls the program issued after its last buffer create, in order and each
// once ("clEnqueueFillBuffer", "clFinish"): what it was doing when it ended. None where the call log was not
// kept (trace --calls) or ends with a create.
func issuedAfterLastCreate(calls []result.TraceCall) []string {
	var out []string
	for i := len(calls) - 1; i >= 0; i-- {
		c := calls[i]
		if result.IsCreate(c.Call) {
			break
		}
		if c.Issued && !slices.Contains(out, c.Call) {
			out = append([]string{c.Call}, out...)
		}
	}
	return out
}

// traceFailure is the program's first failure as the rules read a job's: on the failing context's first
// device, at the loop's stage its call corresponds to, with the number the program gives its buffer.
func traceFailure(f *result.TraceFailure, live uint64) *failure {
	dev := -1
	if len(f.Devices) > 0 {
		dev = f.Devices[0]
	}
	index := live
	if n, ok := f.BufferNumber(); ok {
		// The number the program and run give it (a failed command on the newest buffer is a loop that
		// uses each buffer as it makes it), the same in every sentence.
		index = n
	} else if live > 0 {
		// A command on an older buffer, or on none the layer could name, has no number: unnumbered takes
		// it out of the limit's words.
		index = live - 1
	}
	return &failure{index: index, stage: stageOf(f.Call), code: f.Code, name: f.CodeName, device: dev}
}

// endSample is the sample the program's end is read from: a strategy's samples end at its failure, where
// its device figures are read; a program's go on to its end, past releases: with device figures, the one
// that stands for the failure (result.FailureSample), else the last. nil where there is none.
func endSample(t *result.Trace) *result.Sample {
	i := t.FailureSample()
	if i < 0 {
		i = len(t.Samples) - 1
	}
	if i < 0 {
		return nil
	}
	return &t.Samples[i].Sample
}

// commandNotOnNewest is what a limit names for a failed command that was not on the newest buffer (whose
// number the failure's index stands in for): the command, its buffer as far as the layer knew it, and the
// buffers live instead of a buffer number; on an older buffer, the bytes placed on the device before it
// are not known either (the buffers made after it may never have been placed, on a runtime that
// allocates at first use), so only device figures can say the device was full.
func commandNotOnNewest(f *result.TraceFailure) (failedWhat, givenUnknown string) {
	live, _ := liveIn(f)
	if f.Buffer == result.BufferOlder {
		return fmt.Sprintf("%s on a buffer made before the newest (%s live)", f.Call, units.Counted(live, "buffer")),
			fmt.Sprintf("the command was on a buffer made before the newest, so how many of the %s the runtime had placed on the device is not known", units.Counted(live, "live buffer"))
	}
	return fmt.Sprintf("%s (on no buffer the layer could name, %s live)", f.Call, units.Counted(live, "buffer")), ""
}

// othersAtFailure is the failing devices' shares, from the sample that stands for the failure: on each
// failing device where the sampler told the program's own share, the rest was other processes', taken as
// held before the program began (what a run's ledger says of its loop), so that the limit says who filled
// the device as run says it. nil where no sample tells.
func othersAtFailure(t *result.Trace, devs []int) []deviceShare {
	i := t.FailureSample()
	if i < 0 {
		return nil
	}
	s := &t.Samples[i]
	var shares []deviceShare
	for _, d := range devs {
		own, ok := s.ProgramBytes(d)
		for _, ds := range s.DeviceSamples {
			if ok && ds.Device == d {
				others := ds.UsedBytes - min(own, ds.UsedBytes)
				shares = append(shares, deviceShare{device: d, usedAtStart: others, others: others, othersKnown: true})
			}
		}
	}
	return shares
}

// devicesAtFailure says, for the failing context's devices, their used memory at the first failure and how
// much of it was the program's own, the rest other processes': from the sample that stands for the
// failure (result.FailureSample), or why device memory was not measured.
func devicesAtFailure(t *result.Trace) string {
	i := t.FailureSample()
	if i < 0 {
		why := t.DeviceWhyNot()
		if t.DeviceMeasured() {
			why = "no sample with device figures"
		}
		return "Device memory not measured: " + why + "."
	}
	s := &t.Samples[i]
	var parts []string
	for _, d := range t.FirstFailure.Devices {
		for _, ds := range s.DeviceSamples {
			if ds.Device != d {
				continue
			}
			part := fmt.Sprintf("%s held %s", deviceName(t, d), units.Bytes(ds.UsedBytes))
			if d >= 0 && d < len(t.Devices) && t.Devices[d].GlobalMemBytes > 0 {
				part += fmt.Sprintf(" of its %s", units.Bytes(t.Devices[d].GlobalMemBytes))
			}
			if own, ok := s.ProgramBytes(d); ok {
				part += fmt.Sprintf(", %s of it the program's own and %s other processes'", units.Bytes(own), units.Bytes(ds.UsedBytes-min(own, ds.UsedBytes)))
			}
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		return "Device memory at the failure: the failing context's devices were not among those measured; read by " + string(t.DeviceSampler) + "."
	}
	return fmt.Sprintf("At the failure (the sample after %s, at %.2f s), %s; read by %s.", units.Counted(s.Index, "allocation call"), s.Seconds, strings.Join(parts, "; "), t.DeviceSampler)
}

// typicalSize is the bytes of one of the failing context's live buffers on average, else the failed
// buffer's own size: what classify counts buffers in.
func typicalSize(f *result.TraceFailure, live, liveBytes uint64) uint64 {
	if live > 0 {
		return liveBytes / live
	}
	if f != nil {
		return f.SizeBytes
	}
	return 0
}

// stageOf is the loop's stage a call of the program corresponds to.
func stageOf(call string) result.Stage {
	switch {
	case strings.HasPrefix(call, "clCreate"):
		return result.StageCreate
	case call == "clFinish":
		return result.StageFinish
	case call == "clEnqueueMigrateMemObjects":
		return result.StageMigrate
	}
	return result.StageTouch
}

// overMaxAlloc is the rule a run never meets (it refuses such a size up front): a create refused with
// CL_INVALID_BUFFER_SIZE for a size over the largest allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE) of every
// device of its context. Nothing ran out; the runtime's own limit on one buffer said no.
func overMaxAlloc(t *result.Trace) (limitFinding, bool) {
	f := t.FirstFailure
	if f == nil || f.Code != -61 || len(f.Devices) == 0 {
		return limitFinding{}, false
	}
	var largest uint64
	for _, d := range f.Devices {
		if d < 0 || d >= len(t.Devices) || t.Devices[d].MaxAllocBytes == 0 || f.SizeBytes <= t.Devices[d].MaxAllocBytes {
			return limitFinding{}, false
		}
		largest = max(largest, t.Devices[d].MaxAllocBytes)
	}
	ev := map[string]float64{"size_bytes": float64(f.SizeBytes), "max_alloc_bytes": float64(largest)}
	return limitFinding{result.LimitRuntime, ev, fmt.Sprintf("the buffer of %s is larger than the largest allocation its devices allow (CL_DEVICE_MAX_MEM_ALLOC_SIZE, %s): no memory ran out; split it, or give a flag the vendor documents to lift that limit (runtime)",
			units.Bytes(f.SizeBytes), units.Bytes(largest)), nil},
		true
}
