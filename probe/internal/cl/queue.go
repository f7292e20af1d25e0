package cl

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The general enqueues below take wait lists and return events; they are for the halo exchange and the
// tests, not the allocation loop, and each passes its pointers in the SyscallN expression itself.

// waitList returns a wait list's length and first element, as the trailing arguments of an enqueue want
// them (0 and nil for an empty list).
func waitList(wait []Event) (uintptr, unsafe.Pointer) {
	if len(wait) == 0 {
		return 0, nil
	}
	return uintptr(len(wait)), unsafe.Pointer(&wait[0])
}

// eventPtr is the event out-parameter: ev, or nil when no event is wanted.
func eventPtr(ev *Event, want bool) unsafe.Pointer {
	if want {
		return unsafe.Pointer(ev)
	}
	return nil
}

// Fill is clEnqueueFillBuffer of size bytes at offset with pattern (1 to 128 bytes, a power of two).
func (q *Queue) Fill(m Mem, pattern []byte, offset, size uint64, wait []Event, wantEvent bool) (Event, error) {
	var ev Event
	n, list := waitList(wait)
	r, _, _ := purego.SyscallN(q.lib.fn.enqueueFillBuffer, q.id, uintptr(m), uintptr(unsafe.Pointer(&pattern[0])),
		uintptr(len(pattern)), uintptr(offset), uintptr(size), n, uintptr(list), uintptr(eventPtr(&ev, wantEvent)))
	return ev, check(int32(r), "clEnqueueFillBuffer")
}

// Migrate is clEnqueueMigrateMemObjects for every buffer of mems to the queue's device (flags 0), or to the
// host with MIGRATE_MEM_OBJECT_HOST. All buffers share one wait list: one call, one event.
func (q *Queue) Migrate(mems []Mem, flags uint64, wait []Event, wantEvent bool) (Event, error) {
	var ev Event
	n, list := waitList(wait)
	r, _, _ := purego.SyscallN(q.lib.fn.enqueueMigrateMemObjects, q.id, uintptr(len(mems)), uintptr(unsafe.Pointer(&mems[0])),
		uintptr(flags), n, uintptr(list), uintptr(eventPtr(&ev, wantEvent)))
	return ev, check(int32(r), "clEnqueueMigrateMemObjects")
}

// Write is a blocking clEnqueueWriteBuffer from data at offset: the runtime may read Go memory only while
// the call lasts, so writes from Go memory are always blocking.
func (q *Queue) Write(m Mem, offset uint64, data []byte, wait []Event, wantEvent bool) (Event, error) {
	var ev Event
	n, list := waitList(wait)
	r, _, _ := purego.SyscallN(q.lib.fn.enqueueWriteBuffer, q.id, uintptr(m), 1, uintptr(offset), uintptr(len(data)),
		uintptr(unsafe.Pointer(&data[0])), n, uintptr(list), uintptr(eventPtr(&ev, wantEvent)))
	return ev, check(int32(r), "clEnqueueWriteBuffer")
}

// Read is a blocking clEnqueueReadBuffer into data from offset: Go memory must not be written by the
// runtime after the call returns, so reads are always blocking.
func (q *Queue) Read(m Mem, offset uint64, data []byte, wait []Event, wantEvent bool) (Event, error) {
	var ev Event
	n, list := waitList(wait)
	r, _, _ := purego.SyscallN(q.lib.fn.enqueueReadBuffer, q.id, uintptr(m), 1, uintptr(offset), uintptr(len(data)),
		uintptr(unsafe.Pointer(&data[0])), n, uintptr(list), uintptr(eventPtr(&ev, wantEvent)))
	return ev, check(int32(r), "clEnqueueReadBuffer")
}

// Copy is clEnqueueCopyBuffer of size bytes.
func (q *Queue) Copy(src, dst Mem, srcOffset, dstOffset, size uint64, wait []Event, wantEvent bool) (Event, error) {
	var ev Event
	n, list := waitList(wait)
	r, _, _ := purego.SyscallN(q.lib.fn.enqueueCopyBuffer, q.id, uintptr(src), uintptr(dst), uintptr(srcOffset),
		uintptr(dstOffset), uintptr(size), n, uintptr(list), uintptr(eventPtr(&ev, wantEvent)))
	return ev, check(int32(r), "clEnqueueCopyBuffer")
}

// RunKernel enqueues k over a 1-D range of global work items (local size chosen by the runtime).
func (q *Queue) RunKernel(k *Kernel, global uint64, wait []Event, wantEvent bool) (Event, error) {
	var ev Event
	gws := uintptr(global)
	n, list := waitList(wait)
	r, _, _ := purego.SyscallN(q.lib.fn.enqueueNDRangeKernel, q.id, k.id, 1, 0, uintptr(unsafe.Pointer(&gws)), 0, n,
		uintptr(list), uintptr(eventPtr(&ev, wantEvent)))
	return ev, check(int32(r), "clEnqueueNDRangeKernel")
}

// Wait blocks until every event has completed; an event that ended in error makes it fail.
func (l *Library) Wait(evs ...Event) error {
	if len(evs) == 0 {
		return nil
	}
	r, _, _ := purego.SyscallN(l.fn.waitForEvents, uintptr(len(evs)), uintptr(unsafe.Pointer(&evs[0])))
	return check(int32(r), "clWaitForEvents")
}

// EventStatus returns the execution status of an event: 0 complete, a positive value while pending, the
// negative error code of the command when it failed.
func (l *Library) EventStatus(ev Event) (int32, error) {
	var v int32
	r, _, _ := purego.SyscallN(l.fn.getEventInfo, uintptr(ev), EVENT_COMMAND_EXECUTION_STATUS, unsafe.Sizeof(v),
		uintptr(unsafe.Pointer(&v)), 0)
	return v, check(int32(r), "clGetEventInfo")
}

// Profile returns the device timestamps (ns) when the command started and ended; the queue must have been
// created with profiling.
func (l *Library) Profile(ev Event) (start, end uint64, err error) {
	r, _, _ := purego.SyscallN(l.fn.getEventProfilingInfo, uintptr(ev), PROFILING_COMMAND_START, 8, uintptr(unsafe.Pointer(&start)), 0)
	if err = check(int32(r), "clGetEventProfilingInfo"); err != nil {
		return
	}
	r, _, _ = purego.SyscallN(l.fn.getEventProfilingInfo, uintptr(ev), PROFILING_COMMAND_END, 8, uintptr(unsafe.Pointer(&end)), 0)
	err = check(int32(r), "clGetEventProfilingInfo")
	return
}

// ReleaseEvent releases an event; 0 is ignored.
func (l *Library) ReleaseEvent(ev Event) {
	if ev != 0 {
		call(l.fn.releaseEvent, uintptr(ev))
	}
}

// Program is a built OpenCL program.
type Program struct {
	ctx *Context
	id  uintptr
}

// CreateProgram is clCreateProgramWithSource: the program is not built yet.
func (c *Context) CreateProgram(source string) (*Program, error) {
	src := append([]byte(source), 0)
	// The call takes an array of string pointers: Go memory holding a Go pointer, so the string is pinned.
	var pin runtime.Pinner
	pin.Pin(&src[0])
	defer pin.Unpin()
	srcs := []unsafe.Pointer{unsafe.Pointer(&src[0])}
	length := uintptr(len(source))
	var status int32
	id, _, _ := purego.SyscallN(c.lib.fn.createProgramWithSource, c.id, 1, uintptr(unsafe.Pointer(&srcs[0])),
		uintptr(unsafe.Pointer(&length)), uintptr(unsafe.Pointer(&status)))
	if err := check(status, "clCreateProgramWithSource"); err != nil {
		return nil, err
	}
	return &Program{ctx: c, id: id}, nil
}

// Build compiles the program for every device of its context; a failed build returns the build log.
func (p *Program) Build(options string) error {
	c := p.ctx
	opts := append([]byte(options), 0)
	r, _, _ := purego.SyscallN(c.lib.fn.buildProgram, p.id, 0, 0, uintptr(unsafe.Pointer(&opts[0])), 0, 0)
	if err := check(int32(r), "clBuildProgram"); err != nil {
		var logs []string
		for _, d := range c.Devices {
			if b, e := queryInfo("clGetProgramBuildInfo", info2Of(c.lib.fn.getProgramBuildInfo, PROGRAM_BUILD_LOG, p.id, d.id)); e == nil {
				if s := cString(b); s != "" {
					logs = append(logs, s)
				}
			}
		}
		return fmt.Errorf("%w: %s", err, strings.Join(logs, "; "))
	}
	return nil
}

// BuildProgram creates and builds a program from source for every device of the context.
func (c *Context) BuildProgram(source, options string) (*Program, error) {
	p, err := c.CreateProgram(source)
	if err != nil {
		return nil, err
	}
	if err := p.Build(options); err != nil {
		p.Release()
		return nil, err
	}
	return p, nil
}

// Release releases the program.
func (p *Program) Release() { call(p.ctx.lib.fn.releaseProgram, p.id) }

// Kernel is one kernel of a program.
type Kernel struct {
	lib *Library
	id  uintptr
}

// Kernel creates the kernel named name.
func (p *Program) Kernel(name string) (*Kernel, error) {
	n := append([]byte(name), 0)
	var status int32
	id, _, _ := purego.SyscallN(p.ctx.lib.fn.createKernel, p.id, uintptr(unsafe.Pointer(&n[0])), uintptr(unsafe.Pointer(&status)))
	if err := check(status, "clCreateKernel("+name+")"); err != nil {
		return nil, err
	}
	return &Kernel{lib: p.ctx.lib, id: id}, nil
}

// SetMem sets argument i to a buffer.
func (k *Kernel) SetMem(i int, m Mem) error {
	r, _, _ := purego.SyscallN(k.lib.fn.setKernelArg, k.id, uintptr(i), unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m)))
	return check(int32(r), "clSetKernelArg")
}

// SetUint32 sets argument i to a 32-bit value (uint or int in OpenCL C).
func (k *Kernel) SetUint32(i int, v uint32) error {
	r, _, _ := purego.SyscallN(k.lib.fn.setKernelArg, k.id, uintptr(i), unsafe.Sizeof(v), uintptr(unsafe.Pointer(&v)))
	return check(int32(r), "clSetKernelArg")
}
