package cl

import (
	"fmt"
	"runtime"
)

// Context is an OpenCL context over one or more devices of one platform. Not safe for concurrent use.
type Context struct {
	lib     *Library
	id      uintptr
	Devices []*Device
	// Diagnostics is true when the runtime's driver diagnostics (cl_intel_driver_diagnostics) are on for
	// this context: their messages come through the notify callback.
	Diagnostics bool
	hot         *pinnedBlock
}

// Mem is a cl_mem handle.
type Mem uintptr

// Event is a cl_event handle.
type Event uintptr

// CreateContext makes one context over devs (all of one platform). tag is passed to the notify callback
// and comes back in each Notice, so messages can be told apart by context.
func (l *Library) CreateContext(devs []*Device, tag int) (*Context, error) {
	if len(devs) == 0 {
		return nil, fmt.Errorf("clCreateContext: no device")
	}
	ids := make([]uintptr, len(devs))
	for i, d := range devs {
		ids[i] = d.id
	}
	props := []uintptr{CONTEXT_PLATFORM, devs[0].Platform.id}
	// Where every device offers them, the driver's own diagnostics (hints on allocations, among others)
	// are turned on: they arrive through the notify callback like any message of the runtime.
	diagnostics := true
	for _, d := range devs {
		diagnostics = diagnostics && d.HasExtension("cl_intel_driver_diagnostics")
	}
	if diagnostics {
		props = append(props, CONTEXT_SHOW_DIAGNOSTICS_INTEL, CONTEXT_DIAGNOSTICS_LEVEL_ALL_INTEL)
	}
	props = append(props, 0)
	var status int32
	id := clCreateContext(l.fn.createContext, props, ids, notifyCallback(), uintptr(tag), &status)
	if err := check(status, "clCreateContext"); err != nil {
		return nil, err
	}
	return &Context{lib: l, id: id, Devices: devs, Diagnostics: diagnostics, hot: newPinnedBlock()}, nil
}

// Release releases the context.
func (c *Context) Release() {
	call(c.lib.fn.releaseContext, c.id)
	c.hot.release()
}

// CreateBuffer is clCreateBuffer, with host memory from MapHost or none (0): the probe's hot path, which
// allocates nothing.
func (c *Context) CreateBuffer(flags, size uint64, host HostPtr) (Mem, error) {
	h := c.hot
	h.args[0], h.args[1], h.args[2], h.args[3], h.args[4] = c.id, uintptr(flags), uintptr(size), uintptr(host), h.statusAddr
	m := h.call(c.lib.fn.createBuffer, 5)
	if err := check(h.status, "clCreateBuffer"); err != nil {
		return 0, err
	}
	return Mem(m), nil
}

// Properties is a cl_mem_properties list for clCreateBufferWithProperties, pinned by the context that made
// it and valid as long as that context.
type Properties struct {
	list []uint64
	addr uintptr
}

// DeviceListProperties builds the properties that place a buffer only on the listed devices
// (CL_MEM_DEVICE_HANDLE_LIST_KHR, cl_khr_external_memory).
func (c *Context) DeviceListProperties(devs ...*Device) *Properties {
	list := []uint64{MEM_DEVICE_HANDLE_LIST_KHR}
	for _, d := range devs {
		list = append(list, uint64(d.id))
	}
	list = append(list, MEM_DEVICE_HANDLE_LIST_END_KHR, 0)
	c.hot.pin.Pin(&list[0])
	return &Properties{list: list, addr: pinnedAddr(&list[0])}
}

// CreateBufferWithProperties is clCreateBufferWithProperties (OpenCL 3.0); ErrUnsupported when absent.
func (c *Context) CreateBufferWithProperties(p *Properties, flags, size uint64, host HostPtr) (Mem, error) {
	if c.lib.fn.createBufferWithProperties == 0 {
		return 0, fmt.Errorf("clCreateBufferWithProperties: %w", ErrUnsupported)
	}
	h := c.hot
	h.args[0], h.args[1], h.args[2], h.args[3], h.args[4], h.args[5] = c.id, p.addr, uintptr(flags), uintptr(size), uintptr(host), h.statusAddr
	m := h.call(c.lib.fn.createBufferWithProperties, 6)
	runtime.KeepAlive(p)
	if err := check(h.status, "clCreateBufferWithProperties"); err != nil {
		return 0, err
	}
	return Mem(m), nil
}

// bufferRegion is cl_buffer_region: a sub-buffer's origin and size within its parent.
type bufferRegion struct{ origin, size uintptr }

// bufferCreateTypeRegion is CL_BUFFER_CREATE_TYPE_REGION.
const bufferCreateTypeRegion = 0x1220

// CreateSubBuffer is clCreateSubBuffer of the region [origin, origin+size) of parent, off the hot path (a
// pool's buffers; a region is made per call). The origin must be a multiple of the device's
// CL_DEVICE_MEM_BASE_ADDR_ALIGN.
func (c *Context) CreateSubBuffer(parent Mem, flags, origin, size uint64) (Mem, error) {
	if c.lib.fn.createSubBuffer == 0 {
		return 0, fmt.Errorf("clCreateSubBuffer: %w", ErrUnsupported)
	}
	region := &bufferRegion{origin: uintptr(origin), size: uintptr(size)}
	var status int32
	r := clCreateSubBuffer(c.lib.fn.createSubBuffer, parent, flags, bufferCreateTypeRegion, region, &status)
	if err := check(status, "clCreateSubBuffer"); err != nil {
		return 0, err
	}
	return Mem(r), nil
}

// ReleaseMem releases a buffer.
func (c *Context) ReleaseMem(m Mem) error {
	return check(call(c.lib.fn.releaseMemObject, uintptr(m)), "clReleaseMemObject")
}
