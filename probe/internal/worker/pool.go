package worker

import (
	"fmt"
	"slices"
	"sort"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// poolBuffers are the pool strategy's buffers on one device: sub-buffers of the job's size carved from a
// pool buffer, each at an origin aligned as the device asks (CL_DEVICE_MEM_BASE_ADDR_ALIGN), and a new
// pool buffer when one is full, as a program that pools its allocations does. The loop sees them as any
// context's buffers.
type poolBuffers struct {
	ctx      *cl.Context
	poolSize uint64 // bytes of one pool buffer
	stride   uint64 // the job's size, rounded up to the alignment
	parent   cl.Mem // the pool being carved; 0 before the first
	next     uint64 // the origin of the next sub-buffer in it
	parents  []cl.Mem
	// carved are the live sub-buffers' places; free the places of released ones, made again first, oldest
	// first: a batch the loop makes again (one wait per buffer) takes the same places, and so the same
	// memory, as the first time.
	carved map[cl.Mem]slot
	free   []slot
}

// slot is a sub-buffer's place: its pool and origin.
type slot struct {
	parent cl.Mem
	origin uint64
}

var _ buffers = (*poolBuffers)(nil)

// poolUnsupported says why the pool strategy cannot run: a runtime without clCreateSubBuffer (OpenCL 1.0),
// or host-pointer flags, which a sub-buffer cannot take; "" where it can.
func poolUnsupported(lib *cl.Library, flags result.MemFlags) string {
	switch {
	case !lib.HasCreateSubBuffer():
		return "the runtime has no clCreateSubBuffer (OpenCL 1.1)"
	case flags&(result.MemUseHostPtr|result.MemCopyHostPtr) != 0:
		return "a pool's sub-buffers take no host pointer of their own: run the pool strategy without use-host-ptr or copy-host-ptr"
	}
	return ""
}

// newPoolBuffers sizes the pools of device d: poolSize, else the device's maximum allocation within bound
// (0: none; see worker.poolBound), as a whole number of aligned sub-buffers of size (at least one).
func newPoolBuffers(ctx *cl.Context, d *cl.Device, size, poolSize, bound uint64) (*poolBuffers, error) {
	align, err := d.BaseAddrAlign()
	if err != nil || align == 0 {
		align = 4096 // the largest alignment runtimes ask for; a smaller ask is a divisor of it
	}
	stride := (size + align - 1) / align * align
	if poolSize == 0 {
		poolSize = d.MaxAlloc
		if bound > 0 && poolSize >= size {
			poolSize = max(size, min(poolSize, bound))
		}
	}
	if poolSize < size {
		return nil, fmt.Errorf("the pool size %s is smaller than one buffer of %s", units.Size(poolSize), units.Size(size))
	}
	n := max(1, (poolSize-size)/stride+1) // sub-buffers that fit: the last needs only size, not a stride
	return &poolBuffers{ctx: ctx, stride: stride, poolSize: (n-1)*stride + size, carved: map[cl.Mem]slot{}}, nil
}

// CreateBuffer makes the next sub-buffer, and a new pool buffer first where the current one is full. The
// pool strategy takes no host-pointer flags (the worker refuses them), so there is no host memory to pass.
func (p *poolBuffers) CreateBuffer(flags, size uint64, _ cl.HostPtr) (cl.Mem, error) {
	if len(p.free) > 0 {
		s := p.free[0]
		m, err := p.ctx.CreateSubBuffer(s.parent, 0, s.origin, size)
		if err != nil {
			return 0, err
		}
		p.free = p.free[1:]
		p.carved[m] = s
		return m, nil
	}
	if p.parent == 0 || p.next+size > p.poolSize {
		parent, err := p.ctx.CreateBuffer(flags, p.poolSize, 0)
		if err != nil {
			return 0, err
		}
		p.parent, p.next = parent, 0
		p.parents = append(p.parents, parent)
	}
	m, err := p.ctx.CreateSubBuffer(p.parent, 0, p.next, size) // 0: the sub-buffer inherits the pool's flags
	if err != nil {
		return 0, err
	}
	p.carved[m] = slot{p.parent, p.next}
	p.next += p.stride
	return m, nil
}

// mapsNext is the address space the next CreateBuffer of size maps: a whole pool buffer where it needs a
// new one, else nothing (a sub-buffer is a place in its pool).
func (p *poolBuffers) mapsNext(size uint64) uint64 {
	if len(p.free) == 0 && (p.parent == 0 || p.next+size > p.poolSize) {
		return p.poolSize
	}
	return 0
}

// CreateBufferWithProperties is not a pool's: the pool strategy lists no devices.
func (p *poolBuffers) CreateBufferWithProperties(*cl.Properties, uint64, uint64, cl.HostPtr) (cl.Mem, error) {
	return 0, fmt.Errorf("clCreateBufferWithProperties: %w", cl.ErrUnsupported)
}

// ReleaseMem releases a sub-buffer, its place free for the next; the pools stay until the worker ends, as a
// program's do.
func (p *poolBuffers) ReleaseMem(m cl.Mem) error {
	if s, ok := p.carved[m]; ok {
		delete(p.carved, m)
		i := sort.Search(len(p.free), func(i int) bool { return p.less(s, p.free[i]) })
		p.free = slices.Insert(p.free, i, s)
	}
	return p.ctx.ReleaseMem(m)
}

// less orders places: by pool in the order the pools were made, then origin.
func (p *poolBuffers) less(a, b slot) bool {
	if a.parent != b.parent {
		return slices.Index(p.parents, a.parent) < slices.Index(p.parents, b.parent)
	}
	return a.origin < b.origin
}
