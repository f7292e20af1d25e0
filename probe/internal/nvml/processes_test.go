package nvml

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"unsafe"
)

// The Go element types have the C layout of nvml.h on 64-bit targets, the only ones NVIDIA ships NVML for.
func TestProcessInfoLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layouts below are those of 64-bit targets")
	}
	var v2 processInfo
	got := []uintptr{unsafe.Sizeof(v2), unsafe.Offsetof(v2.PID), unsafe.Offsetof(v2.UsedGPUMemory),
		unsafe.Offsetof(v2.GPUInstanceID), unsafe.Offsetof(v2.ComputeInstanceID)}
	if want := []uintptr{24, 0, 8, 16, 20}; !reflect.DeepEqual(got, want) {
		t.Errorf("nvmlProcessInfo_t: size and offsets %v, want %v", got, want)
	}
	var v1 processInfoV1
	got = []uintptr{unsafe.Sizeof(v1), unsafe.Offsetof(v1.PID), unsafe.Offsetof(v1.UsedGPUMemory)}
	if want := []uintptr{16, 0, 8}; !reflect.DeepEqual(got, want) {
		t.Errorf("nvmlProcessInfo_v1_t: size and offsets %v, want %v", got, want)
	}
}

// cProcess is one entry as the fake NVML below writes it.
type cProcess struct {
	pid    uint32
	used   uint64
	gi, ci uint32
}

// fakeNVML answers like an NVML process call holding procs, writing each entry's bytes at the offsets of
// the C struct (elem bytes each: 24 for v2, 16 for v1) so the test checks the Go side against C, not
// against itself. calls counts the calls and caps records the capacity of each.
func fakeNVML(procs []cProcess, elem int, calls *int, caps *[]uint32) fillFunc {
	return func(count *uint32, buf unsafe.Pointer) Return {
		*calls++
		*caps = append(*caps, *count)
		if int(*count) < len(procs) {
			*count = uint32(len(procs))
			return ErrorInsufficientSize
		}
		b := unsafe.Slice((*byte)(buf), int(*count)*elem)
		for i, p := range procs {
			e := b[i*elem:]
			binary.LittleEndian.PutUint32(e[0:], p.pid)
			binary.LittleEndian.PutUint64(e[8:], p.used)
			if elem == 24 {
				binary.LittleEndian.PutUint32(e[16:], p.gi)
				binary.LittleEndian.PutUint32(e[20:], p.ci)
			}
		}
		*count = uint32(len(procs))
		return Success
	}
}

func convV2(p *processInfo) Process {
	return process(p.PID, p.UsedGPUMemory, p.GPUInstanceID, p.ComputeInstanceID)
}

func convV1(p *processInfoV1) Process { return process(p.PID, p.UsedGPUMemory, NoInstance, NoInstance) }

// A list longer than the first buffer is read whole after one retry, and an unknown figure stays unknown.
func TestCollectGrowsAsNVMLAsks(t *testing.T) {
	procs := make([]cProcess, 40)
	for i := range procs {
		procs[i] = cProcess{pid: uint32(1000 + i), used: uint64(i+1) << 20, gi: NoInstance, ci: NoInstance}
	}
	procs[3].used = ValueNotAvailable
	procs[5].gi, procs[5].ci = 1, 2
	for _, tc := range []struct {
		name string
		elem int
		run  func(fillFunc) ([]Process, error)
	}{
		{"v2", 24, func(f fillFunc) ([]Process, error) { return collect(f, "v2", convV2) }},
		{"v1", 16, func(f fillFunc) ([]Process, error) { return collect(f, "v1", convV1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls int
			var caps []uint32
			got, err := tc.run(fakeNVML(procs, tc.elem, &calls, &caps))
			if err != nil || calls != 2 || len(got) != len(procs) {
				t.Fatalf("%d processes, %v, after %d calls (capacities %v); want %d after 2", len(got), err, calls, caps, len(procs))
			}
			if caps[1] < 40 {
				t.Errorf("the retry offered room for %d, want at least 40", caps[1])
			}
			if p := got[3]; p.UsedKnown || p.UsedBytes != 0 || p.PID != 1003 {
				t.Errorf("NVML_VALUE_NOT_AVAILABLE read as %+v, want unknown memory", p)
			}
			if p := got[39]; !p.UsedKnown || p.UsedBytes != 40<<20 || p.PID != 1039 {
				t.Errorf("the last entry read as %+v", p)
			}
			wantGI, wantCI := uint32(1), uint32(2)
			if tc.elem == 16 {
				wantGI, wantCI = NoInstance, NoInstance // v1 has no instance ids
			}
			if p := got[5]; p.GPUInstanceID != wantGI || p.ComputeInstanceID != wantCI {
				t.Errorf("instance ids read as %d/%d, want %d/%d", p.GPUInstanceID, p.ComputeInstanceID, wantGI, wantCI)
			}
		})
	}
}

// A list that keeps growing, or a count past MaxProcesses, ends in an error after a few calls, and so does
// any other code; none is taken as an empty list.
func TestCollectIsBounded(t *testing.T) {
	calls := 0
	growing := func(count *uint32, _ unsafe.Pointer) Return {
		calls++
		*count += 100 // always a little more than offered
		return ErrorInsufficientSize
	}
	_, err := collect(growing, "growing", convV2)
	if !errors.Is(err, ErrorInsufficientSize) || calls != collectAttempts {
		t.Errorf("a list that keeps growing: %v after %d calls, want ErrorInsufficientSize after %d", err, calls, collectAttempts)
	}
	calls = 0
	huge := func(count *uint32, _ unsafe.Pointer) Return {
		calls++
		*count = MaxProcesses + 1
		return ErrorInsufficientSize
	}
	if _, err := collect(huge, "huge", convV2); !errors.Is(err, ErrorInsufficientSize) || calls != 1 {
		t.Errorf("a count past MaxProcesses: %v after %d calls, want ErrorInsufficientSize at once", err, calls)
	}
	vague := func(count *uint32, _ unsafe.Pointer) Return { return ErrorInsufficientSize } // count left as is
	var caps []uint32
	recording := func(count *uint32, buf unsafe.Pointer) Return { caps = append(caps, *count); return vague(count, buf) }
	if _, err := collect(recording, "vague", convV2); err == nil || len(caps) != collectAttempts || caps[1] <= caps[0] {
		t.Errorf("too small without a count: %v, capacities %v, want growing ones and an error", err, caps)
	}
	denied := func(*uint32, unsafe.Pointer) Return { return ErrorNoPermission }
	if got, err := collect(denied, "denied", convV2); !errors.Is(err, ErrorNoPermission) || got != nil {
		t.Errorf("NO_PERMISSION: %v, %v", got, err)
	}
	empty := func(count *uint32, _ unsafe.Pointer) Return { *count = 0; return Success }
	if got, err := collect(empty, "empty", convV2); err != nil || len(got) != 0 {
		t.Errorf("no process: %v, %v", got, err)
	}
}

// A process in both lists is one entry, with both flags and the larger known memory.
func TestMergeProcessesByPID(t *testing.T) {
	compute := []Process{{PID: 7, UsedBytes: 100, UsedKnown: true, Compute: true}, {PID: 3, Compute: true},
		{PID: 9, UsedBytes: 50, UsedKnown: true, Compute: true}}
	graphics := []Process{{PID: 7, UsedBytes: 40, UsedKnown: true, Graphics: true}, {PID: 3, UsedBytes: 8, UsedKnown: true, Graphics: true},
		{PID: 11, Graphics: true}, {PID: 9, UsedBytes: 60, UsedKnown: true, Graphics: true}}
	got := mergeProcesses(compute, graphics)
	want := []Process{
		{PID: 3, UsedBytes: 8, UsedKnown: true, Compute: true, Graphics: true},
		{PID: 7, UsedBytes: 100, UsedKnown: true, Compute: true, Graphics: true},
		{PID: 9, UsedBytes: 60, UsedKnown: true, Compute: true, Graphics: true},
		{PID: 11, Graphics: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// Without the library there is no open NVML: Processes on a nil or zero one is an error, never a crash,
// and a library without the process calls answers ErrorFunctionNotFound.
func TestProcessesWithoutTheLibrary(t *testing.T) {
	var never *NVML
	if _, err := never.Processes(Device{}); !errors.Is(err, ErrorUninitialized) {
		t.Errorf("Processes on a nil NVML: %v, want ErrorUninitialized", err)
	}
	if _, err := (&NVML{}).Processes(Device{}); !errors.Is(err, ErrorUninitialized) {
		t.Errorf("Processes on an NVML never opened: %v, want ErrorUninitialized", err)
	}
	old := &NVML{h: 1, compute: procCall{name: "nvmlDeviceGetComputeRunningProcesses"},
		graphics: procCall{name: "nvmlDeviceGetGraphicsRunningProcesses"}}
	if _, err := old.Processes(Device{}); !errors.Is(err, ErrorFunctionNotFound) {
		t.Errorf("Processes without the entry points: %v, want ErrorFunctionNotFound", err)
	}
	if n, err := Open(); err != nil {
		if _, err := n.Processes(Device{}); err == nil {
			t.Errorf("Processes on the NVML of a failed Open answered no error")
		}
	}
}

// TestNVMLProcessesLive prints which process calls this library resolved and what they list on each
// device, with the fields the report leaves out; it skips where NVML is absent.
func TestNVMLProcessesLive(t *testing.T) {
	n := openLive(t)
	if len(n.Devices) == 0 {
		t.Skip("NVML opened but lists no device: no process list to read")
	}
	for _, c := range []procCall{n.compute, n.graphics} {
		t.Logf("%s resolved=%v v1-layout=%v", c.name, c.fn != 0, c.v1)
	}
	for i, d := range n.Devices {
		ps, err := n.Processes(d)
		if err != nil {
			t.Errorf("device %d (%s): %v", i, d.PCIBusID, err)
			continue
		}
		t.Logf("device %d (%s): %d process(es)", i, d.PCIBusID, len(ps))
		for _, p := range ps {
			t.Logf("  %+v", p)
			if p.UsedKnown && p.UsedBytes == ValueNotAvailable {
				t.Errorf("pid %d: NVML_VALUE_NOT_AVAILABLE taken as a figure", p.PID)
			}
		}
	}
}
