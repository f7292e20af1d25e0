// Package nvml reads NVIDIA device memory through NVML (libnvidia-ml.so.1), loaded at run time with purego,
// so the binary needs neither cgo nor the NVIDIA driver to build or to run elsewhere. Like the OpenCL
// binding it is an unsafe boundary: raw calls stay here, callers get Go types.
package nvml

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Library is the NVML soname.
const Library = "libnvidia-ml.so.1"

// ErrNotFound is returned when NVML cannot be loaded.
var ErrNotFound = errors.New("NVML (" + Library + ") not found")

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
	getMemoryV2                                      uintptr // 0 on drivers before nvmlDeviceGetMemoryInfo_v2
	Devices                                          []Device
}

// Open loads and initialises NVML and lists its devices.
func Open() (*NVML, error) {
	h, err := purego.Dlopen(Library, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	n := &NVML{h: h}
	syms := []struct {
		name string
		p    *uintptr
	}{{"nvmlShutdown", &n.shutdown}, {"nvmlDeviceGetCount_v2", &n.getCount}, {"nvmlDeviceGetHandleByIndex_v2", &n.getHandle},
		{"nvmlDeviceGetPciInfo_v3", &n.getPci}, {"nvmlDeviceGetMemoryInfo", &n.getMemory}}
	for _, s := range syms {
		if *s.p, err = purego.Dlsym(h, s.name); err != nil {
			return nil, fmt.Errorf("NVML lacks %s", s.name)
		}
	}
	// v2 reports "used" without the driver's reserved memory, as nvidia-smi does; v1 counts it as used.
	n.getMemoryV2, _ = purego.Dlsym(h, "nvmlDeviceGetMemoryInfo_v2")
	initFn, err := purego.Dlsym(h, "nvmlInit_v2")
	if err != nil {
		return nil, fmt.Errorf("NVML lacks nvmlInit_v2")
	}
	if r := call(initFn); r != 0 {
		return nil, fmt.Errorf("nvmlInit_v2 returned %d", r)
	}
	var count uint32
	if r := call(n.getCount, uintptr(unsafe.Pointer(&count))); r != 0 {
		n.Close()
		return nil, fmt.Errorf("nvmlDeviceGetCount_v2 returned %d", r)
	}
	for i := uint32(0); i < count; i++ {
		var handle uintptr
		if r := call(n.getHandle, uintptr(i), uintptr(unsafe.Pointer(&handle))); r != 0 {
			continue
		}
		// nvmlPciInfo_t: char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
		// char busId[32] (68 bytes; a larger buffer keeps us safe from layout growth).
		var pci [128]byte
		if r := call(n.getPci, handle, uintptr(unsafe.Pointer(&pci[0]))); r != 0 {
			continue
		}
		u32 := func(off int) uint32 { return *(*uint32)(unsafe.Pointer(&pci[off])) }
		n.Devices = append(n.Devices, Device{handle: handle,
			PCIBusID: strings.ToLower(fmt.Sprintf("%04x:%02x:%02x.0", u32(16), u32(20), u32(24)))})
	}
	return n, nil
}

// Memory returns total, free and used bytes of a device. With nvmlDeviceGetMemoryInfo_v2 "used" leaves
// out the memory the driver reserves (the figure nvidia-smi shows); the v1 call counts it as used.
func (n *NVML) Memory(d Device) (total, free, used uint64, err error) {
	if n.getMemoryV2 != 0 {
		// nvmlMemory_v2_t: unsigned int version; unsigned long long total, reserved, free, used.
		var m [5]uint64
		*(*uint32)(unsafe.Pointer(&m[0])) = uint32(len(m)*8) | 2<<24
		if r := call(n.getMemoryV2, d.handle, uintptr(unsafe.Pointer(&m[0]))); r == 0 {
			return m[1], m[3], m[4], nil
		}
	}
	var m [3]uint64
	if r := call(n.getMemory, d.handle, uintptr(unsafe.Pointer(&m[0]))); r != 0 {
		return 0, 0, 0, fmt.Errorf("nvmlDeviceGetMemoryInfo returned %d", r)
	}
	return m[0], m[1], m[2], nil
}

// Close shuts NVML down.
func (n *NVML) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.shutdown != 0 {
		call(n.shutdown)
		n.shutdown = 0
	}
}

func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return uintptr(uint32(r))
}
