package result

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"syscall"
	"testing"
)

// A failed create is the buffer after Index allocation calls; a failed command on the newest buffer is the
// one the last call made; a command on an older buffer or on none, or on the newest before any call, has
// no number.
func TestBufferNumberNumbersOnlyWhatTheLayerCanTell(t *testing.T) {
	for _, c := range []struct {
		name string
		f    TraceFailure
		want uint64
		ok   bool
	}{
		{"a failed create", TraceFailure{Call: "clCreateBuffer", Index: 33}, 33, true},
		{"a failed create with properties", TraceFailure{Call: "clCreateBufferWithProperties", Index: 0}, 0, true},
		{"a command on the newest", TraceFailure{Call: "clEnqueueFillBuffer", Buffer: BufferNewest, Index: 33}, 32, true},
		{"a command on an older buffer", TraceFailure{Call: "clEnqueueFillBuffer", Buffer: BufferOlder, Index: 33}, 0, false},
		{"a command on no buffer", TraceFailure{Call: "clFinish", Index: 33}, 0, false},
		{"the newest before any call", TraceFailure{Call: "clEnqueueWriteBuffer", Buffer: BufferNewest, Index: 0}, 0, false},
	} {
		got, ok := c.f.BufferNumber()
		if got != c.want || ok != c.ok {
			t.Errorf("%s: BufferNumber() = %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// A source measured the devices when it is named and is not "not available"; why not is what follows that.
func TestDeviceSource(t *testing.T) {
	for _, c := range []struct {
		name    string
		sampler string
		want    bool
		why     string
	}{
		{"no sampler", "", false, ""},
		{"a sampler", "NVML", true, ""},
		{"none available", DeviceNotAvailable + "no NVML", false, "no NVML"},
		{"none, as NoDeviceSource says it", string(NoDeviceSource("no PCI bus id")), false, "no PCI bus id"},
		{"a sampler named like a reason", "NVML: not available", true, ""},
	} {
		d := DeviceSource(c.sampler)
		if got := (&Trace{DeviceSampler: d}).DeviceMeasured(); got != c.want || d.Measured() != c.want || d.WhyNot() != c.why {
			t.Errorf("%s: DeviceMeasured() = %v, Measured() = %v, WhyNot() = %q; want %v, %q", c.name, got, d.Measured(), d.WhyNot(), c.want, c.why)
		}
	}
}

// traceSample is a sample at index i, with a device figure or without.
func traceSample(i uint64, device bool) TraceSample {
	s := TraceSample{Sample: Sample{Index: i}}
	if device {
		s.DeviceSamples = []DeviceSample{{Device: 0, UsedBytes: i}}
	}
	return s
}

// The sample at the failure is the last with device figures at or before the failing call, else the
// first with them after it; -1 without a failure or without device figures.
func TestFailureSamplePicksTheSampleAtTheFailure(t *testing.T) {
	failAt := &TraceFailure{Index: 100}
	for _, c := range []struct {
		name    string
		failure *TraceFailure
		samples []TraceSample
		want    int
	}{
		{"no failure", nil, []TraceSample{traceSample(10, true)}, -1},
		{"no samples", failAt, nil, -1},
		{"no device figures", failAt, []TraceSample{traceSample(10, false), traceSample(200, false)}, -1},
		{"last at or before", failAt, []TraceSample{traceSample(50, true), traceSample(100, true), traceSample(101, true)}, 1},
		{"before, skipping one without figures", failAt, []TraceSample{traceSample(50, true), traceSample(90, false), traceSample(150, true)}, 0},
		{"only after: the first after", failAt, []TraceSample{traceSample(10, false), traceSample(120, true), traceSample(130, true)}, 1},
	} {
		tr := &Trace{FirstFailure: c.failure, Samples: c.samples}
		if got := tr.FailureSample(); got != c.want {
			t.Errorf("%s: FailureSample() = %d, want %d", c.name, got, c.want)
		}
	}
}

// The program's own memory on a device is read from the sample where the sampler told it, and is unknown
// otherwise.
func TestProgramBytesByDevice(t *testing.T) {
	s := &TraceSample{ProgramDevices: []TraceDeviceUse{{Device: 0, Bytes: 5 << 20}, {Device: 2, Bytes: 0}}}
	for _, c := range []struct {
		name string
		dev  int
		want uint64
		ok   bool
	}{
		{"told", 0, 5 << 20, true},
		{"told as nothing", 2, 0, true},
		{"not told", 1, 0, false},
	} {
		got, ok := s.ProgramBytes(c.dev)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: ProgramBytes(%d) = %d, %v; want %d, %v", c.name, c.dev, got, ok, c.want, c.ok)
		}
	}
}

// WithFindings gives a copy holding the verdict and limit as given, a nil verdict as an empty one (the
// field is a list in the JSON), and leaves the trace it copied as it was.
func TestTraceWithFindings(t *testing.T) {
	tr := &Trace{Judgement: Judgement{Verdict: []string{"old"}}}
	ev := map[string]float64{"device_used_bytes": 1}
	cp := tr.WithFindings([]string{"first", "second"}, JobLimit{Limit: LimitDeviceMemory, Evidence: ev})
	if !slices.Equal(cp.Verdict, []string{"first", "second"}) || cp.Limit != LimitDeviceMemory || !reflect.DeepEqual(cp.LimitEvidence, ev) {
		t.Errorf("verdict %q limit %q evidence %v, want them as given", cp.Verdict, cp.Limit, cp.LimitEvidence)
	}
	if !slices.Equal(tr.Verdict, []string{"old"}) || tr.Limit != "" {
		t.Errorf("the trace copied became verdict %q limit %q, want it as it was", tr.Verdict, tr.Limit)
	}
	if none := tr.WithFindings(nil, JobLimit{}); none.Verdict == nil || len(none.Verdict) != 0 || none.Limit != "" {
		t.Errorf("no findings: verdict %#v limit %q, want an empty verdict and no limit", none.Verdict, none.Limit)
	}
}

// sampleTrace is a trace document as the trace command writes one.
func sampleTrace() *Trace {
	code := 1
	return &Trace{SchemaVersion: TraceSchemaVersion, Kind: TraceKind, Tool: Tool{Name: "clmemprobe", Version: "test"},
		Started: "2026-01-01T00:00:00Z", Program: "./app", Args: []string{"--n", "10"}, Via: "auto", WayIn: WayLayer,
		Interception: InterceptLayer, Exit: TraceExit{Code: &code, Description: "exited with status 1"},
		Allocations: 11, CreatesOK: 10, CreatesFailed: 1, Devices: []TraceDevice{{Index: 0, Name: "GPU", GlobalMemBytes: 1 << 30}},
		Contexts:     []TraceContext{{Index: 0, Devices: []int{0}, DeviceCount: 1, LiveBuffers: 10, LiveBytes: 10 << 20}},
		FirstFailure: &TraceFailure{Index: 10, Call: "clCreateBuffer", Code: -4, CodeName: "CL_MEM_OBJECT_ALLOCATION_FAILURE", Devices: []int{0}},
		Sequence:     []TraceStep{{Call: "clCreateBuffer", Size: 1 << 20, Count: 10}},
		Samples:      []TraceSample{traceSample(5, true)}, DeviceSampler: "NVML", Judgement: Judgement{Verdict: []string{"it failed"}}}
}

// A trace document reads back as it was written.
func TestLoadTraceReadsBackATrace(t *testing.T) {
	want := sampleTrace()
	got, err := LoadTrace(writeJSON(t, t.TempDir(), "trace.json", want))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwant %+v", got, want)
	}
}

// A file that is no trace document gives neither a trace nor an error, for the run loader to read: a run,
// another JSON object, a file that is no JSON object, a directory, a FIFO without a writer (looked at
// without waiting). A truncated trace is handed on too, and the run loader then refuses it.
func TestLoadTraceHandsOnWhatIsNoTrace(t *testing.T) {
	dir := t.TempDir()
	trace, err := json.Marshal(sampleTrace())
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{
		"a run":       filepath.Join("testdata", "run-v1.json"),
		"other JSON":  writeFile(t, dir, "other.json", []byte(`{"kind": "something-else", "schema_version": 1}`)),
		"binary":      writeFile(t, dir, "bin", []byte{0, 1, 2, '{'}),
		"an array":    writeFile(t, dir, "array.json", []byte(`  [{"kind": "trace"}]`)),
		"only blanks": writeFile(t, dir, "blank.json", []byte(" \n\t ")),
		"empty":       writeFile(t, dir, "empty.json", nil),
		"truncated":   writeFile(t, dir, "truncated.json", trace[:len(trace)/2]),
		"a directory": t.TempDir(),
		"a FIFO":      fifo,
	}
	for name, path := range paths {
		if tr, err := LoadTrace(path); tr != nil || err != nil {
			t.Errorf("%s: LoadTrace = %v, %v; want nil, nil", name, tr != nil, err)
		}
	}
	var nr *NotAResultError
	if _, err := Load(paths["truncated"]); !errors.As(err, &nr) {
		t.Errorf("the run loader reads the truncated trace without refusing it: %v", err)
	}
}

// A trace document that this build cannot read is refused with a *NotAResultError: another schema version
// (none is version 0) or a field of the wrong type; a missing file is the file system's error.
func TestLoadTraceRefusesABrokenTrace(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		content string
	}{
		{"another version", `{"kind": "trace", "schema_version": 2}`},
		{"no version", `{"kind": "trace"}`},
		{"a field of the wrong type", `{"kind": "trace", "schema_version": 1, "allocations": "many"}`},
		{"a sample of the wrong shape", `{"kind": "trace", "schema_version": 1, "samples": [{"index": -1}]}`},
	} {
		tr, err := LoadTrace(writeFile(t, dir, "trace.json", []byte(" \n"+c.content)))
		var nr *NotAResultError
		if tr != nil || !errors.As(err, &nr) {
			t.Errorf("%s: LoadTrace = %v, %v; want a NotAResultError", c.name, tr != nil, err)
		}
	}
	if _, err := LoadTrace(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want it not to exist", err)
	}
}

// A trace says why its devices were not measured: its sampler's reason, or, naming none, that it was made
// when traces sampled the host only.
func TestTraceDeviceWhyNot(t *testing.T) {
	for sampler, want := range map[DeviceSource]string{"": "trace samples the host only", NoDeviceSource("no NVML"): "no NVML", "NVML": ""} {
		if got := (&Trace{DeviceSampler: sampler}).DeviceWhyNot(); got != want {
			t.Errorf("%q: DeviceWhyNot() = %q, want %q", sampler, got, want)
		}
	}
}
