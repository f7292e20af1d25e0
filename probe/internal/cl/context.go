package cl

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
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

// hotBlock holds the arguments and out-parameters of the allocation loop's calls. It lives pinned (see the
// package comment), so the addresses of its fields can be written into args before a call.
type hotBlock struct {
	// fn, args and ret are the call itself, read and written by the trampoline (hotcall_amd64.s) through
	// the offsets the assembler generates from this type (go_asm.h): keep their names.
	fn          uintptr
	args        [9]uintptr
	ret         uintptr
	status      int32
	mem         Mem     // one buffer passed by address: the list of one to migrate, a kernel argument
	u32         uint32  // a kernel argument passed by address
	global      uintptr // a kernel's global work size, passed by address
	pattern     [8]byte // the fill pattern
	patternSize uintptr
	event       Event // an event out-parameter
}

// pinnedBlock is a hotBlock with its pin and the addresses of its fields, taken once when it was pinned.
type pinnedBlock struct {
	*hotBlock
	pin                                                              runtime.Pinner
	statusAddr, memAddr, u32Addr, globalAddr, patternAddr, eventAddr uintptr
}

func newPinnedBlock() *pinnedBlock {
	b := &pinnedBlock{hotBlock: new(hotBlock)}
	b.pin.Pin(b.hotBlock)
	h := b.hotBlock
	// The block is pinned: these addresses stay valid until release unpins it.
	b.statusAddr, b.memAddr, b.u32Addr = uintptr(unsafe.Pointer(&h.status)), uintptr(unsafe.Pointer(&h.mem)), uintptr(unsafe.Pointer(&h.u32))
	b.globalAddr, b.patternAddr, b.eventAddr = uintptr(unsafe.Pointer(&h.global)), uintptr(unsafe.Pointer(&h.pattern[0])), uintptr(unsafe.Pointer(&h.event))
	return b
}

// call makes the foreign call fn with the first n arguments of the block and returns what it returned.
func (b *pinnedBlock) call(fn uintptr, n int) uintptr {
	return hotCall(b.hotBlock, fn, n)
}

// eventOut is the event out-parameter argument: the block's event cell, or NULL.
func (b *pinnedBlock) eventOut(want bool) uintptr {
	if want {
		b.event = 0
		return b.eventAddr
	}
	return 0
}

// result turns an enqueue's status into its event or a *CallError.
func (b *pinnedBlock) result(r uintptr, call string, wantEvent bool) (Event, error) {
	if err := check(int32(r), call); err != nil {
		return 0, err
	}
	if wantEvent {
		return b.event, nil
	}
	return 0, nil
}

func (b *pinnedBlock) release() { b.pin.Unpin() }

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
	id, _, _ := purego.SyscallN(l.fn.createContext, uintptr(unsafe.Pointer(&props[0])), uintptr(len(ids)),
		uintptr(unsafe.Pointer(&ids[0])), notifyCallback(), uintptr(tag), uintptr(unsafe.Pointer(&status)))
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

// CreateBuffer is clCreateBuffer with no host pointer: the probe's hot path, which allocates nothing.
func (c *Context) CreateBuffer(flags, size uint64) (Mem, error) {
	h := c.hot
	h.args[0], h.args[1], h.args[2], h.args[3], h.args[4] = c.id, uintptr(flags), uintptr(size), 0, h.statusAddr
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
	return &Properties{list: list, addr: uintptr(unsafe.Pointer(&list[0]))}
}

// CreateBufferWithProperties is clCreateBufferWithProperties (OpenCL 3.0); ErrUnsupported when absent.
func (c *Context) CreateBufferWithProperties(p *Properties, flags, size uint64) (Mem, error) {
	if c.lib.fn.createBufferWithProperties == 0 {
		return 0, fmt.Errorf("clCreateBufferWithProperties: %w", ErrUnsupported)
	}
	h := c.hot
	h.args[0], h.args[1], h.args[2], h.args[3], h.args[4], h.args[5] = c.id, p.addr, uintptr(flags), uintptr(size), 0, h.statusAddr
	m := h.call(c.lib.fn.createBufferWithProperties, 6)
	runtime.KeepAlive(p)
	if err := check(h.status, "clCreateBufferWithProperties"); err != nil {
		return 0, err
	}
	return Mem(m), nil
}

// ReleaseMem releases a buffer.
func (c *Context) ReleaseMem(m Mem) error {
	return check(call(c.lib.fn.releaseMemObject, uintptr(m)), "clReleaseMemObject")
}

// Queue is an in-order command queue on one device of a context. Not safe for concurrent use.
type Queue struct {
	lib    *Library
	id     uintptr
	Device *Device
	hot    *pinnedBlock
}

// CreateQueue makes an in-order queue on d; profiling enables event timestamps.
func (c *Context) CreateQueue(d *Device, profiling bool) (*Queue, error) {
	var props uintptr
	if profiling {
		props = QUEUE_PROFILING_ENABLE
	}
	var status int32
	id, _, _ := purego.SyscallN(c.lib.fn.createCommandQueue, c.id, d.id, props, uintptr(unsafe.Pointer(&status)))
	if err := check(status, "clCreateCommandQueue"); err != nil {
		return nil, err
	}
	return &Queue{lib: c.lib, id: id, Device: d, hot: newPinnedBlock()}, nil
}

// Release releases the queue and unpins its call block. A queue dropped without it keeps the block pinned,
// and the runtime panics when the garbage collector finds the pin ("found leaking pinned pointer"): every
// queue a process does not keep to its end must be released.
func (q *Queue) Release() {
	call(q.lib.fn.releaseCommandQueue, q.id)
	q.hot.release()
}

// Finish is clFinish: it returns when every command of the queue has completed, or the error a runtime
// reports when one of them failed. It allocates nothing.
func (q *Queue) Finish() error {
	h := q.hot
	h.args[0] = q.id
	return check(int32(h.call(q.lib.fn.finish, 1)), "clFinish")
}

// CommandStatus is the execution status of an event of this queue's loop (clGetEventInfo with
// CL_EVENT_COMMAND_EXECUTION_STATUS): 0 complete, positive while pending, the command's negative error code
// when it failed. It allocates nothing.
func (q *Queue) CommandStatus(ev Event) (int32, error) {
	h := q.hot
	h.status = 0
	h.args[0], h.args[1], h.args[2], h.args[3], h.args[4] = uintptr(ev), EVENT_COMMAND_EXECUTION_STATUS, 4, h.statusAddr, 0
	r := h.call(q.lib.fn.getEventInfo, 5)
	return h.status, check(int32(r), "clGetEventInfo")
}

// ReleaseCommand releases an event of this queue's loop; 0 is ignored. It allocates nothing.
func (q *Queue) ReleaseCommand(ev Event) {
	if ev != 0 {
		q.hot.args[0] = uintptr(ev)
		q.hot.call(q.lib.fn.releaseEvent, 1)
	}
}

// Flush is clFlush.
func (q *Queue) Flush() error { return check(call(q.lib.fn.flush, q.id), "clFlush") }

// The allocation loop's enqueues below take no wait list and pass every pointer through the queue's
// pinned block, so they allocate nothing.

// SetFillPattern sets the pattern FillBuffer writes (1 to 8 bytes, a power of two that divides the sizes).
func (q *Queue) SetFillPattern(p []byte) {
	q.hot.patternSize = uintptr(copy(q.hot.pattern[:], p))
}

// FillBuffer enqueues clEnqueueFillBuffer over the first size bytes of m with the pattern of SetFillPattern.
func (q *Queue) FillBuffer(m Mem, size uint64, wantEvent bool) (Event, error) {
	h := q.hot
	h.args = [9]uintptr{q.id, uintptr(m), h.patternAddr, h.patternSize, 0, uintptr(size), 0, 0, h.eventOut(wantEvent)}
	return h.result(h.call(q.lib.fn.enqueueFillBuffer, 9), "clEnqueueFillBuffer", wantEvent)
}

// MigrateBuffer enqueues clEnqueueMigrateMemObjects of one buffer to the queue's device.
func (q *Queue) MigrateBuffer(m Mem, wantEvent bool) (Event, error) {
	h := q.hot
	h.mem = m
	h.args[0], h.args[1], h.args[2], h.args[3], h.args[4], h.args[5], h.args[6] = q.id, 1, h.memAddr, 0, 0, 0, h.eventOut(wantEvent)
	return h.result(h.call(q.lib.fn.enqueueMigrateMemObjects, 7), "clEnqueueMigrateMemObjects", wantEvent)
}

// RunKernelOn sets k's argument 0 to m and argument 1 to v, then enqueues k over global work items.
func (q *Queue) RunKernelOn(k *Kernel, m Mem, v uint32, global uint64, wantEvent bool) (Event, error) {
	h := q.hot
	h.mem, h.u32, h.global = m, v, uintptr(global)
	h.args[0], h.args[1], h.args[2], h.args[3] = k.id, 0, unsafe.Sizeof(h.mem), h.memAddr
	if err := check(int32(h.call(q.lib.fn.setKernelArg, 4)), "clSetKernelArg"); err != nil {
		return 0, err
	}
	h.args[0], h.args[1], h.args[2], h.args[3] = k.id, 1, unsafe.Sizeof(h.u32), h.u32Addr
	if err := check(int32(h.call(q.lib.fn.setKernelArg, 4)), "clSetKernelArg"); err != nil {
		return 0, err
	}
	h.args = [9]uintptr{q.id, k.id, 1, 0, h.globalAddr, 0, 0, 0, h.eventOut(wantEvent)}
	return h.result(h.call(q.lib.fn.enqueueNDRangeKernel, 9), "clEnqueueNDRangeKernel", wantEvent)
}
