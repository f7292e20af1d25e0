package worker

import (
	"fmt"

	"github.com/clmemprobe/clmemprobe/kernels"
	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// way is how a fault shows itself.
type way int

const (
	// atCall: the call itself (the create, or the enqueue of the migration or the touch) returns the error.
	atCall way = iota
	// atWaitNamed: the enqueue succeeds; the wait fails, and the command's event says it failed.
	atWaitNamed
	// atWaitUnnamed: the enqueue succeeds; the wait fails, and no event says which command did.
	atWaitUnnamed
)

func (w way) String() string {
	return [...]string{"at the call", "at the wait, named", "at the wait, unnamed"}[w]
}

// fault is where the fake runtime fails: buffer index's call of stage (create, migrate or touch), in way,
// with code. The zero fault never fires (set is false).
type fault struct {
	set   bool
	index uint64
	stage result.Stage
	way   way
	code  cl.Status
}

// fakeCommand is an event of the fake runtime: the buffer its command was for and the status it ended in.
type fakeCommand struct {
	index  uint64
	status int32
}

// fakeRuntime is a fake OpenCL runtime for the loop: contexts (fakeContext) and queues (fakeQueue) that keep
// which buffer each handle and event is for, and fail as its faults say. Buffers are numbered as the loop
// makes them, round robin over every target: a buffer released (a replay) is made again with its number.
type fakeRuntime struct {
	faults   []fault
	next     uint64            // the number of the next buffer made
	mems     map[cl.Mem]uint64 // the live buffers' numbers
	lastMem  cl.Mem
	events   map[cl.Event]fakeCommand // the live events
	lastEv   cl.Event
	released int // buffers released
	// kernelMem and kernelIndex are the touch kernel's arguments, as the loop set them.
	kernelMem   cl.Mem
	kernelIndex uint32
	onCreate    func(index uint64) // called after each buffer made
	// flags and hosts are what each live buffer was created with.
	flags    map[cl.Mem]uint64
	hosts    map[cl.Mem]cl.HostPtr
	problems []string // what the loop did that a runtime would not accept
	// size is the buffers' size, as the loop made them; wrongFill makes fills report success and write
	// nothing, as a runtime that miscounts a fill's elements does.
	size      uint64
	wrongFill bool
}

func newFakeRuntime(faults ...fault) *fakeRuntime {
	return &fakeRuntime{faults: faults, mems: map[cl.Mem]uint64{}, events: map[cl.Event]fakeCommand{}, flags: map[cl.Mem]uint64{},
		hosts: map[cl.Mem]cl.HostPtr{}}
}

func (rt *fakeRuntime) problem(format string, args ...any) {
	rt.problems = append(rt.problems, fmt.Sprintf(format, args...))
}

// fires is the fault that fires for buffer index's call of stage, if any.
func (rt *fakeRuntime) fires(index uint64, stage result.Stage) (fault, bool) {
	for _, f := range rt.faults {
		if f.set && f.index == index && f.stage == stage {
			return f, true
		}
	}
	return fault{}, false
}

// fakeContext is a context of the fake runtime.
type fakeContext struct{ rt *fakeRuntime }

func (c fakeContext) create(call string, flags uint64, host cl.HostPtr) (cl.Mem, error) {
	rt := c.rt
	i := rt.next
	// As OpenCL: a host pointer with neither use- nor copy-host-ptr, or one of them without it, is invalid.
	if wantsHost := flags&uint64(result.MemUseHostPtr|result.MemCopyHostPtr) != 0; wantsHost != (host != 0) {
		return 0, &cl.CallError{Call: call, Status: cl.InvalidHostPtr}
	}
	if f, ok := rt.fires(i, result.StageCreate); ok {
		return 0, &cl.CallError{Call: call, Status: f.code}
	}
	rt.next++
	rt.lastMem++
	rt.mems[rt.lastMem] = i
	rt.flags[rt.lastMem], rt.hosts[rt.lastMem] = flags, host
	if rt.onCreate != nil {
		rt.onCreate(i)
	}
	return rt.lastMem, nil
}

func (c fakeContext) CreateBuffer(flags, size uint64, host cl.HostPtr) (cl.Mem, error) {
	c.rt.size = size
	return c.create("clCreateBuffer", flags, host)
}

func (c fakeContext) CreateBufferWithProperties(p *cl.Properties, flags, size uint64, host cl.HostPtr) (cl.Mem, error) {
	if p == nil {
		c.rt.problem("clCreateBufferWithProperties without properties")
	}
	c.rt.size = size
	return c.create("clCreateBufferWithProperties", flags, host)
}

func (c fakeContext) ReleaseMem(m cl.Mem) error {
	rt := c.rt
	i, ok := rt.mems[m]
	if !ok {
		rt.problem("clReleaseMemObject of buffer %d, which is not live", m)
		return cl.Status(-38)
	}
	delete(rt.mems, m)
	delete(rt.flags, m)
	delete(rt.hosts, m)
	rt.next = min(rt.next, i)
	rt.released++
	return nil
}

// fakeQueue is a queue of the fake runtime; a command that failed on it fails its next wait.
type fakeQueue struct {
	rt     *fakeRuntime
	failed cl.Status // the code of a command that failed since the last wait, 0 for none
}

// enqueue is an enqueue of call for buffer m at stage.
func (q *fakeQueue) enqueue(call string, m cl.Mem, stage result.Stage, wantEvent bool) (cl.Event, error) {
	rt := q.rt
	i, ok := rt.mems[m]
	if !ok {
		rt.problem("%s of buffer %d, which is not live", call, m)
	}
	var status int32
	if f, ok := rt.fires(i, stage); ok {
		switch f.way {
		case atCall:
			return 0, &cl.CallError{Call: call, Status: f.code}
		case atWaitNamed:
			status = int32(f.code)
		}
		q.failed = f.code
	}
	if !wantEvent {
		return 0, nil
	}
	rt.lastEv++
	rt.events[rt.lastEv] = fakeCommand{index: i, status: status}
	return rt.lastEv, nil
}

func (q *fakeQueue) Fill(m cl.Mem, size uint64, wantEvent bool) (cl.Event, error) {
	return q.enqueue("clEnqueueFillBuffer", m, result.StageTouch, wantEvent)
}

func (q *fakeQueue) Migrate(mems []cl.Mem, wait []cl.Event, wantEvent bool) (cl.Event, error) {
	if len(mems) != 1 || len(wait) != 0 {
		q.rt.problem("a migration of %d buffers after %d events; the loop migrates one at a time", len(mems), len(wait))
	}
	return q.enqueue("clEnqueueMigrateMemObjects", mems[0], result.StageMigrate, wantEvent)
}

func (q *fakeQueue) RunKernel(k *cl.Kernel, global uint64, wantEvent bool) (cl.Event, error) {
	rt := q.rt
	if i := rt.mems[rt.kernelMem]; uint64(rt.kernelIndex) != i {
		rt.problem("the kernel runs on buffer %d with index %d", i, rt.kernelIndex)
	}
	return q.enqueue("clEnqueueNDRangeKernel", rt.kernelMem, result.StageTouch, wantEvent)
}

func (q *fakeQueue) Finish() error {
	if code := q.failed; code != 0 {
		q.failed = 0
		return &cl.CallError{Call: "clFinish", Status: code}
	}
	return nil
}

func (q *fakeQueue) CommandStatus(ev cl.Event) (int32, error) {
	c, ok := q.rt.events[ev]
	if !ok {
		q.rt.problem("clGetEventInfo of event %d, which is not live", ev)
		return 0, cl.Status(-58)
	}
	return c.status, nil
}

func (q *fakeQueue) ReleaseEvent(ev cl.Event) {
	if ev == 0 {
		return
	}
	if _, ok := q.rt.events[ev]; !ok {
		q.rt.problem("clReleaseEvent of event %d, which is not live", ev)
	}
	delete(q.rt.events, ev)
}

// fakeKernel is the touch kernel of the fake runtime: it keeps its arguments for the queue's RunKernel.
type fakeKernel struct{ rt *fakeRuntime }

func (k fakeKernel) SetMem(i int, m cl.Mem) error {
	if i != 0 {
		k.rt.problem("the buffer set as kernel argument %d", i)
	}
	k.rt.kernelMem = m
	return nil
}

func (k fakeKernel) SetUint32(i int, v uint32) error {
	if i != 1 {
		k.rt.problem("the index set as kernel argument %d", i)
	}
	k.rt.kernelIndex = v
	return nil
}

var (
	_ buffers    = fakeContext{}
	_ commands   = (*fakeQueue)(nil)
	_ kernelArgs = fakeKernel{}
)

// Read answers what a fill wrote: the loop's fill pattern, unless the runtime is set to report fills it
// did not do (wrongFill), which read back zeros.
func (q *fakeQueue) Read(m cl.Mem, offset uint64, data []byte, wait []cl.Event, wantEvent bool) (cl.Event, error) {
	if _, ok := q.rt.mems[m]; !ok {
		q.rt.problem("clEnqueueReadBuffer of buffer %d, which is not live", m)
	}
	clear(data)
	if !q.rt.wrongFill {
		p := kernels.FillPattern(q.rt.size)
		for i := range data {
			data[i] = p[(offset+uint64(i))%uint64(len(p))]
		}
	}
	return 0, nil
}
