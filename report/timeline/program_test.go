package timeline

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// knownTrace is a program of 2 s with two contexts (the second released at 1.5 s), three samples (the
// last after the process was gone: no RSS), its device's memory split into its own and others' in the
// first and last, and a first failure at 1.25 s; a segfault ended it.
func knownTrace() *result.Trace {
	released := 1.5
	return &result.Trace{Started: "2026-01-02T03:04:05Z", Program: "/opt/app/solver", Args: []string{"--grid", "64"}, Seconds: 2,
		Exit:    result.TraceExit{Signal: "SIGSEGV", Description: "was killed by SIGSEGV"},
		Devices: []result.TraceDevice{{Index: 0, Name: "gpu0"}},
		Contexts: []result.TraceContext{{Index: 0, Devices: []int{0}, CreatedSeconds: 0.1},
			{Index: 1, Devices: []int{0}, CreatedSeconds: 0.5, ReleasedSeconds: &released}},
		FirstFailure: &result.TraceFailure{Index: 7, Call: "clCreateBuffer", Code: -4, CodeName: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
			Context: 1, SizeBytes: 4096, Flags: "read-write", Seconds: 1.25},
		Samples: []result.TraceSample{
			{Sample: result.Sample{Seconds: 0.2, RSSBytes: 100, AvailBytes: 1000, DeviceSamples: []result.DeviceSample{{Device: 0, UsedBytes: 50}}},
				Live: []result.TraceLive{{Context: 0, Buffers: 1, Bytes: 4096}}, ProgramDevices: []result.TraceDeviceUse{{Device: 0, Bytes: 20}}},
			{Sample: result.Sample{Seconds: 0.6, RSSBytes: 200, AvailBytes: 900, DeviceSamples: []result.DeviceSample{{Device: 0, UsedBytes: 80}}},
				Live: []result.TraceLive{{Context: 0, Buffers: 2, Bytes: 8192}, {Context: 1, Buffers: 1, Bytes: 4096}}},
			{Sample: result.Sample{Seconds: 1.9, AvailBytes: 950, DeviceSamples: []result.DeviceSample{{Device: 0, UsedBytes: 60}}},
				Live:           []result.TraceLive{{Context: 0, Buffers: 2, Bytes: 8192}, {Context: 1, Buffers: 3, Bytes: 12288}},
				ProgramDevices: []result.TraceDeviceUse{{Device: 0, Bytes: 70}}},
		}}
}

// The program is one slice from the trace's start to its end; each context's lifetime is a slice on a
// thread of its own.
func TestTraceSlices(t *testing.T) {
	p := write(t, Trace(knownTrace()))
	want := []struct {
		name         string
		tid          int
		ts, dur      float64
		released     bool
		releasedSaid bool
	}{
		{"solver", tidMain, 0, 2e6, false, false},
		{"context 0", tidContext0, 0.1e6, 1.9e6, false, true},
		{"context 1", tidContext0 + 1, 0.5e6, 1e6, true, true},
	}
	slices := of(p.TraceEvents, PhaseComplete, "")
	if len(slices) != len(want) {
		t.Fatalf("slices %v", slices)
	}
	for i, w := range want {
		s := slices[i]
		released, said := s["args"].(map[string]any)["released"]
		if s["name"] != w.name || s["tid"] != float64(w.tid) || s["pid"] != float64(pidProgram) || s["ts"] != w.ts || s["dur"] != w.dur ||
			said != w.releasedSaid || (said && released != w.released) {
			t.Errorf("slice %d: %v, want %s on thread %d at %v for %v", i, s, w.name, w.tid, w.ts, w.dur)
		}
	}
	if procs := names(p.TraceEvents, "process_name"); procs["2/0"] != "program: solver --grid 64" || len(procs) != 2 {
		t.Errorf("process names %v", procs)
	}
	if threads := names(p.TraceEvents, "thread_name"); threads["2/1"] != "program" || threads["2/2"] != "context 0" || threads["2/3"] != "context 1" {
		t.Errorf("thread names %v", threads)
	}
}

// The program's RSS and every context's live buffers and bytes are counters where the samples hold them; a
// device's memory is the program's own and others' where the sampler split it, else used; there is no
// cgroup counter, since no sample read one.
func TestTraceCounters(t *testing.T) {
	p := write(t, Trace(knownTrace()))
	dev := "device 0 memory (gpu0)"
	for _, c := range []struct {
		pid       int
		name, key string
		ts, v     []float64
	}{
		{pidProgram, "RSS", "bytes", []float64{0.2e6, 0.6e6}, []float64{100, 200}},
		{pidProgram, "context 0 live buffers", "buffers", []float64{0.2e6, 0.6e6, 1.9e6}, []float64{1, 2, 2}},
		{pidProgram, "context 0 live bytes", "bytes", []float64{0.2e6, 0.6e6, 1.9e6}, []float64{4096, 8192, 8192}},
		{pidProgram, "context 1 live buffers", "buffers", []float64{0.6e6, 1.9e6}, []float64{1, 3}},
		{pidProgram, "context 1 live bytes", "bytes", []float64{0.6e6, 1.9e6}, []float64{4096, 12288}},
		{pidMachine, "available memory", "bytes", []float64{0.2e6, 0.6e6, 1.9e6}, []float64{1000, 900, 950}},
		{pidMachine, dev, "program", []float64{0.2e6, 1.9e6}, []float64{20, 70}},
		{pidMachine, dev, "others", []float64{0.2e6, 1.9e6}, []float64{30, 0}}, // its own read above the device's use: none is others'
		{pidMachine, dev, "used", []float64{0.6e6}, []float64{80}},
	} {
		if ts, v := series(p.TraceEvents, c.pid, c.name, c.key); !sameFloats(ts, c.ts) || !sameFloats(v, c.v) {
			t.Errorf("process %d's %s %s: %v at %v, want %v at %v", c.pid, c.name, c.key, v, ts, c.v, c.ts)
		}
	}
	if c := of(p.TraceEvents, PhaseCounter, "cgroup memory"); len(c) != 0 {
		t.Errorf("a cgroup counter that no sample read: %v", c)
	}
	if n := len(of(p.TraceEvents, PhaseCounter, "")); n != 2+3*2+2*2+3+3 {
		t.Errorf("%d counter events", n)
	}
}

// The first failure is an instant at its time with its code's name and index; how the program ended is
// one at the trace's end: a kill, a time limit, an interrupt (of the whole trace).
func TestTraceInstants(t *testing.T) {
	tr := knownTrace()
	p := write(t, Trace(tr))
	got := of(p.TraceEvents, PhaseInstant, "")
	if len(got) != 2 || got[0]["name"] != "first failure: CL_MEM_OBJECT_ALLOCATION_FAILURE" || got[0]["ts"] != 1.25e6 ||
		got[0]["s"] != ScopeProcess || got[0]["pid"] != float64(pidProgram) || got[1]["name"] != "killed by SIGSEGV" || got[1]["ts"] != 2e6 {
		t.Fatalf("instants %v", got)
	}
	args := got[0]["args"].(map[string]any)
	if args["index"] != 7.0 || args["code"] != -4.0 || args["context"] != 1.0 || args["size_bytes"] != 4096.0 || args["call"] != "clCreateBuffer" {
		t.Errorf("the failure's args %v", args)
	}
	tr.FirstFailure, tr.Exit = nil, result.TraceExit{TimedOut: true, Interrupted: true, Description: "was ended"}
	got = of(write(t, Trace(tr)).TraceEvents, PhaseInstant, "")
	if len(got) != 2 || got[0]["name"] != "timed out" || got[0]["s"] != ScopeProcess || got[1]["name"] != "interrupted" || got[1]["s"] != ScopeGlobal ||
		got[1]["ts"] != 2e6 {
		t.Errorf("instants of a program ended by its time limit and an interrupt: %v", got)
	}
}
