package findings

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// classifiedTrace is a trace's input to the limit classifier and the limit classified from it, checked to be
// what DeriveTrace gives: the trace is judged from that input alone.
func classifiedTrace(t *testing.T, tr *result.Trace) (*limitInput, limitFinding) {
	t.Helper()
	in, ok := traceInput(tr)
	if !ok {
		t.Fatalf("traceInput: no input for a trace that ended with %+v and failure %+v", tr.Exit, tr.FirstFailure)
	}
	lf := classify(in, nil, nil)
	if _, limit, ev := DeriveTrace(tr); limit != lf.limit || !maps.Equal(ev, lf.evidence) {
		t.Fatalf("DeriveTrace: limit %q evidence %v; classify of the trace's input: %q %v", limit, ev, lf.limit, lf.evidence)
	}
	return in, lf
}

// sameInput fails the test where the input is not the one wanted, naming the fields that differ.
func sameInput(t *testing.T, name string, got, want *limitInput) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	g, w := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	named := false
	for i := range g.NumField() {
		if gs, ws := shown(g.Field(i)), shown(w.Field(i)); gs != ws {
			t.Errorf("%s: %s is %s, want %s", name, g.Type().Field(i).Name, gs, ws)
			named = true
		}
	}
	if !named {
		t.Errorf("%s: input %+v, want %+v", name, *got, *want)
	}
}

// shown is a field's value for a message, through a pointer.
func shown(v reflect.Value) string {
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		return fmt.Sprintf("&%+v", v.Elem())
	}
	return fmt.Sprintf("%+v", v)
}

// A program whose context over two devices ran out on the newest buffer: the input is the failing
// context's (not the other context's) live buffers and bytes, the buffer's number as the program gives it,
// the context's first device, the sample that stands for the failure (not the later one, after releases),
// and other processes' share of that device; the limit is that device's memory, shared.
func TestTraceInputOfAFailureInASharedContext(t *testing.T) {
	const gib = uint64(1) << 30
	code := 1
	sample := func(index, avail uint64, used ...result.DeviceSample) result.TraceSample {
		return result.TraceSample{Sample: result.Sample{Index: index, AvailBytes: avail, VMSBytes: 5 * index * gib, DeviceSamples: used}}
	}
	atFailure := sample(100, 30*gib, result.DeviceSample{Device: 1, UsedBytes: 135 * gib}, result.DeviceSample{Device: 0, UsedBytes: 10 * gib})
	atFailure.ProgramDevices = []result.TraceDeviceUse{{Device: 1, Bytes: 100 * gib}}
	tr := &result.Trace{Program: "./prog", Exit: result.TraceExit{Code: &code, Description: "exited with status 1"},
		Environment: &result.Environment{HostMemBytes: 512 * gib},
		Devices: []result.TraceDevice{{Index: 0, Name: "GPU A", GlobalMemBytes: 80 * gib, MaxAllocBytes: 20 * gib},
			{Index: 1, Name: "GPU B", GlobalMemBytes: 140 * gib, MaxAllocBytes: 35 * gib}},
		Contexts: []result.TraceContext{{Index: 0, Devices: []int{1, 0}, DeviceCount: 2}, {Index: 1, Devices: []int{0}, DeviceCount: 1}},
		FirstFailure: &result.TraceFailure{Index: 100, Call: "clEnqueueFillBuffer", Code: -4, CodeName: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
			Context: 0, Devices: []int{1, 0}, Buffer: result.BufferNewest, BufferBytes: gib,
			Live: []result.TraceLive{{Context: 1, Buffers: 3, Bytes: 3 * gib}, {Context: 0, Buffers: 100, Bytes: 100 * gib}}},
		Samples:       []result.TraceSample{sample(50, 90*gib, result.DeviceSample{Device: 1, UsedBytes: 60 * gib}), atFailure, sample(101, 200*gib, result.DeviceSample{Device: 1, UsedBytes: 36 * gib})},
		DeviceSampler: "NVML (test)", Interception: result.InterceptLayer}
	f, dev, end := tr.FirstFailure, tr.Devices[1], atFailure.Sample
	used, own := end.DeviceSamples[0].UsedBytes, atFailure.ProgramDevices[0].Bytes
	number, _ := f.BufferNumber()
	// Buffers 0, 2, ..., 98 of the 99 before the failed one were meant for device 1, the context's first.
	given := (number/2 + number%2) * gib
	in, lf := classifiedTrace(t, tr)
	sameInput(t, "a shared context", in, &limitInput{subject: "the program", outcome: result.OutcomeFailed, reason: tr.Exit.Description,
		failure:       &failure{index: number, stage: result.StageTouch, code: f.Code, name: f.CodeName, device: dev.Index},
		allocationsOK: f.Live[1].Buffers, bytesOK: f.Live[1].Bytes, sizeBytes: f.Live[1].Bytes / f.Live[1].Buffers,
		devices: f.Devices, sharesContext: true, fit: &result.Fit{},
		shares:  []deviceShare{{device: dev.Index, usedAtStart: used - own, others: used - own, othersKnown: true}},
		failDev: dev.Index, global: dev.GlobalMemBytes, maxAlloc: dev.MaxAllocBytes, sampled: true, used: used, usedKnown: true,
		given: given, availAtEnd: end.AvailBytes, vmsAtEnd: end.VMSBytes, ram: tr.Environment.HostMemBytes})
	want := map[string]float64{"allocations_ok": float64(f.Live[1].Buffers), "device": float64(dev.Index),
		"device_global_bytes": float64(dev.GlobalMemBytes), "device_used_bytes": float64(used),
		"device_fill": float64(used) / float64(dev.GlobalMemBytes), "device_used_at_start_bytes": float64(used - own),
		"device_own_bytes": float64(own), "device_others_bytes": float64(used - own)}
	if lf.limit != result.LimitDeviceMemory || !maps.Equal(lf.evidence, want) {
		t.Errorf("limit %q evidence %v\nwant %q %v", lf.limit, lf.evidence, result.LimitDeviceMemory, want)
	}
	// The buffer the limit names (the program's number) and the device: the golden file's words.
	goldenLines(t, "trace-limit-buffer", []string{lf.body})
}

// A failed command that was not on the newest buffer has no number: the input's failure stands after the
// live buffers, and names the command instead; on an older buffer the bytes given to the device are not
// known, so unmeasured it is unknown what ran out; on none the layer could name, the bytes given are
// weighed (and in the evidence), and more than the device has is the runtime's limit.
func TestTraceInputOfACommandNotOnTheNewestBuffer(t *testing.T) {
	const gib = uint64(1) << 30
	code := 0
	for _, tc := range []struct {
		name         string
		buffer       string
		givenUnknown bool
		limit        result.Limit
	}{
		{"an older buffer", result.BufferOlder, true, result.LimitUnknown},
		{"no buffer named", "", false, result.LimitRuntime},
	} {
		tr := &result.Trace{Program: "./prog", Exit: result.TraceExit{Code: &code, Description: "exited with status 0"},
			Environment: &result.Environment{HostMemBytes: 512 * gib},
			Devices:     []result.TraceDevice{{Index: 0, Name: "GPU A", GlobalMemBytes: 80 * gib, MaxAllocBytes: 20 * gib}},
			Contexts:    []result.TraceContext{{Index: 0, Devices: []int{0}, DeviceCount: 1}},
			FirstFailure: &result.TraceFailure{Index: 100, Call: "clEnqueueFillBuffer", Code: -4, CodeName: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
				Context: 0, Devices: []int{0}, Buffer: tc.buffer, BufferBytes: gib, Live: []result.TraceLive{{Context: 0, Buffers: 100, Bytes: 100 * gib}}},
			Samples:       []result.TraceSample{{Sample: result.Sample{Index: 100, AvailBytes: 200 * gib}}},
			DeviceSampler: result.DeviceNotAvailable + "NVML: not found", Interception: result.InterceptLayer}
		f, dev, live := tr.FirstFailure, tr.Devices[0], tr.FirstFailure.Live[0]
		in, lf := classifiedTrace(t, tr)
		if in.failedWhat == "" || (in.givenUnknown != "") != tc.givenUnknown {
			t.Errorf("%s: the command is named %q, the bytes given unknown %q; want a name, and a reason %v", tc.name, in.failedWhat, in.givenUnknown, tc.givenUnknown)
		}
		named := *in
		named.failedWhat, named.givenUnknown = "", ""
		sameInput(t, tc.name, &named, &limitInput{subject: "the program", outcome: result.OutcomeFailed, reason: tr.Exit.Description,
			failure:       &failure{index: live.Buffers - 1, stage: result.StageTouch, code: f.Code, name: f.CodeName, device: dev.Index},
			allocationsOK: live.Buffers, bytesOK: live.Bytes, sizeBytes: live.Bytes / live.Buffers, devices: f.Devices, fit: &result.Fit{},
			failDev: dev.Index, global: dev.GlobalMemBytes, maxAlloc: dev.MaxAllocBytes, given: (live.Buffers - 1) * gib,
			availAtEnd: tr.Samples[0].AvailBytes, ram: tr.Environment.HostMemBytes})
		want := map[string]float64{"allocations_ok": float64(live.Buffers), "host_available_bytes": float64(tr.Samples[0].AvailBytes),
			"device": float64(dev.Index), "device_global_bytes": float64(dev.GlobalMemBytes)}
		if !tc.givenUnknown {
			want["bytes_given_to_device"], want["device_fill"] = float64(in.given), float64(in.given)/float64(dev.GlobalMemBytes)
		}
		if lf.limit != tc.limit || !maps.Equal(lf.evidence, want) {
			t.Errorf("%s: limit %q evidence %v\nwant %q %v", tc.name, lf.limit, lf.evidence, tc.limit, want)
		}
	}
}

// A program that ended without an allocation failure has a limit only where it did not end by itself: a
// timeout stops it before any limit, a signal is a crash; its end is read from its last sample, as no
// sample stands for a failure.
func TestTraceInputOfAnEndWithoutAFailure(t *testing.T) {
	const gib = uint64(1) << 30
	for _, tc := range []struct {
		name    string
		exit    result.TraceExit
		outcome result.Outcome
		limit   result.Limit
	}{
		{"timed out", result.TraceExit{TimedOut: true, Description: "timed out after 2s"}, result.OutcomeStopped, result.LimitUnknown},
		{"a segmentation fault", result.TraceExit{Signal: "SIGSEGV", Description: "killed by SIGSEGV"}, result.OutcomeCrashed, result.LimitRuntime},
		// The user ended it: no limit, known or unknown, as an interrupted job of a run has none.
		{"interrupted", result.TraceExit{Interrupted: true, Signal: "SIGTERM", Description: "was killed by SIGTERM, ended by clmemprobe when interrupted"},
			result.OutcomeStopped, ""},
	} {
		tr := &result.Trace{Program: "./prog", Exit: tc.exit, Environment: &result.Environment{HostMemBytes: 64 * gib},
			Samples: []result.TraceSample{{Sample: result.Sample{Index: 1, AvailBytes: 50 * gib, VMSBytes: gib}},
				{Sample: result.Sample{Index: 3, AvailBytes: 40 * gib, VMSBytes: 2 * gib}}},
			DeviceSampler: "NVML (test)", Interception: result.InterceptLayer}
		last := tr.Samples[1].Sample
		in, lf := classifiedTrace(t, tr)
		sameInput(t, tc.name, in, &limitInput{subject: "the program", outcome: tc.outcome, reason: tc.exit.Description, signal: tc.exit.Signal,
			interrupted: tc.exit.Interrupted, fit: &result.Fit{}, createdOnly: true, // a trace counts the buffers it created
			failDev: -1, sampled: true, availAtEnd: last.AvailBytes, vmsAtEnd: last.VMSBytes, ram: tr.Environment.HostMemBytes})
		want := map[string]float64{"allocations_ok": 0}
		if tc.limit == "" {
			want = nil
		}
		if lf.limit != tc.limit || !maps.Equal(lf.evidence, want) {
			t.Errorf("%s: limit %q evidence %v\nwant %q %v", tc.name, lf.limit, lf.evidence, tc.limit, want)
		}
	}
	code := 0
	tr := &result.Trace{Program: "./prog", Exit: result.TraceExit{Code: &code, Description: "exited with status 0"}}
	if in, ok := traceInput(tr); ok {
		t.Errorf("a program that exited by itself without a failure has an input to classify: %+v", in)
	}
	if _, limit, ev := DeriveTrace(tr); limit != "" || ev != nil {
		t.Errorf("a program that exited by itself without a failure has limit %q evidence %v, want none", limit, ev)
	}
}

// The classifier's input holds no job or run (nor a pointer to one): what classify and its rules read is
// the input's own, so a trace, which has neither, is judged without standing in for them.
func TestLimitInputHoldsNoJobOrRun(t *testing.T) {
	forbidden := []reflect.Type{reflect.TypeFor[result.JobResult](), reflect.TypeFor[result.Run](), reflect.TypeFor[view]()}
	in := reflect.TypeFor[limitInput]()
	for i := range in.NumField() {
		f := in.Field(i)
		for ty := f.Type; ; ty = ty.Elem() {
			if slices.Contains(forbidden, ty) {
				t.Errorf("limitInput.%s is a %s: the classifier would read a %s", f.Name, f.Type, ty)
			}
			if k := ty.Kind(); k != reflect.Pointer && k != reflect.Slice {
				break
			}
		}
	}
}

// A program killed by SIGKILL before any failure, in a memory cgroup: with the kernel's line of the cgroup's
// OOM killer naming the program's pid, the limit is the cgroup's, after the buffers the program made; without
// the line, what killed it cannot be told, and "memory to spare" (the machine's figures alone, while the
// cgroup's limit applied) is not said.
func TestTraceOfAProgramKilledInItsCgroup(t *testing.T) {
	const limit, pid, made = 512 << 20, 77, 482
	for _, logged := range []bool{true, false} {
		tr := &result.Trace{Program: "./prog", Exit: result.TraceExit{Signal: "SIGKILL", Description: "was killed by SIGKILL"}, ProgramPID: pid, CreatesOK: made,
			Environment: &result.Environment{HostMemBytes: 64 << 30, MemoryCgroup: &result.CgroupInfo{Version: 2, Path: "/job", LimitBytes: limit}},
			Samples:     []result.TraceSample{{Sample: result.Sample{Index: made, AvailBytes: 50 << 30}}}, KernelLog: &result.KernelLog{}}
		if logged {
			tr.KernelLog.Lines = []result.KernelLine{{Seconds: 9, Kind: result.KernelOOM, PID: pid, Text: fmt.Sprintf("Memory cgroup out of memory: Killed process %d (prog)", pid)}}
		}
		_, lf := classifiedTrace(t, tr)
		switch {
		case logged && (lf.limit != result.LimitCgroupMemory || lf.evidence["cgroup_limit_bytes"] != limit || lf.evidence["kernel_oom_pid"] != pid || lf.evidence["allocations_ok"] != made):
			t.Errorf("with the kernel's line: %s %v; want the cgroup's limit %d, the line's pid %d and %d buffers", lf.limit, lf.evidence, limit, pid, made)
		case !logged && (lf.limit != result.LimitUnknown || len(lf.evidence) != 1 || lf.evidence["allocations_ok"] != made):
			t.Errorf("without it: %s %v; want unknown, with only the buffers made as evidence", lf.limit, lf.evidence)
		case !logged:
			// That the program died, and nothing of memory to spare: the golden file's words.
			goldenLines(t, "trace-unlogged-kill", []string{lf.body})
		}
	}
}
