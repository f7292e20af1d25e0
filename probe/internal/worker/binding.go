package worker

import "github.com/clmemprobe/clmemprobe/probe/internal/cl"

// The allocation loop works against these interfaces, which the binding satisfies, so that its batching,
// settling, replay and attribution can be tested against a fake runtime that fails where a test says. Each
// method takes plain values (a list the loop passes lives in the loop's own state), so that calling through
// an interface allocates nothing.

// buffers is what the loop asks of a context.
type buffers interface {
	CreateBuffer(flags, size uint64, host cl.HostPtr) (cl.Mem, error)
	CreateBufferWithProperties(p *cl.Properties, flags, size uint64, host cl.HostPtr) (cl.Mem, error)
	ReleaseMem(m cl.Mem) error
}

// commands is what the loop asks of a queue.
type commands interface {
	Fill(m cl.Mem, size uint64, wantEvent bool) (cl.Event, error)
	Migrate(mems []cl.Mem, wait []cl.Event, wantEvent bool) (cl.Event, error)
	RunKernel(k *cl.Kernel, global uint64, wantEvent bool) (cl.Event, error)
	Finish() error
	Read(m cl.Mem, offset uint64, data []byte, wait []cl.Event, wantEvent bool) (cl.Event, error)
	CommandStatus(ev cl.Event) (int32, error)
	ReleaseEvent(ev cl.Event)
}

// kernelArgs is what the loop asks of the touch kernel: to take its arguments, the buffer and its index.
type kernelArgs interface {
	SetMem(i int, m cl.Mem) error
	SetUint32(i int, v uint32) error
}

var (
	_ buffers    = (*cl.Context)(nil)
	_ commands   = (*cl.Queue)(nil)
	_ kernelArgs = (*cl.Kernel)(nil)
)

// target is where one device's buffers are made and touched.
type target struct {
	device  int // index within the platform
	buffers buffers
	queue   commands       // nil when the strategy neither touches nor migrates
	kernel  *cl.Kernel     // nil unless touch=kernel
	args    kernelArgs     // the kernel, as the loop sets its arguments (a fake's, in tests)
	props   *cl.Properties // device-list properties, nil otherwise
	pool    *poolBuffers   // the pool strategy's buffers (also buffers), nil otherwise
}

// mapsNext is how much address space the target's next buffer of size maps, where its buffers know (a
// pool's: known); else the host guard's measured cost per buffer stands for it.
func (t *target) mapsNext(size uint64) (maps uint64, known bool) {
	if t.pool == nil {
		return 0, false
	}
	return t.pool.mapsNext(size), true
}
