package timeline

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// knownRun is a run of five jobs with known times: the run starts at 03:04:05; each job's loop starts at
// a whole second after it (+2 s, +6 s, +8 s, +10 s), less its set-up; the third recorded no start.
func knownRun() *result.Run {
	at := func(s string) string { return "2026-01-02T03:04:" + s + "Z" }
	failure := &result.FirstFailure{Index: 10, Stage: result.StageCreate, Code: -4, Name: "CL_MEM_OBJECT_ALLOCATION_FAILURE", Call: "clCreateBuffer"}
	dev := func(used0, used1 uint64) []result.DeviceSample {
		return []result.DeviceSample{{Device: 0, UsedBytes: used0}, {Device: 1, UsedBytes: used1}}
	}
	return &result.Run{Started: at("05"), Tool: result.Tool{Name: "clmemprobe", Version: "test"},
		Devices: []result.Device{{Index: 0, Name: "gpu0"}, {Index: 1, Name: "gpu1"}},
		Jobs: []result.JobResult{
			{Strategy: result.Shared, SizeBytes: mib, Outcome: result.OutcomeFailed, FirstFailure: failure, AllocationsOK: 10,
				LoopStarted: at("07"), SetupSeconds: 0.5, Seconds: 3, LoopSeconds: 2, Samples: []result.Sample{
					{Index: 0, Seconds: 0.25, RSSBytes: 100, AvailBytes: 1000, CgroupBytes: 50, DeviceSamples: dev(10, 20)},
					{Index: 10, Seconds: 1.75, RSSBytes: 300, AvailBytes: 800, CgroupBytes: 250, DeviceSamples: dev(110, 120)}}},
			// The guard stopped it; its first sample has no RSS (not read), and no cgroup or device figures.
			{Strategy: result.PerDevice, Variant: "cap", Flags: "use-host-ptr", SizeBytes: mib, Outcome: result.OutcomeStopped,
				StopCause: result.StopHostGuard, Guard: result.GuardSystem, Reason: "host guard: stopped", WorkerPID: 4242,
				LoopStarted: at("11"), SetupSeconds: 0.25, Seconds: 1, LoopSeconds: 0.5, Samples: []result.Sample{
					{Index: 0, Seconds: 0.1, AvailBytes: 700}, {Index: 4, Seconds: 0.4, RSSBytes: 500, AvailBytes: 600}}},
			{Strategy: result.DeviceList, SizeBytes: mib, Outcome: result.OutcomeUnsupported, Seconds: 0.5},
			{Strategy: result.Pool, SizeBytes: mib, Outcome: result.OutcomeCrashed, Signal: "SIGSEGV", LoopStarted: at("13"), Seconds: 1},
			{Strategy: result.Shared, SizeBytes: 2 * mib, Outcome: result.OutcomeStopped, StopCause: result.StopInterrupted,
				LoopStarted: at("15"), Seconds: 0.5},
		}}
}

const mib = 1 << 20

// Each job is a process with its slice where it ran, named by what it ran.
func TestRunSlicePerJob(t *testing.T) {
	p := write(t, Run(knownRun()))
	want := []struct {
		name    string
		ts, dur float64
	}{
		{"shared 1 MiB", 1.5e6, 3e6},
		{"per-device 1 MiB, variant cap, flags use-host-ptr", 5.75e6, 1e6},
		{"device-list 1 MiB", 6.75e6, 0.5e6}, // after the job before it: it recorded no start
		{"pool 1 MiB", 8e6, 1e6},
		{"shared 2 MiB", 10e6, 0.5e6},
	}
	slices := of(p.TraceEvents, PhaseComplete, "")
	if len(slices) != len(want) {
		t.Fatalf("%d slices, want one per job: %v", len(slices), slices)
	}
	for i, w := range want {
		s := slices[i]
		if s["name"] != w.name || s["ts"] != w.ts || s["dur"] != w.dur || s["pid"] != float64(pidFirstJob+i) || s["tid"] != float64(tidMain) {
			t.Errorf("slice %d: %v, want %s at %v for %v on process %d", i, s, w.name, w.ts, w.dur, pidFirstJob+i)
		}
	}
	if _, ok := slices[2]["args"].(map[string]any)["placed"]; !ok {
		t.Errorf("the job without a start does not say where it was placed: %v", slices[2])
	}
	procs := names(p.TraceEvents, "process_name")
	if procs["1/0"] != "machine: host memory and devices" || procs["2/0"] != "job 1: shared 1 MiB" ||
		procs["3/0"] != "job 2: per-device 1 MiB, variant cap, flags use-host-ptr (worker 4242)" || len(procs) != 6 {
		t.Errorf("process names %v", procs)
	}
	if threads := names(p.TraceEvents, "thread_name"); len(threads) != 5 || threads["2/1"] != "worker" {
		t.Errorf("thread names %v", threads)
	}
	if p.OtherData["document"] != "run" || p.OtherData["time_origin"] != "2026-01-02T03:04:05Z" || p.OtherData["devices"] != "gpu0, gpu1" {
		t.Errorf("otherData %v", p.OtherData)
	}
}

// Counters are the samples' series where they were read, at the samples' times (the loop's start plus t),
// and nothing where they were not: no cgroup or device figure beyond the first job's, no RSS of 0.
func TestRunCountersOnlyWhereMeasured(t *testing.T) {
	p := write(t, Run(knownRun()))
	for _, c := range []struct {
		pid       int
		name, key string
		ts, v     []float64
	}{
		{pidMachine, "available memory", "bytes", []float64{2.25e6, 3.75e6, 6.1e6, 6.4e6}, []float64{1000, 800, 700, 600}},
		{pidMachine, "cgroup memory", "bytes", []float64{2.25e6, 3.75e6}, []float64{50, 250}},
		{pidMachine, "device 0 memory (gpu0)", "used", []float64{2.25e6, 3.75e6}, []float64{10, 110}},
		{pidMachine, "device 1 memory (gpu1)", "used", []float64{2.25e6, 3.75e6}, []float64{20, 120}},
		{2, "RSS", "bytes", []float64{2.25e6, 3.75e6}, []float64{100, 300}},
		{2, "buffers", "buffers", []float64{2.25e6, 3.75e6}, []float64{0, 10}},
		{2, "buffer bytes", "bytes", []float64{2.25e6, 3.75e6}, []float64{0, 10 * mib}},
		{3, "RSS", "bytes", []float64{6.4e6}, []float64{500}},
		{3, "buffers", "buffers", []float64{6.1e6, 6.4e6}, []float64{0, 4}},
	} {
		if ts, v := series(p.TraceEvents, c.pid, c.name, c.key); !sameFloats(ts, c.ts) || !sameFloats(v, c.v) {
			t.Errorf("process %d's %s: %v at %v, want %v at %v", c.pid, c.name, v, ts, c.v, c.ts)
		}
	}
	// 4 samples of the machine's available memory, 2 of its cgroup, 2+2 of its devices; RSS, buffers and bytes
	// for the 4 samples, less the RSS that was not read.
	if n := len(of(p.TraceEvents, PhaseCounter, "")); n != 4+2+4+(4*3-1) {
		t.Errorf("%d counter events", n)
	}
	for _, e := range of(p.TraceEvents, PhaseCounter, "") {
		if pid := e["pid"].(float64); pid > 3 {
			t.Errorf("a counter of a job without samples: %v", e)
		}
	}
}

// The loop's ends are instants: the failure at the loop's end (the loop's start plus loop_seconds) with its
// code's name and index, the guard's stop there too, the kill and the interrupt at the job's end, the
// interrupt scoped to the whole run.
func TestRunInstants(t *testing.T) {
	p := write(t, Run(knownRun()))
	want := []struct {
		name  string
		ts    float64
		pid   int
		scope string
	}{
		{"first failure: CL_MEM_OBJECT_ALLOCATION_FAILURE", 4e6, 2, ScopeProcess},
		{"host guard stop", 6.5e6, 3, ScopeProcess},
		{"killed by SIGSEGV", 9e6, 5, ScopeProcess},
		{"interrupted", 10.5e6, 6, ScopeGlobal},
	}
	got := of(p.TraceEvents, PhaseInstant, "")
	if len(got) != len(want) {
		t.Fatalf("instants %v", got)
	}
	for i, w := range want {
		e := got[i]
		if e["name"] != w.name || e["ts"] != w.ts || e["pid"] != float64(w.pid) || e["s"] != w.scope {
			t.Errorf("instant %d: %v, want %s at %v on process %d, scope %s", i, e, w.name, w.ts, w.pid, w.scope)
		}
	}
	args := got[0]["args"].(map[string]any)
	if args["index"] != 10.0 || args["code"] != -4.0 || args["name"] != "CL_MEM_OBJECT_ALLOCATION_FAILURE" || args["call"] != "clCreateBuffer" {
		t.Errorf("the failure's args %v", args)
	}
	if g := got[1]["args"].(map[string]any); g["guard"] != string(result.GuardSystem) || g["reason"] != "host guard: stopped" {
		t.Errorf("the guard stop's args %v", g)
	}
}

// Where a job recorded no loop time, its failure is at the first sample taken at or after the failing
// buffer (the worker's last).
func TestRunFailureWithoutLoopTime(t *testing.T) {
	r := knownRun()
	r.Jobs = r.Jobs[:1]
	r.Jobs[0].LoopSeconds = 0
	p := write(t, Run(r))
	if f := of(p.TraceEvents, PhaseInstant, ""); len(f) != 1 || f[0]["ts"] != 3.75e6 {
		t.Errorf("the failure %v, want it at the last sample, 3.75 s", f)
	}
}
