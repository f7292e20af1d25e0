package cl

import (
	"fmt"
)

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
	id := clCreateCommandQueue(c.lib.fn.createCommandQueue, c.id, d.id, props, &status)
	if err := check(status, "clCreateCommandQueue"); err != nil {
		return nil, err
	}
	return &Queue{lib: c.lib, id: id, Device: d, hot: newPinnedBlock()}, nil
}

// Release releases the queue and unpins its call block. A queue dropped without it keeps both to the
// process's end.
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

// Flush is clFlush.
func (q *Queue) Flush() error { return check(call(q.lib.fn.flush, q.id), "clFlush") }

// The queue's own calls below (the allocation loop's, and the exchange's migrations, kernels and events)
// pass every pointer through the queue's pinned block, so they allocate nothing.

// CommandStatus is the execution status of an event of this queue (clGetEventInfo with
// CL_EVENT_COMMAND_EXECUTION_STATUS): 0 complete, positive while pending, the command's negative error code
// when it failed.
func (q *Queue) CommandStatus(ev Event) (int32, error) {
	h := q.hot
	h.status = 0
	h.args[0], h.args[1], h.args[2], h.args[3], h.args[4] = uintptr(ev), EVENT_COMMAND_EXECUTION_STATUS, 4, h.statusAddr, 0
	r := h.call(q.lib.fn.getEventInfo, 5)
	return h.status, check(int32(r), "clGetEventInfo")
}

// ReleaseEvent releases an event of this queue; 0 is ignored.
func (q *Queue) ReleaseEvent(ev Event) {
	if ev != 0 {
		q.hot.args[0] = uintptr(ev)
		q.hot.call(q.lib.fn.releaseEvent, 1)
	}
}

// SetFillPattern sets the pattern Fill writes (1 to 128 bytes, a power of two that divides the sizes).
func (q *Queue) SetFillPattern(p []byte) {
	q.hot.patternSize = uintptr(copy(q.hot.pattern[:], p))
}

// Fill enqueues clEnqueueFillBuffer over the first size bytes of m with the pattern of SetFillPattern.
func (q *Queue) Fill(m Mem, size uint64, wantEvent bool) (Event, error) {
	h := q.hot
	h.args = [9]uintptr{q.id, uintptr(m), h.patternAddr, h.patternSize, 0, uintptr(size), 0, 0, h.eventOut(wantEvent)}
	return h.result(h.call(q.lib.fn.enqueueFillBuffer, 9), "clEnqueueFillBuffer", wantEvent)
}

// Migrate enqueues clEnqueueMigrateMemObjects of every buffer of mems to the queue's device once the events
// of wait have completed: one call, one event. Each list holds at most listRoom entries (the block's room).
func (q *Queue) Migrate(mems []Mem, wait []Event, wantEvent bool) (Event, error) {
	h := q.hot
	if len(mems) > listRoom || len(wait) > listRoom {
		return 0, fmt.Errorf("clEnqueueMigrateMemObjects: %d buffers and %d events to wait for; the binding passes at most %d of each",
			len(mems), len(wait), listRoom)
	}
	copy(h.mems[:], mems)
	waitAddr := uintptr(0) // an empty wait list must be NULL
	if copy(h.wait[:], wait) > 0 {
		waitAddr = h.waitAddr
	}
	h.args[0], h.args[1], h.args[2], h.args[3], h.args[4], h.args[5], h.args[6] =
		q.id, uintptr(len(mems)), h.memsAddr, 0, uintptr(len(wait)), waitAddr, h.eventOut(wantEvent)
	return h.result(h.call(q.lib.fn.enqueueMigrateMemObjects, 7), "clEnqueueMigrateMemObjects", wantEvent)
}

// RunKernel enqueues k, with the arguments set on it before, over a 1-D range of global work items (local
// size chosen by the runtime).
func (q *Queue) RunKernel(k *Kernel, global uint64, wantEvent bool) (Event, error) {
	h := q.hot
	h.global = uintptr(global)
	h.args = [9]uintptr{q.id, k.id, 1, 0, h.globalAddr, 0, 0, 0, h.eventOut(wantEvent)}
	return h.result(h.call(q.lib.fn.enqueueNDRangeKernel, 9), "clEnqueueNDRangeKernel", wantEvent)
}

// The transfers below take Go memory and wait lists of any length; they are for the halo exchange and the
// tests, not the allocation loop, and each passes its pointers through ptr.go.

// eventOut is the event out-parameter: ev, or nil when no event is wanted.
func eventOut(ev *Event, want bool) *Event {
	if want {
		return ev
	}
	return nil
}

// Write is a blocking clEnqueueWriteBuffer from data at offset: the runtime may read Go memory only while
// the call lasts, so writes from Go memory are always blocking.
func (q *Queue) Write(m Mem, offset uint64, data []byte, wait []Event, wantEvent bool) (Event, error) {
	var ev Event
	r := clEnqueueReadOrWriteBuffer(q.lib.fn.enqueueWriteBuffer, q.id, m, offset, data, wait, eventOut(&ev, wantEvent))
	return ev, check(r, "clEnqueueWriteBuffer")
}

// Read is a blocking clEnqueueReadBuffer into data from offset: Go memory must not be written by the
// runtime after the call returns, so reads are always blocking.
func (q *Queue) Read(m Mem, offset uint64, data []byte, wait []Event, wantEvent bool) (Event, error) {
	var ev Event
	r := clEnqueueReadOrWriteBuffer(q.lib.fn.enqueueReadBuffer, q.id, m, offset, data, wait, eventOut(&ev, wantEvent))
	return ev, check(r, "clEnqueueReadBuffer")
}

// Copy is clEnqueueCopyBuffer of size bytes.
func (q *Queue) Copy(src, dst Mem, srcOffset, dstOffset, size uint64, wait []Event, wantEvent bool) (Event, error) {
	var ev Event
	r := clEnqueueCopyBuffer(q.lib.fn.enqueueCopyBuffer, q.id, src, dst, srcOffset, dstOffset, size, wait, eventOut(&ev, wantEvent))
	return ev, check(r, "clEnqueueCopyBuffer")
}

// Wait blocks until every event has completed; an event that ended in error makes it fail.
func (l *Library) Wait(evs ...Event) error {
	if len(evs) == 0 {
		return nil
	}
	return check(clWaitForEvents(l.fn.waitForEvents, evs), "clWaitForEvents")
}

// Profile returns the device timestamps (ns) when the command started and ended; the queue must have been
// created with profiling.
func (l *Library) Profile(ev Event) (start, end uint64, err error) {
	if err = check(clGetEventProfilingInfo(l.fn.getEventProfilingInfo, ev, PROFILING_COMMAND_START, &start), "clGetEventProfilingInfo"); err != nil {
		return
	}
	err = check(clGetEventProfilingInfo(l.fn.getEventProfilingInfo, ev, PROFILING_COMMAND_END, &end), "clGetEventProfilingInfo")
	return
}

// FillWith enqueues clEnqueueFillBuffer of size bytes of m with a pattern of its own (1 to 128 bytes, a
// power of two that divides size), off the hot path: the runtime copies the pattern before the call
// returns, as the specification says it may reuse the memory then.
func (q *Queue) FillWith(m Mem, pattern []byte, size uint64) error {
	return check(clEnqueueFillBuffer(q.lib.fn.enqueueFillBuffer, q.id, m, pattern, size), "clEnqueueFillBuffer")
}
