package nvml

import (
	"fmt"
	"sort"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ValueNotAvailable is NVML_VALUE_NOT_AVAILABLE as an unsigned long long field holds it: (-1) converted,
// all bits set. NVML puts it in usedGpuMemory when the driver cannot tell (under WDDM, some vGPU guests).
const ValueNotAvailable = ^uint64(0)

// NoInstance is what NVML puts in a process's GPU and compute instance ids outside MIG (0xFFFFFFFF).
const NoInstance = ^uint32(0)

// MaxProcesses bounds the process list of one call on one device: a count NVML asks for past it is
// treated as an error, not as a reason to allocate without limit.
const MaxProcesses = 4096

// processInfo is nvmlProcessInfo_t (nvmlProcessInfo_v2_t), the element of the _v2 and _v3 process calls:
// unsigned int pid; unsigned long long usedGpuMemory; unsigned int gpuInstanceId, computeInstanceId.
// Go pads it as the C compiler does (4 bytes before the 8-aligned usedGpuMemory): 24 bytes on 64-bit
// targets, checked by TestProcessInfoLayout.
type processInfo struct {
	PID               uint32
	UsedGPUMemory     uint64
	GPUInstanceID     uint32
	ComputeInstanceID uint32
}

// processInfoV1 is nvmlProcessInfo_v1_t, the element of the unversioned (v1) process calls: pid and
// usedGpuMemory only, 16 bytes on 64-bit targets. Passing the larger v2 element to a v1 call would
// misread every entry after the first.
type processInfoV1 struct {
	PID           uint32
	UsedGPUMemory uint64
}

// Process is one process that holds a context or memory on a device, as NVML lists it.
type Process struct {
	PID uint32
	// UsedBytes is the device memory the process holds; meaningful only where UsedKnown.
	UsedBytes uint64
	// UsedKnown is false where NVML answered NVML_VALUE_NOT_AVAILABLE for the process's memory.
	UsedKnown bool
	// GPUInstanceID and ComputeInstanceID are the MIG instances; NoInstance outside MIG or from a v1 call.
	GPUInstanceID, ComputeInstanceID uint32
	// Compute and Graphics say which list named the process (CUDA and OpenCL contexts are compute).
	Compute, Graphics bool
}

// procCall is one of the optional process-listing entry points, the newest version the library exports.
type procCall struct {
	fn   uintptr
	name string // the symbol resolved, for errors
	v1   bool   // takes nvmlProcessInfo_v1_t
}

// probeProcCall resolves base_v3, else base_v2, else the unversioned base (v1 layout). Absent all three,
// fn stays 0 and the call answers ErrorFunctionNotFound.
func probeProcCall(h uintptr, base string) procCall {
	for _, c := range []procCall{{name: base + "_v3"}, {name: base + "_v2"}, {name: base, v1: true}} {
		if p, err := purego.Dlsym(h, c.name); err == nil && p != 0 {
			c.fn = p
			return c
		}
	}
	return procCall{name: base}
}

// Processes lists the processes running on a device: NVML's compute processes (CUDA, OpenCL) and graphics
// processes, each once. A list the driver does not offer (ErrorFunctionNotFound, ErrorNotSupported) is
// left out; when both are missing the error says so. Any other failure of either list is the answer.
func (n *NVML) Processes(d Device) ([]Process, error) {
	if n == nil || n.h == 0 {
		return nil, &CallError{Call: "nvmlDeviceGetComputeRunningProcesses", Return: ErrorUninitialized, Detail: "NVML is not open"}
	}
	compute, cerr := n.compute.list(d)
	if cerr != nil && !unsupported(cerr) {
		return nil, cerr
	}
	graphics, gerr := n.graphics.list(d)
	if gerr != nil && !unsupported(gerr) {
		return nil, gerr
	}
	if cerr != nil && gerr != nil {
		return nil, cerr
	}
	for i := range compute {
		compute[i].Compute = true
	}
	for i := range graphics {
		graphics[i].Graphics = true
	}
	return mergeProcesses(compute, graphics), nil
}

// unsupported reports a list the library or the device does not offer, as opposed to a failed call.
func unsupported(err error) bool {
	e, ok := err.(*CallError)
	return ok && (e.Return == ErrorFunctionNotFound || e.Return == ErrorNotSupported)
}

// list calls the entry point with a buffer that grows as NVML asks.
func (c procCall) list(d Device) ([]Process, error) {
	if c.fn == 0 {
		return nil, &CallError{Call: c.name, Return: ErrorFunctionNotFound}
	}
	fill := func(count *uint32, buf unsafe.Pointer) Return {
		r, _, _ := purego.SyscallN(c.fn, d.handle, uintptr(unsafe.Pointer(count)), uintptr(buf))
		return Return(int32(uint32(r)))
	}
	if c.v1 {
		return collect(fill, c.name, func(p *processInfoV1) Process {
			return process(p.PID, p.UsedGPUMemory, NoInstance, NoInstance)
		})
	}
	return collect(fill, c.name, func(p *processInfo) Process {
		return process(p.PID, p.UsedGPUMemory, p.GPUInstanceID, p.ComputeInstanceID)
	})
}

func process(pid uint32, used uint64, gi, ci uint32) Process {
	p := Process{PID: pid, UsedBytes: used, UsedKnown: used != ValueNotAvailable, GPUInstanceID: gi, ComputeInstanceID: ci}
	if !p.UsedKnown {
		p.UsedBytes = 0
	}
	return p
}

// fillFunc is one NVML process call: it reads the capacity of buf from *count, fills buf and sets *count
// to the entries written, or, answering ErrorInsufficientSize, to the entries needed.
type fillFunc func(count *uint32, buf unsafe.Pointer) Return

// collectAttempts bounds the calls of one listing: processes that start between two calls can make NVML ask
// for more again, and the list is a snapshot, not worth chasing.
const collectAttempts = 4

// collect runs fill with a buffer of T (the C element type), growing it to what NVML asks for plus some
// headroom for processes starting meanwhile, and converts the entries written.
func collect[T any](fill fillFunc, call string, conv func(*T) Process) ([]Process, error) {
	capacity := 16
	for attempt := 0; attempt < collectAttempts; attempt++ {
		buf := make([]T, capacity)
		count := uint32(capacity)
		rc := fill(&count, unsafe.Pointer(&buf[0]))
		switch {
		case rc == Success:
			got := buf[:min(int(count), capacity)]
			out := make([]Process, len(got))
			for i := range got {
				out[i] = conv(&got[i])
			}
			return out, nil
		case rc != ErrorInsufficientSize:
			return nil, &CallError{Call: call, Return: rc}
		case int(count) > MaxProcesses:
			return nil, &CallError{Call: call, Return: rc, Detail: fmt.Sprintf("NVML asks room for %d processes, more than %d", count, MaxProcesses)}
		case int(count) <= capacity:
			capacity *= 2 // too small, without saying how much larger it must be
		default:
			capacity = int(count) + int(count)/4 + 4
		}
		capacity = min(capacity, MaxProcesses)
	}
	return nil, &CallError{Call: call, Return: ErrorInsufficientSize, Detail: fmt.Sprintf("the list kept growing over %d calls", collectAttempts)}
}

// mergeProcesses joins the compute and graphics lists: a process in both (a program that renders and
// computes, an OpenCL-OpenGL interop one) is one entry with both flags and the larger memory, a known
// figure preferred to an unknown one. The result is in pid order, so two listings compare.
func mergeProcesses(lists ...[]Process) []Process {
	byPID := map[uint32]int{}
	var out []Process
	for _, l := range lists {
		for _, p := range l {
			i, seen := byPID[p.PID]
			if !seen {
				byPID[p.PID] = len(out)
				out = append(out, p)
				continue
			}
			q := &out[i]
			q.Compute, q.Graphics = q.Compute || p.Compute, q.Graphics || p.Graphics
			if p.UsedKnown && (!q.UsedKnown || p.UsedBytes > q.UsedBytes) {
				q.UsedBytes, q.UsedKnown, q.GPUInstanceID, q.ComputeInstanceID = p.UsedBytes, true, p.GPUInstanceID, p.ComputeInstanceID
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}
