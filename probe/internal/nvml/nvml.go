// Package nvml reads NVIDIA device memory through NVML (libnvidia-ml.so.1), loaded at run time with purego,
// so the binary needs neither cgo nor the NVIDIA driver to build or to run elsewhere. Like the OpenCL
// binding it is an unsafe boundary with the same rule: a Go pointer stays an unsafe.Pointer until the
// purego.SyscallN call expression that passes it to C (which moves its target to the heap for the call).
package nvml

import (
	"cmp"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Library is the NVML soname.
const Library = "libnvidia-ml.so.1"

// Return is an NVML return code (nvmlReturn_t). A Return other than Success is an error, so codes compare
// with errors.Is wherever they are wrapped.
type Return int32

// The codes of nvml.h this package names.
const (
	Success               Return = 0
	ErrorUninitialized    Return = 1
	ErrorInvalidArgument  Return = 2
	ErrorNotSupported     Return = 3
	ErrorNoPermission     Return = 4
	ErrorNotFound         Return = 6
	ErrorInsufficientSize Return = 7
	ErrorDriverNotLoaded  Return = 9
	ErrorLibraryNotFound  Return = 12
	ErrorFunctionNotFound Return = 13
	ErrorGPUIsLost        Return = 15
	ErrorArgumentVersion  Return = 25
	ErrorUnknown          Return = 999
)

var returnNames = map[Return]string{
	Success: "NVML_SUCCESS", ErrorUninitialized: "NVML_ERROR_UNINITIALIZED", ErrorInvalidArgument: "NVML_ERROR_INVALID_ARGUMENT",
	ErrorNotSupported: "NVML_ERROR_NOT_SUPPORTED", ErrorNoPermission: "NVML_ERROR_NO_PERMISSION", ErrorNotFound: "NVML_ERROR_NOT_FOUND",
	ErrorInsufficientSize: "NVML_ERROR_INSUFFICIENT_SIZE", ErrorDriverNotLoaded: "NVML_ERROR_DRIVER_NOT_LOADED",
	ErrorLibraryNotFound: "NVML_ERROR_LIBRARY_NOT_FOUND", ErrorFunctionNotFound: "NVML_ERROR_FUNCTION_NOT_FOUND",
	ErrorGPUIsLost: "NVML_ERROR_GPU_IS_LOST", ErrorArgumentVersion: "NVML_ERROR_ARGUMENT_VERSION_MISMATCH", ErrorUnknown: "NVML_ERROR_UNKNOWN",
}

// Error returns the code's name and number; it works without the library.
func (r Return) Error() string {
	if n, ok := returnNames[r]; ok {
		return fmt.Sprintf("%s (%d)", n, int32(r))
	}
	return fmt.Sprintf("NVML error %d", int32(r))
}

// CallError is a failed NVML call; it unwraps to the Return.
type CallError struct {
	Call   string
	Return Return
	Detail string // why, where the code alone does not say (the loader's message)
}

func (e *CallError) Error() string {
	s := e.Call + ": " + e.Return.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the code, so errors.Is(err, nvml.ErrorLibraryNotFound) works.
func (e *CallError) Unwrap() error { return e.Return }

func check(r uintptr, call string) error {
	if rc := Return(int32(uint32(r))); rc != Success {
		return &CallError{Call: call, Return: rc}
	}
	return nil
}

// Device is one NVML device and its PCI address ("dddd:bb:dd.f", lower case).
type Device struct {
	handle   uintptr
	PCIBusID string
}

// NVML is an initialised NVML.
type NVML struct {
	mu                                               sync.Mutex
	h                                                uintptr
	shutdown, getCount, getHandle, getPci, getMemory uintptr
	getMemoryV2                                      uintptr  // 0 on drivers before nvmlDeviceGetMemoryInfo_v2
	compute, graphics                                procCall // the running-process lists, optional
	Devices                                          []Device
}

// Open loads and initialises NVML and lists its devices. Without the library it answers a *CallError that
// unwraps to ErrorLibraryNotFound.
func Open() (*NVML, error) {
	// On one OS thread: the error is dlerror's, kept per thread (see cl's dlopen).
	runtime.LockOSThread()
	h, err := purego.Dlopen(Library, purego.RTLD_NOW|purego.RTLD_LOCAL)
	runtime.UnlockOSThread()
	if err != nil {
		return nil, &CallError{Call: "dlopen(" + Library + ")", Return: ErrorLibraryNotFound, Detail: strings.TrimSpace(err.Error())}
	}
	n := &NVML{h: h}
	syms := []struct {
		name string
		p    *uintptr
	}{{"nvmlShutdown", &n.shutdown}, {"nvmlDeviceGetCount_v2", &n.getCount}, {"nvmlDeviceGetHandleByIndex_v2", &n.getHandle},
		{"nvmlDeviceGetPciInfo_v3", &n.getPci}, {"nvmlDeviceGetMemoryInfo", &n.getMemory}}
	for _, s := range syms {
		if *s.p, err = purego.Dlsym(h, s.name); err != nil {
			return nil, &CallError{Call: "dlsym(" + s.name + ")", Return: ErrorFunctionNotFound}
		}
	}
	// v2 reports "used" without the driver's reserved memory, as nvidia-smi does; v1 counts it as used.
	n.getMemoryV2, _ = purego.Dlsym(h, "nvmlDeviceGetMemoryInfo_v2")
	n.compute = probeProcCall(h, "nvmlDeviceGetComputeRunningProcesses")
	n.graphics = probeProcCall(h, "nvmlDeviceGetGraphicsRunningProcesses")
	initFn, err := purego.Dlsym(h, "nvmlInit_v2")
	if err != nil {
		return nil, &CallError{Call: "dlsym(nvmlInit_v2)", Return: ErrorFunctionNotFound}
	}
	if r, _, _ := purego.SyscallN(initFn); check(r, "nvmlInit_v2") != nil {
		return nil, check(r, "nvmlInit_v2")
	}
	var count uint32
	if r, _, _ := purego.SyscallN(n.getCount, uintptr(unsafe.Pointer(&count))); check(r, "nvmlDeviceGetCount_v2") != nil {
		n.Close()
		return nil, check(r, "nvmlDeviceGetCount_v2")
	}
	for i := uint32(0); i < count && i < 1024; i++ {
		var handle uintptr
		if r, _, _ := purego.SyscallN(n.getHandle, uintptr(i), uintptr(unsafe.Pointer(&handle))); r != 0 {
			continue
		}
		// nvmlPciInfo_t: char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
		// char busId[32] (68 bytes; a larger buffer keeps us safe from layout growth).
		var pci [128]byte
		if r, _, _ := purego.SyscallN(n.getPci, handle, uintptr(unsafe.Pointer(&pci[0]))); r != 0 {
			continue
		}
		u32 := func(off int) uint32 {
			return uint32(pci[off]) | uint32(pci[off+1])<<8 | uint32(pci[off+2])<<16 | uint32(pci[off+3])<<24
		}
		n.Devices = append(n.Devices, Device{handle: handle,
			PCIBusID: strings.ToLower(fmt.Sprintf("%04x:%02x:%02x.0", u32(16), u32(20), u32(24)))})
	}
	return n, nil
}

// MemoryInfo is a device's memory in bytes, as NVML reads it.
type MemoryInfo struct {
	Of                int // the device's position in the list read
	Total, Free, Used uint64
}

// Memory reads the memory of each of devs, in their order: what the device-memory sampler of a run and the
// GPU memory child of a trace read every period. A device that cannot be read is left out, so one that
// stopped answering hides none of the others, and the first such failure is the error.
func (n *NVML) Memory(devs []Device) ([]MemoryInfo, error) {
	return readMemory(devs, n.memory)
}

// readMemory is Memory over any reading of one device (NVML's, or a test's).
func readMemory(devs []Device, read func(Device) (total, free, used uint64, err error)) ([]MemoryInfo, error) {
	out := make([]MemoryInfo, 0, len(devs))
	var first error
	for i, d := range devs {
		total, free, used, err := read(d)
		if err != nil {
			first = cmp.Or(first, err)
			continue
		}
		out = append(out, MemoryInfo{Of: i, Total: total, Free: free, Used: used})
	}
	return out, first
}

// memory returns total, free and used bytes of a device. With nvmlDeviceGetMemoryInfo_v2 "used" leaves
// out the memory the driver reserves (the figure nvidia-smi shows); the v1 call counts it as used.
func (n *NVML) memory(d Device) (total, free, used uint64, err error) {
	if n.getMemoryV2 != 0 {
		// nvmlMemory_v2_t: unsigned int version; unsigned long long total, reserved, free, used.
		var m [5]uint64
		m[0] = uint64(len(m)*8) | 2<<24 // the version word sits in the low 32 bits (little-endian)
		if r, _, _ := purego.SyscallN(n.getMemoryV2, d.handle, uintptr(unsafe.Pointer(&m[0]))); r == 0 {
			return m[1], m[3], m[4], nil
		}
	}
	var m [3]uint64
	r, _, _ := purego.SyscallN(n.getMemory, d.handle, uintptr(unsafe.Pointer(&m[0])))
	if err := check(r, "nvmlDeviceGetMemoryInfo"); err != nil {
		return 0, 0, 0, err
	}
	return m[0], m[1], m[2], nil
}

// Close shuts NVML down.
func (n *NVML) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.shutdown != 0 {
		purego.SyscallN(n.shutdown)
		n.shutdown = 0
	}
}
