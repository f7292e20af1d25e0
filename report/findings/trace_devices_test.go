package findings

import (
	"slices"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A traced program that filled its GPU: at its first failure (call #100) the sample that stands for it is
// the last one before (call #100), not the one after the program freed its buffers; the verdict says what
// the device held and how much was the program's own, and the limit is the device's memory.
func TestTraceDeviceMemoryAtFailure(t *testing.T) {
	const gib = uint64(1) << 30
	global, used, own := 80*gib, 79*gib, 77*gib
	code := 0
	sample := func(index, used, own uint64) result.TraceSample {
		return result.TraceSample{Sample: result.Sample{Index: index, Seconds: float64(index) / 100, DeviceSamples: []result.DeviceSample{{Device: 0, UsedBytes: used}}},
			ProgramDevices: []result.TraceDeviceUse{{Device: 0, Bytes: own}}}
	}
	tr := &result.Trace{Program: "./prog", Exit: result.TraceExit{Code: &code, Description: "exited with status 0"},
		Devices:       []result.TraceDevice{{Index: 0, Name: "GPU A", GlobalMemBytes: global, MaxAllocBytes: global / 4, PCIBusID: "0000:17:00.0"}},
		Contexts:      []result.TraceContext{{Index: 0, Devices: []int{0}, DeviceCount: 1}},
		FirstFailure:  &result.TraceFailure{Index: 100, Call: "clEnqueueFillBuffer", Code: -4, CodeName: "CL_MEM_OBJECT_ALLOCATION_FAILURE", Context: 0, Devices: []int{0}, Live: []result.TraceLive{{Context: 0, Buffers: 100, Bytes: own}}},
		Samples:       []result.TraceSample{sample(50, 40*gib, 38*gib), sample(100, used, own), sample(101, gib, 0)},
		DeviceSampler: "NVML (test)", Interception: result.InterceptLayer}
	if got := tr.FailureSample(); got != 1 {
		t.Fatalf("failure sample %d, want 1 (the last at or before call #100)", got)
	}
	verdict, limit, ev := DeriveTrace(tr)
	// What the device held is the evidence; its words, with the program's own share, the golden file's.
	lines := slices.Clone(verdict)
	if limit != result.LimitDeviceMemory || ev["device_used_bytes"] != float64(used) {
		t.Errorf("limit %q evidence %v, want device-memory at %d bytes used", limit, ev, used)
	}
	// Where nothing measured the devices, the verdict says why, in the sampler's own words.
	const why = "NVML: libnvidia-ml.so.1 not found; DRM fdinfo: traced device 0 has no PCI bus id"
	tr.DeviceSampler = result.DeviceNotAvailable + why
	for i := range tr.Samples {
		tr.Samples[i].DeviceSamples, tr.Samples[i].ProgramDevices = nil, nil
	}
	verdict, limit, ev = DeriveTrace(tr)
	if _, held := ev["device_used_bytes"]; held || ev["bytes_given_to_device"] <= 0 {
		t.Errorf("limit %q evidence %v: nothing measured the device, what it was given is the evidence", limit, ev)
	}
	goldenLines(t, "trace-device-held", append(append(lines, "not measured:"), verdict...))
}

// A failed command names the buffer number only where it was on the newest buffer its thread had made (a
// loop that uses each buffer as it makes it, which the job's number stands for); on an older buffer, or on
// none the layer could name, the limit keeps what the device figures say and names the command instead.
// Without device figures, an older buffer's failure says the placed bytes are not known.
func TestTraceCommandBufferInTheLimit(t *testing.T) {
	const gib = uint64(1) << 30
	code := 0
	trace := func(buffer string, measured bool) *result.Trace {
		s := result.TraceSample{Sample: result.Sample{Index: 100}}
		sampler := result.DeviceNotAvailable + "NVML: not found"
		if measured {
			s.DeviceSamples, sampler = []result.DeviceSample{{Device: 0, UsedBytes: 80 * gib}}, "NVML (test)"
		}
		return &result.Trace{Program: "./prog", Exit: result.TraceExit{Code: &code, Description: "exited with status 0"},
			Devices:  []result.TraceDevice{{Index: 0, Name: "GPU A", GlobalMemBytes: 80 * gib, MaxAllocBytes: 20 * gib}},
			Contexts: []result.TraceContext{{Index: 0, Devices: []int{0}, DeviceCount: 1}},
			FirstFailure: &result.TraceFailure{Index: 100, Call: "clEnqueueFillBuffer", Code: -4, CodeName: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
				Context: 0, Devices: []int{0}, Buffer: buffer, BufferBytes: gib, Live: []result.TraceLive{{Context: 0, Buffers: 100, Bytes: 100 * gib}}},
			Samples: []result.TraceSample{s}, DeviceSampler: result.DeviceSource(sampler), Interception: result.InterceptLayer}
	}
	var lines []string
	for _, tc := range []struct {
		name     string
		buffer   string
		measured bool
		limit    result.Limit
	}{
		{"newest, measured", result.BufferNewest, true, result.LimitDeviceMemory},
		{"older, measured", result.BufferOlder, true, result.LimitDeviceMemory},
		{"not named, measured", "", true, result.LimitDeviceMemory},
		{"older, not measured", result.BufferOlder, false, result.LimitUnknown},
	} {
		verdict, limit, ev := DeriveTrace(trace(tc.buffer, tc.measured))
		if limit != tc.limit || (tc.measured && ev["device_used_bytes"] != float64(80*gib)) {
			t.Errorf("%s: limit %q, evidence %v; want %q", tc.name, limit, ev, tc.limit)
		}
		// Which buffer or command the limit names is in its words: the golden file's.
		lines = append(append(lines, tc.name+":"), verdict...)
	}
	goldenLines(t, "trace-command-buffer", lines)
}

// Beside another process that held part of the device, the trace's limit says who filled it as run does
// (other processes held their share), with the figures in its evidence; the failure and the limit name the
// same buffer, the number the program prints (0-based: the last of Index buffers made).
func TestTraceLimitNamesOtherProcesses(t *testing.T) {
	const gib = uint64(1) << 30
	global, own, others := 140*gib, 102*gib, 37*gib
	code := 0
	tr := &result.Trace{Program: "./prog", Exit: result.TraceExit{Code: &code, Description: "exited with status 0"},
		Devices:  []result.TraceDevice{{Index: 0, Name: "GPU A", GlobalMemBytes: global, MaxAllocBytes: global / 4}},
		Contexts: []result.TraceContext{{Index: 0, Devices: []int{0}, DeviceCount: 1}},
		FirstFailure: &result.TraceFailure{Index: 104448, Call: "clEnqueueFillBuffer", Code: -4, CodeName: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
			Context: 0, Devices: []int{0}, Buffer: result.BufferNewest, BufferBytes: 1 << 20, Live: []result.TraceLive{{Context: 0, Buffers: 104448, Bytes: own}}},
		Samples: []result.TraceSample{{Sample: result.Sample{Index: 104440, DeviceSamples: []result.DeviceSample{{Device: 0, UsedBytes: own + others}}},
			ProgramDevices: []result.TraceDeviceUse{{Device: 0, Bytes: own}}}},
		DeviceSampler: "NVML (test)", Interception: result.InterceptLayer}
	verdict, limit, ev := DeriveTrace(tr)
	if limit != result.LimitDeviceMemory || ev["device_others_bytes"] != float64(others) || ev["device_own_bytes"] != float64(own) {
		t.Fatalf("limit %q evidence %v; want device-memory with others %d and own %d", limit, ev, others, own)
	}
	// The failure and the limit name the same buffer (#104447), not a call: the golden file's words.
	goldenLines(t, "trace-other-processes", verdict)
}

// Calls that did not reach the layer are said in the first line, by what the layer saw of the program's
// libraries: "did not use OpenCL" only where none was mapped; what to try follows the way in.
func TestTraceUnseenCallsFirst(t *testing.T) {
	code := 0
	loader := result.TraceLibrary{Path: "/opt/app/libOpenCL-bundled.so.1", Kind: result.LibraryLoader}
	runtime := result.TraceLibrary{Path: "/usr/lib/libamdocl64.so", Kind: result.LibraryRuntime}
	var lines []string
	for _, tc := range []struct {
		name string
		edit func(*result.Trace)
	}{
		{"no library", func(*result.Trace) {}},
		{"killed before it could be read", func(tr *result.Trace) { tr.Exit.Signal = "SIGKILL" }},
		{"preload, a loader opened itself", func(tr *result.Trace) { tr.WayIn, tr.Libraries = result.WayPreload, []result.TraceLibrary{loader} }},
		{"layer, a loader without layers", func(tr *result.Trace) { tr.WayIn, tr.Libraries = result.WayLayer, []result.TraceLibrary{loader} }},
		{"a runtime called directly", func(tr *result.Trace) { tr.WayIn, tr.Libraries = result.WayLayer, []result.TraceLibrary{runtime} }},
		{"a second loader untraced", func(tr *result.Trace) { tr.Interception, tr.LoadersUntraced = result.InterceptLayer, 1 }},
		{"calls with no library anywhere", func(tr *result.Trace) { tr.Interception, tr.CallsUnresolved = result.InterceptPreload, 3 }},
	} {
		tr := &result.Trace{Program: "./prog", Interception: result.InterceptNone, Exit: result.TraceExit{Code: &code, Description: "exited with status 0"}}
		tc.edit(tr)
		verdict, limit, _ := DeriveTrace(tr)
		if len(verdict) == 0 || limit == result.LimitDeviceMemory {
			t.Errorf("%s: verdict %q, limit %q", tc.name, verdict, limit)
		}
		// The first line says how the calls went unseen, by the libraries: the golden file's words.
		lines = append(append(lines, tc.name+":"), verdict...)
	}
	goldenLines(t, "trace-unseen-calls", lines)
}
