package cl

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// Context is an OpenCL context over one or more devices of one platform.
type Context struct {
	lib     *Library
	id      uintptr
	Devices []*Device
	// status is reused by every call that returns its status through a pointer: a heap cell, so the
	// hot path does not allocate one per call.
	status *int32
}

// Mem is a cl_mem handle.
type Mem uintptr

// Event is a cl_event handle.
type Event uintptr

// CreateContext makes one context over devs (all of one platform). tag is passed to the notify callback
// and comes back in each Notice, so messages can be told apart by context.
func (l *Library) CreateContext(devs []*Device, tag int) (*Context, error) {
	if len(devs) == 0 {
		return nil, &Error{Code: ErrInvalidValue.Code, Call: "clCreateContext (no device)"}
	}
	ids := make([]uintptr, len(devs))
	for i, d := range devs {
		ids[i] = d.id
	}
	props := []uintptr{CONTEXT_PLATFORM, devs[0].Platform.id, 0}
	status := new(int32)
	id := sys(l.fn.createContext, uintptr(unsafe.Pointer(&props[0])), uintptr(len(ids)), uintptr(unsafe.Pointer(&ids[0])),
		notifyCallback(), uintptr(tag), uintptr(unsafe.Pointer(status)))
	runtime.KeepAlive(ids)
	runtime.KeepAlive(props)
	if err := check(uintptr(uint32(*status)), "clCreateContext"); err != nil {
		return nil, err
	}
	return &Context{lib: l, id: id, Devices: devs, status: status}, nil
}

// Release releases the context.
func (c *Context) Release() { sys(c.lib.fn.releaseContext, c.id) }

// CreateBuffer is clCreateBuffer with no host pointer: the probe's hot path.
func (c *Context) CreateBuffer(flags, size uint64) (Mem, error) {
	m := sys(c.lib.fn.createBuffer, c.id, uintptr(flags), uintptr(size), 0, uintptr(unsafe.Pointer(c.status)))
	if *c.status != 0 {
		return 0, &Error{Code: *c.status, Call: "clCreateBuffer"}
	}
	return Mem(m), nil
}

// DeviceListProperties builds the properties for clCreateBufferWithProperties that place a buffer only on
// the listed devices (CL_MEM_DEVICE_HANDLE_LIST_KHR, cl_khr_external_memory). Build it once per device and
// reuse it: it is not copied by the call.
func DeviceListProperties(devs ...*Device) []uint64 {
	p := []uint64{MEM_DEVICE_HANDLE_LIST_KHR}
	for _, d := range devs {
		p = append(p, uint64(d.id))
	}
	return append(p, MEM_DEVICE_HANDLE_LIST_END_KHR, 0)
}

// CreateBufferWithProperties is clCreateBufferWithProperties (OpenCL 3.0); ErrUnsupported when absent.
func (c *Context) CreateBufferWithProperties(props []uint64, flags, size uint64) (Mem, error) {
	if c.lib.fn.createBufferWithProperties == 0 {
		return 0, fmt.Errorf("clCreateBufferWithProperties: %w", ErrUnsupported)
	}
	m := sys(c.lib.fn.createBufferWithProperties, c.id, uintptr(unsafe.Pointer(&props[0])), uintptr(flags), uintptr(size), 0,
		uintptr(unsafe.Pointer(c.status)))
	runtime.KeepAlive(props)
	if *c.status != 0 {
		return 0, &Error{Code: *c.status, Call: "clCreateBufferWithProperties"}
	}
	return Mem(m), nil
}

// ReleaseMem releases a buffer.
func (c *Context) ReleaseMem(m Mem) error {
	return check(sys(c.lib.fn.releaseMemObject, uintptr(m)), "clReleaseMemObject")
}

// Queue is a command queue on one device of a context.
type Queue struct {
	lib    *Library
	id     uintptr
	Device *Device
	status *int32
	event  *uintptr // out-parameter cell for calls that return an event
}

// CreateQueue makes an in-order queue on d; profiling enables event timestamps.
func (c *Context) CreateQueue(d *Device, profiling bool) (*Queue, error) {
	var props uintptr
	if profiling {
		props = QUEUE_PROFILING_ENABLE
	}
	q := &Queue{lib: c.lib, Device: d, status: new(int32), event: new(uintptr)}
	q.id = sys(c.lib.fn.createCommandQueue, c.id, d.id, props, uintptr(unsafe.Pointer(q.status)))
	if *q.status != 0 {
		return nil, &Error{Code: *q.status, Call: "clCreateCommandQueue"}
	}
	return q, nil
}

// Release releases the queue.
func (q *Queue) Release() { sys(q.lib.fn.releaseCommandQueue, q.id) }

// Finish is clFinish: it returns when every command of the queue has completed, or the error a runtime
// reports when one of them failed.
func (q *Queue) Finish() error { return check(sys(q.lib.fn.finish, q.id), "clFinish") }

// Flush is clFlush.
func (q *Queue) Flush() error { return check(sys(q.lib.fn.flush, q.id), "clFlush") }

// eventArgs turns a wait list and the wish for an event into the three trailing arguments of an enqueue.
func (q *Queue) eventArgs(wait []Event, wantEvent bool) (n, list, out uintptr) {
	if len(wait) > 0 {
		n, list = uintptr(len(wait)), uintptr(unsafe.Pointer(&wait[0]))
	}
	if wantEvent {
		out = uintptr(unsafe.Pointer(q.event))
	}
	return
}

func (q *Queue) result(st uintptr, call string, wantEvent bool) (Event, error) {
	if err := check(st, call); err != nil {
		return 0, err
	}
	if wantEvent {
		return Event(*q.event), nil
	}
	return 0, nil
}

// Fill is clEnqueueFillBuffer of size bytes at offset with pattern (1 to 128 bytes, a power of two).
func (q *Queue) Fill(m Mem, pattern []byte, offset, size uint64, wait []Event, wantEvent bool) (Event, error) {
	n, list, out := q.eventArgs(wait, wantEvent)
	st := sys(q.lib.fn.enqueueFillBuffer, q.id, uintptr(m), uintptr(unsafe.Pointer(&pattern[0])), uintptr(len(pattern)),
		uintptr(offset), uintptr(size), n, list, out)
	runtime.KeepAlive(pattern)
	runtime.KeepAlive(wait)
	return q.result(st, "clEnqueueFillBuffer", wantEvent)
}

// Migrate is clEnqueueMigrateMemObjects for every buffer of mems to the queue's device (flags 0), or to the
// host with MIGRATE_MEM_OBJECT_HOST. All buffers share one wait list: one call, one event.
func (q *Queue) Migrate(mems []Mem, flags uint64, wait []Event, wantEvent bool) (Event, error) {
	n, list, out := q.eventArgs(wait, wantEvent)
	st := sys(q.lib.fn.enqueueMigrateMemObjects, q.id, uintptr(len(mems)), uintptr(unsafe.Pointer(&mems[0])), uintptr(flags),
		n, list, out)
	runtime.KeepAlive(mems)
	runtime.KeepAlive(wait)
	return q.result(st, "clEnqueueMigrateMemObjects", wantEvent)
}

// Write is clEnqueueWriteBuffer from data at offset.
func (q *Queue) Write(m Mem, blocking bool, offset uint64, data []byte, wait []Event, wantEvent bool) (Event, error) {
	n, list, out := q.eventArgs(wait, wantEvent)
	st := sys(q.lib.fn.enqueueWriteBuffer, q.id, uintptr(m), boolArg(blocking), uintptr(offset), uintptr(len(data)),
		uintptr(unsafe.Pointer(&data[0])), n, list, out)
	runtime.KeepAlive(data)
	runtime.KeepAlive(wait)
	return q.result(st, "clEnqueueWriteBuffer", wantEvent)
}

// Read is a blocking clEnqueueReadBuffer into data from offset: Go memory must not be written by the
// runtime after the call returns, so reads are always blocking.
func (q *Queue) Read(m Mem, offset uint64, data []byte, wait []Event, wantEvent bool) (Event, error) {
	n, list, out := q.eventArgs(wait, wantEvent)
	st := sys(q.lib.fn.enqueueReadBuffer, q.id, uintptr(m), 1, uintptr(offset), uintptr(len(data)),
		uintptr(unsafe.Pointer(&data[0])), n, list, out)
	runtime.KeepAlive(data)
	runtime.KeepAlive(wait)
	return q.result(st, "clEnqueueReadBuffer", wantEvent)
}

// Copy is clEnqueueCopyBuffer of size bytes.
func (q *Queue) Copy(src, dst Mem, srcOffset, dstOffset, size uint64, wait []Event, wantEvent bool) (Event, error) {
	n, list, out := q.eventArgs(wait, wantEvent)
	st := sys(q.lib.fn.enqueueCopyBuffer, q.id, uintptr(src), uintptr(dst), uintptr(srcOffset), uintptr(dstOffset),
		uintptr(size), n, list, out)
	runtime.KeepAlive(wait)
	return q.result(st, "clEnqueueCopyBuffer", wantEvent)
}

// RunKernel enqueues k over a 1-D range of global work items (local size chosen by the runtime).
func (q *Queue) RunKernel(k *Kernel, global uint64, wait []Event, wantEvent bool) (Event, error) {
	n, list, out := q.eventArgs(wait, wantEvent)
	gws := []uintptr{uintptr(global)}
	st := sys(q.lib.fn.enqueueNDRangeKernel, q.id, k.id, 1, 0, uintptr(unsafe.Pointer(&gws[0])), 0, n, list, out)
	runtime.KeepAlive(gws)
	runtime.KeepAlive(wait)
	return q.result(st, "clEnqueueNDRangeKernel", wantEvent)
}

func boolArg(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}

// Wait blocks until every event has completed; an event that ended in error makes it fail.
func (l *Library) Wait(evs ...Event) error {
	if len(evs) == 0 {
		return nil
	}
	st := sys(l.fn.waitForEvents, uintptr(len(evs)), uintptr(unsafe.Pointer(&evs[0])))
	runtime.KeepAlive(evs)
	return check(st, "clWaitForEvents")
}

// Status returns the execution status of an event: 0 complete, a positive value while pending, the
// negative error code of the command when it failed.
func (l *Library) Status(ev Event) (int32, error) {
	var v int32
	st := sys(l.fn.getEventInfo, uintptr(ev), EVENT_COMMAND_EXECUTION_STATUS, 4, uintptr(unsafe.Pointer(&v)), 0)
	return v, check(st, "clGetEventInfo")
}

// Profile returns the device timestamps (ns) when the command started and ended; the queue must have been
// created with profiling.
func (l *Library) Profile(ev Event) (start, end uint64, err error) {
	if err = check(sys(l.fn.getEventProfilingInfo, uintptr(ev), PROFILING_COMMAND_START, 8, uintptr(unsafe.Pointer(&start)), 0), "clGetEventProfilingInfo"); err != nil {
		return
	}
	err = check(sys(l.fn.getEventProfilingInfo, uintptr(ev), PROFILING_COMMAND_END, 8, uintptr(unsafe.Pointer(&end)), 0), "clGetEventProfilingInfo")
	return
}

// ReleaseEvent releases an event; 0 is ignored.
func (l *Library) ReleaseEvent(ev Event) {
	if ev != 0 {
		sys(l.fn.releaseEvent, uintptr(ev))
	}
}

// Program is a built OpenCL program.
type Program struct {
	ctx *Context
	id  uintptr
}

// BuildProgram compiles source for every device of the context; a failed build returns the build log.
func (c *Context) BuildProgram(source, options string) (*Program, error) {
	src := append([]byte(source), 0)
	srcPtr := uintptr(unsafe.Pointer(&src[0]))
	length := uintptr(len(source))
	status := new(int32)
	id := sys(c.lib.fn.createProgramWithSource, c.id, 1, uintptr(unsafe.Pointer(&srcPtr)), uintptr(unsafe.Pointer(&length)),
		uintptr(unsafe.Pointer(status)))
	runtime.KeepAlive(src)
	if *status != 0 {
		return nil, &Error{Code: *status, Call: "clCreateProgramWithSource"}
	}
	p := &Program{ctx: c, id: id}
	opts := append([]byte(options), 0)
	st := sys(c.lib.fn.buildProgram, id, 0, 0, uintptr(unsafe.Pointer(&opts[0])), 0, 0)
	runtime.KeepAlive(opts)
	if err := check(st, "clBuildProgram"); err != nil {
		var logs []string
		for _, d := range c.Devices {
			if b, e := c.lib.infoBytes(c.lib.fn.getProgramBuildInfo, PROGRAM_BUILD_LOG, "clGetProgramBuildInfo", id, d.id); e == nil {
				if s := cString(b); s != "" {
					logs = append(logs, s)
				}
			}
		}
		p.Release()
		return nil, fmt.Errorf("%w: %s", err, strings.Join(logs, "; "))
	}
	return p, nil
}

// Release releases the program.
func (p *Program) Release() { sys(p.ctx.lib.fn.releaseProgram, p.id) }

// Kernel is one kernel of a program.
type Kernel struct {
	lib *Library
	id  uintptr
}

// Kernel creates the kernel named name.
func (p *Program) Kernel(name string) (*Kernel, error) {
	n := append([]byte(name), 0)
	status := new(int32)
	id := sys(p.ctx.lib.fn.createKernel, p.id, uintptr(unsafe.Pointer(&n[0])), uintptr(unsafe.Pointer(status)))
	runtime.KeepAlive(n)
	if *status != 0 {
		return nil, &Error{Code: *status, Call: "clCreateKernel(" + name + ")"}
	}
	return &Kernel{lib: p.ctx.lib, id: id}, nil
}

// SetMem sets argument i to a buffer.
func (k *Kernel) SetMem(i int, m Mem) error {
	h := uintptr(m)
	st := sys(k.lib.fn.setKernelArg, k.id, uintptr(i), unsafe.Sizeof(h), uintptr(unsafe.Pointer(&h)))
	return check(st, "clSetKernelArg")
}

// SetUint32 sets argument i to a 32-bit value (uint or int in OpenCL C).
func (k *Kernel) SetUint32(i int, v uint32) error {
	st := sys(k.lib.fn.setKernelArg, k.id, uintptr(i), 4, uintptr(unsafe.Pointer(&v)))
	return check(st, "clSetKernelArg")
}

// Release releases the kernel.
func (k *Kernel) Release() { sys(k.lib.fn.releaseKernel, k.id) }
