package cl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Raw OpenCL constants, named as in the C headers without the CL_ prefix.
const (
	PLATFORM_PROFILE    = 0x0900
	PLATFORM_VERSION    = 0x0901
	PLATFORM_NAME       = 0x0902
	PLATFORM_VENDOR     = 0x0903
	PLATFORM_EXTENSIONS = 0x0904

	DEVICE_TYPE_ALL = 0xFFFFFFFF

	DEVICE_TYPE                          = 0x1000
	DEVICE_MAX_COMPUTE_UNITS             = 0x1002
	DEVICE_MAX_MEM_ALLOC_SIZE            = 0x1010
	DEVICE_MEM_BASE_ADDR_ALIGN           = 0x1019 // bits
	DEVICE_GLOBAL_MEM_SIZE               = 0x101F
	DEVICE_HOST_UNIFIED_MEMORY           = 0x1035
	DEVICE_NAME                          = 0x102B
	DEVICE_VENDOR                        = 0x102C
	DRIVER_VERSION                       = 0x102D
	DEVICE_VERSION                       = 0x102F
	DEVICE_EXTENSIONS                    = 0x1030
	DEVICE_PCI_BUS_INFO_KHR              = 0x410F
	DEVICE_PCI_BUS_ID_NV                 = 0x4008
	DEVICE_PCI_SLOT_ID_NV                = 0x4009
	DEVICE_PCI_DOMAIN_ID_NV              = 0x400A
	DEVICE_TOPOLOGY_AMD                  = 0x4037
	DEVICE_GLOBAL_FREE_MEMORY_AMD        = 0x4039
	DEVICE_TYPE_CPU                      = 1 << 1
	DEVICE_TYPE_GPU                      = 1 << 2
	DEVICE_TYPE_ACCELERATOR              = 1 << 3
	DEVICE_TYPE_CUSTOM                   = 1 << 4
	MEM_READ_WRITE                       = 1 << 0
	MEM_ALLOC_HOST_PTR                   = 1 << 4
	MEM_DEVICE_HANDLE_LIST_KHR           = 0x2051
	MEM_DEVICE_HANDLE_LIST_END_KHR       = 0
	QUEUE_PROFILING_ENABLE               = 1 << 1
	CONTEXT_PLATFORM                     = 0x1084
	CONTEXT_SHOW_DIAGNOSTICS_INTEL       = 0x4106 // cl_intel_driver_diagnostics
	CONTEXT_DIAGNOSTICS_LEVEL_ALL_INTEL  = 0xff
	PROGRAM_BUILD_LOG                    = 0x1183
	EVENT_COMMAND_EXECUTION_STATUS       = 0x11D3
	PROFILING_COMMAND_START              = 0x1282
	PROFILING_COMMAND_END                = 0x1283
	MIGRATE_MEM_OBJECT_HOST              = 1 << 0
	MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED = 1 << 1
)

// Platform is one OpenCL platform.
type Platform struct {
	lib        *Library
	id         uintptr
	Index      int
	Name       string
	Vendor     string
	Version    string
	Extensions []string
}

// Device is one OpenCL device with the figures the probe reports.
type Device struct {
	lib      *Library
	id       uintptr
	Platform *Platform
	// Index is the device's position across all platforms in enumeration order (what --devices selects)
	// when built by Devices; PlatformIndex its position within its platform.
	PlatformIndex int
	Name          string
	Vendor        string
	Type          string
	Version       string
	DriverVersion string
	GlobalMem     uint64
	MaxAlloc      uint64
	HostUnified   bool
	ComputeUnits  uint32
	Extensions    []string
	// PCIBusID is "dddd:bb:dd.f" when the runtime tells it (cl_khr_pci_bus_info, or the NVIDIA or AMD
	// vendor queries), else "".
	PCIBusID string
}

// HasExtension reports whether the device lists ext.
func (d *Device) HasExtension(ext string) bool {
	for _, e := range d.Extensions {
		if e == ext {
			return true
		}
	}
	return false
}

// Platforms lists the platforms of the library. No platform is ErrNoPlatform.
func (l *Library) Platforms() ([]*Platform, error) {
	var n uint32
	r := clGetPlatformIDs(l.fn.getPlatformIDs, nil, &n)
	// The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR when no vendor .icd loads.
	if st := Status(r); st == PlatformNotFoundKHR || (st == Success && n == 0) {
		return nil, ErrNoPlatform
	}
	if err := check(r, "clGetPlatformIDs"); err != nil {
		return nil, err
	}
	if n > maxHandles {
		return nil, fmt.Errorf("clGetPlatformIDs: the runtime answered an implausible %d platforms", n)
	}
	ids := make([]uintptr, n)
	r = clGetPlatformIDs(l.fn.getPlatformIDs, ids, nil)
	if err := check(r, "clGetPlatformIDs"); err != nil {
		return nil, err
	}
	out := make([]*Platform, 0, n)
	for i, id := range ids {
		p := &Platform{lib: l, id: id, Index: i}
		var err error
		if p.Name, err = l.platformString(id, PLATFORM_NAME); err != nil {
			return nil, err
		}
		p.Vendor, _ = l.platformString(id, PLATFORM_VENDOR)
		p.Version, _ = l.platformString(id, PLATFORM_VERSION)
		ext, _ := l.platformString(id, PLATFORM_EXTENSIONS)
		p.Extensions = strings.Fields(ext)
		out = append(out, p)
	}
	return out, nil
}

// maxHandles bounds the platforms or devices one runtime may report.
const maxHandles = 4096

func (l *Library) platformString(id uintptr, param uint32) (string, error) {
	b, err := queryInfo("clGetPlatformInfo", infoOf(l.fn.getPlatformInfo, param, id))
	return cString(b), err
}

// Devices lists the platform's devices of every type. A platform without devices returns an empty list.
func (p *Platform) Devices() ([]*Device, error) {
	l := p.lib
	var n uint32
	r := clGetDeviceIDs(l.fn.getDeviceIDs, p.id, DEVICE_TYPE_ALL, nil, &n)
	if st := Status(r); st == DeviceNotFound || (st == Success && n == 0) {
		return nil, nil
	}
	if err := check(r, "clGetDeviceIDs"); err != nil {
		return nil, err
	}
	if n > maxHandles {
		return nil, fmt.Errorf("clGetDeviceIDs: the runtime answered an implausible %d devices", n)
	}
	ids := make([]uintptr, n)
	r = clGetDeviceIDs(l.fn.getDeviceIDs, p.id, DEVICE_TYPE_ALL, ids, nil)
	if err := check(r, "clGetDeviceIDs"); err != nil {
		return nil, err
	}
	out := make([]*Device, 0, n)
	for i, id := range ids {
		d, err := p.describe(id, i)
		if err != nil {
			return nil, fmt.Errorf("device %d of platform %q: %w", i, p.Name, err)
		}
		out = append(out, d)
	}
	return out, nil
}

func (p *Platform) describe(id uintptr, index int) (*Device, error) {
	d := &Device{lib: p.lib, id: id, Platform: p, PlatformIndex: index}
	var err error
	if d.Name, err = d.infoString(DEVICE_NAME); err != nil {
		return nil, err
	}
	d.Vendor, _ = d.infoString(DEVICE_VENDOR)
	d.Version, _ = d.infoString(DEVICE_VERSION)
	d.DriverVersion, _ = d.infoString(DRIVER_VERSION)
	ext, _ := d.infoString(DEVICE_EXTENSIONS)
	d.Extensions = strings.Fields(ext)
	if d.GlobalMem, err = d.InfoUint64(DEVICE_GLOBAL_MEM_SIZE); err != nil {
		return nil, err
	}
	if d.MaxAlloc, err = d.InfoUint64(DEVICE_MAX_MEM_ALLOC_SIZE); err != nil {
		return nil, err
	}
	if u, err := d.infoUint32(DEVICE_HOST_UNIFIED_MEMORY); err == nil {
		d.HostUnified = u != 0
	}
	d.ComputeUnits, _ = d.infoUint32(DEVICE_MAX_COMPUTE_UNITS)
	if t, err := d.InfoUint64(DEVICE_TYPE); err == nil {
		d.Type = deviceTypeName(t)
	}
	d.PCIBusID = d.pciBusID()
	return d, nil
}

func deviceTypeName(t uint64) string {
	var names []string
	for _, n := range []struct {
		bit  uint64
		name string
	}{{DEVICE_TYPE_GPU, "GPU"}, {DEVICE_TYPE_CPU, "CPU"}, {DEVICE_TYPE_ACCELERATOR, "accelerator"}, {DEVICE_TYPE_CUSTOM, "custom"}} {
		if t&n.bit != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "other"
	}
	return strings.Join(names, "+")
}

// pciBusID asks, in order, the Khronos extension, NVIDIA's and AMD's vendor queries; "" when none answers.
func (d *Device) pciBusID() string {
	if d.HasExtension("cl_khr_pci_bus_info") {
		// struct cl_device_pci_bus_info_khr { cl_uint domain, bus, device, function; }
		if b, err := d.InfoBytes(DEVICE_PCI_BUS_INFO_KHR); err == nil && len(b) >= 16 {
			le := binary.LittleEndian
			return fmt.Sprintf("%04x:%02x:%02x.%x", le.Uint32(b), le.Uint32(b[4:]), le.Uint32(b[8:]), le.Uint32(b[12:]))
		}
	}
	if d.HasExtension("cl_nv_device_attribute_query") {
		bus, err1 := d.infoUint32(DEVICE_PCI_BUS_ID_NV)
		slot, err2 := d.infoUint32(DEVICE_PCI_SLOT_ID_NV)
		if err1 == nil && err2 == nil {
			domain, _ := d.infoUint32(DEVICE_PCI_DOMAIN_ID_NV)
			// NVIDIA packs device and function into the slot id: device = slot >> 3, function = slot & 7.
			return fmt.Sprintf("%04x:%02x:%02x.%x", domain, bus, slot>>3, slot&7)
		}
	}
	if d.HasExtension("cl_amd_device_attribute_query") {
		// cl_device_topology_amd: type at 0, then bus, device, function bytes at offsets 21, 22, 23.
		if b, err := d.InfoBytes(DEVICE_TOPOLOGY_AMD); err == nil && len(b) >= 24 && b[0] == 1 {
			return fmt.Sprintf("0000:%02x:%02x.%x", b[21], b[22], b[23])
		}
	}
	return ""
}

// InfoBytes runs clGetDeviceInfo for any parameter, vendor ones included.
func (d *Device) InfoBytes(param uint32) ([]byte, error) {
	return queryInfo("clGetDeviceInfo", infoOf(d.lib.fn.getDeviceInfo, param, d.id))
}

func (d *Device) infoString(param uint32) (string, error) {
	b, err := d.InfoBytes(param)
	return cString(b), err
}

// InfoUint64 reads an integer parameter of 4 or 8 bytes (cl_uint, cl_ulong, size_t, bitfields).
func (d *Device) InfoUint64(param uint32) (uint64, error) {
	b, err := d.InfoBytes(param)
	if err != nil {
		return 0, err
	}
	switch len(b) {
	case 8:
		return binary.LittleEndian.Uint64(b), nil
	case 4:
		return uint64(binary.LittleEndian.Uint32(b)), nil
	}
	return 0, fmt.Errorf("clGetDeviceInfo(0x%x) returned %d bytes for an integer", param, len(b))
}

func (d *Device) infoUint32(param uint32) (uint32, error) {
	v, err := d.InfoUint64(param)
	return uint32(v), err
}

// FreeMemoryAMD returns free global memory in bytes through CL_DEVICE_GLOBAL_FREE_MEMORY_AMD (which answers
// KiB). A runtime without the query gives ErrUnsupported.
func (d *Device) FreeMemoryAMD() (uint64, error) {
	b, err := d.InfoBytes(DEVICE_GLOBAL_FREE_MEMORY_AMD)
	if err != nil {
		if errors.Is(err, InvalidValue) {
			return 0, ErrUnsupported
		}
		return 0, err
	}
	if len(b) < 8 {
		return 0, ErrUnsupported
	}
	// The query returns size_t[2] on AMD (total free, largest free block); the first is what we want.
	return binary.LittleEndian.Uint64(b) * 1024, nil
}

// AllDevices enumerates every platform and its devices.
func (l *Library) AllDevices() ([]*Platform, [][]*Device, error) {
	ps, err := l.Platforms()
	if err != nil {
		return nil, nil, err
	}
	devs := make([][]*Device, len(ps))
	for i, p := range ps {
		if devs[i], err = p.Devices(); err != nil {
			return nil, nil, err
		}
	}
	return ps, devs, nil
}

// BaseAddrAlign is CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes: what a sub-buffer's origin must be a multiple of.
func (d *Device) BaseAddrAlign() (uint64, error) {
	bits, err := d.infoUint32(DEVICE_MEM_BASE_ADDR_ALIGN)
	return uint64(bits) / 8, err
}
