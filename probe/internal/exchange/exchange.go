// Package exchange is the halo-exchange check (the second case of PROBLEM.md): a 1-D domain split into one
// slab per device of a shared context; after every step each device's boundary cells reach its neighbours
// through clEnqueueMigrateMemObjects. It verifies the result against an exact host reference and measures
// what migration costs next to the two other ways to move the same bytes.
package exchange

import (
	"fmt"
	"sort"
	"time"

	"github.com/clmemprobe/clmemprobe/kernels"
	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Config is a validated exchange request.
type Config struct {
	Devices     []*cl.Device
	Indices     []int // the devices' numbers in the platform
	Cells       uint64
	Halo        uint64
	Steps       uint64
	Sync        string // wire.SyncEvents or wire.SyncNone
	VerifyEvery uint64 // 0: verify after the last step only
	BenchBytes  uint64 // transfer size for the copy-path comparison
	BenchReps   int
	// AllocHostPtr adds CL_MEM_ALLOC_HOST_PTR to every buffer's CL_MEM_READ_WRITE: placement in host-visible
	// memory changes what migration costs.
	AllocHostPtr bool
	// OnStep, when set, hears each step enqueued (for progress).
	OnStep func(done uint64)
}

// bufferFlags are the cl_mem_flags of every buffer.
func (c *Config) bufferFlags() uint64 {
	if c.AllocHostPtr {
		return cl.MEM_READ_WRITE | cl.MEM_ALLOC_HOST_PTR
	}
	return cl.MEM_READ_WRITE
}

// device holds one device's queue and buffers. Slabs and edges alternate by step parity.
type device struct {
	q      *cl.Queue
	k      *cl.Kernel
	slab   [2]cl.Mem
	edgeL  [2]cl.Mem // first halo cells of the slab after step t, in edgeL[t%2]
	edgeR  [2]cl.Mem // last halo cells
	zeros  cl.Mem    // the outside of the domain, for the first and the last device
	kernEv cl.Event  // the kernel event of the last step enqueued (owned by its stepEvents, then by held)
}

// maxPendingSteps bounds the steps whose events are held between waits: past it the host waits for the
// queues, which keeps ordering intact and costs one wait per so many steps.
const maxPendingSteps = 64

// run is one exchange: its context, devices and host reference, the events of the steps not yet collected,
// and the timings collected so far.
type run struct {
	c       Config
	lib     *cl.Library
	ctx     *cl.Context
	prog    *cl.Program
	devs    []*device
	ref     *reference
	pending []stepEvents
	// held are the kernel events of the last step collected, one per device: the next step's migrations
	// name them in their wait lists, so they are released one collection later (releasing them at once was
	// a use-after-free that NVIDIA's runtime answered with SIGSEGV).
	held                []cl.Event
	kernelNs, migrateNs []float64
	res                 *result.Exchange
}

// Run runs the exchange and the copy-path comparison.
func Run(lib *cl.Library, c Config) (*result.Exchange, error) {
	r := &run{c: c, lib: lib, res: &result.Exchange{Devices: c.Indices, Cells: c.Cells, Halo: c.Halo, Steps: c.Steps, Sync: c.Sync,
		VerifyEvery: c.VerifyEvery}}
	defer r.release()
	if err := r.setUp(); err != nil {
		return nil, err
	}
	if err := r.steps(); err != nil {
		return nil, err
	}
	r.summarise()
	if c.BenchReps > 0 {
		for _, size := range []uint64{c.Halo * 4, c.BenchBytes} {
			paths, err := comparePaths(r.ctx, r.devs[0].q, r.devs[1].q, size, c.BenchReps, c)
			if err != nil {
				return nil, fmt.Errorf("copy-path comparison: %w", err)
			}
			r.res.Paths = append(r.res.Paths, paths...)
		}
	}
	return r.res, nil
}

// setUp makes the context, the program, every device's queue, kernel and buffers, and uploads the initial
// state.
func (r *run) setUp() error {
	var err error
	if r.ctx, err = r.lib.CreateContext(r.c.Devices, 0); err != nil {
		return err
	}
	if r.prog, err = r.ctx.BuildProgram(kernels.Halo, ""); err != nil {
		return err
	}
	for _, d := range r.c.Devices {
		dv, err := newDevice(r.ctx, r.prog, d, r.c)
		if err != nil {
			return err
		}
		r.devs = append(r.devs, dv)
	}
	r.ref = newReference(len(r.devs), r.c.Cells, r.c.Halo)
	return upload(r.devs, r.ref, r.c)
}

// newDevice makes one device's queue (with profiling), kernel and buffers.
func newDevice(ctx *cl.Context, prog *cl.Program, d *cl.Device, c Config) (*device, error) {
	dv := &device{}
	var err error
	if dv.q, err = ctx.CreateQueue(d, true); err != nil {
		return nil, err
	}
	if dv.k, err = prog.Kernel(kernels.HaloKernel); err != nil {
		return nil, err
	}
	slabBytes, haloBytes := c.Cells*4, c.Halo*4
	for _, b := range []struct {
		m    *cl.Mem
		size uint64
	}{{&dv.slab[0], slabBytes}, {&dv.edgeL[0], haloBytes}, {&dv.edgeR[0], haloBytes},
		{&dv.slab[1], slabBytes}, {&dv.edgeL[1], haloBytes}, {&dv.edgeR[1], haloBytes}, {&dv.zeros, haloBytes}} {
		if *b.m, err = ctx.CreateBuffer(c.bufferFlags(), b.size, 0); err != nil {
			return nil, err
		}
	}
	return dv, nil
}

// release releases the events held, the program and the context, as far as they were made.
func (r *run) release() {
	for i, e := range r.held {
		r.devs[i].q.ReleaseEvent(e)
	}
	if r.prog != nil {
		r.prog.Release()
	}
	if r.ctx != nil {
		r.ctx.Release()
	}
}

// steps enqueues the steps back to back: the host waits only to verify (and to bound the events held), so
// the ordering between queues comes from the event wait lists alone (and with --sync none, from nothing).
func (r *run) steps() error {
	start := time.Now()
	for t := uint64(0); t < r.c.Steps; t++ {
		se, err := step(r.devs, r.c, t)
		if err != nil {
			return fmt.Errorf("step %d: %w", t, err)
		}
		r.pending = append(r.pending, se)
		if r.c.OnStep != nil {
			r.c.OnStep(t + 1)
		}
		r.ref.step(uint32(t))
		switch {
		case t+1 == r.c.Steps || (r.c.VerifyEvery > 0 && (t+1)%r.c.VerifyEvery == 0):
			if err := r.collect(); err != nil {
				return err
			}
			if err := r.check(t); err != nil {
				return err
			}
		case len(r.pending) >= maxPendingSteps:
			if err := r.collect(); err != nil {
				return err
			}
		}
	}
	r.res.Seconds = time.Since(start).Seconds()
	return nil
}

// collect waits for every queue, keeps the timings of the pending steps' events and releases them, but for
// the last step's kernel events, which it holds (see run.held).
func (r *run) collect() error {
	for _, d := range r.devs {
		if err := d.q.Finish(); err != nil {
			return err
		}
	}
	for i, e := range r.held {
		r.devs[i].q.ReleaseEvent(e)
	}
	r.held = nil
	for j, se := range r.pending {
		for i := range se.kernel {
			q := r.devs[i].q
			if s, e, err := r.lib.Profile(se.kernel[i]); err == nil && e > s {
				r.kernelNs = append(r.kernelNs, float64(e-s))
			}
			// A runtime may report a migration as taking no time at all (NVIDIA does): no figure then.
			if s, e, err := r.lib.Profile(se.migrate[i]); err == nil && e > s {
				r.migrateNs = append(r.migrateNs, float64(e-s))
			}
			q.ReleaseEvent(se.migrate[i])
			if j == len(r.pending)-1 {
				r.held = append(r.held, se.kernel[i])
			} else {
				q.ReleaseEvent(se.kernel[i])
			}
		}
	}
	r.pending = r.pending[:0]
	return nil
}

// check verifies the devices' slabs after step t against the reference and records it.
func (r *run) check(t uint64) error {
	wrong, maxErr, err := verify(r.devs, r.ref, r.c, t)
	if err != nil {
		return err
	}
	r.res.Checks = append(r.res.Checks, result.ExchangeCheck{Step: t + 1, WrongCells: wrong, MaxError: maxErr})
	r.res.WrongCells += wrong
	r.res.MaxError = max(r.res.MaxError, maxErr)
	return nil
}

// summarise sets the figures of the whole exchange from the checks and the timings collected.
func (r *run) summarise() {
	res, n := r.res, len(r.devs)
	res.Verified = true
	res.Correct = res.WrongCells == 0
	// Each device receives one halo from each neighbour it has: 2(n-1) halos per step in all.
	res.BytesMigratedPerStep = uint64(2*(n-1)) * r.c.Halo * 4
	res.KernelMicros = median(r.kernelNs) / 1e3
	res.MigrateMicros = median(r.migrateNs) / 1e3
	if res.MigrateMicros > 0 {
		res.MigrateGBps = float64(res.BytesMigratedPerStep) / float64(n) / (res.MigrateMicros * 1e3)
	}
}

// upload writes the initial state as the output of "step -1": slabs and edges of parity 1, which step 0
// reads (step t writes parity t%2 and reads the other).
func upload(devs []*device, ref *reference, c Config) error {
	const last = 1
	for i, d := range devs {
		slab := ref.slab(i)
		if _, err := d.q.Write(d.slab[last], 0, u32bytes(slab), nil, false); err != nil {
			return err
		}
		if _, err := d.q.Write(d.edgeL[last], 0, u32bytes(slab[:c.Halo]), nil, false); err != nil {
			return err
		}
		if _, err := d.q.Write(d.edgeR[last], 0, u32bytes(slab[c.Cells-c.Halo:]), nil, false); err != nil {
			return err
		}
		if _, err := d.q.Write(d.zeros, 0, make([]byte, c.Halo*4), nil, false); err != nil {
			return err
		}
	}
	return nil
}

// stepEvents are one step's events, per device, kept for profiling and released after.
type stepEvents struct{ kernel, migrate []cl.Event }

// step enqueues one time step on every device. The pattern of case B:
//  1. the consumer's queue migrates every halo it needs in ONE clEnqueueMigrateMemObjects call (an array of
//     cl_mem), whose wait list holds the producers' kernel events of the previous step: commands in
//     different queues run in no order relative to each other unless an event says so;
//  2. the consumer's kernel runs after that migration (its queue is in order). It overwrites the device's
//     own edges of this parity, which the neighbours read in the previous step: the neighbours' kernels of
//     that step are in the migration's wait list, so they are done.
func step(devs []*device, c Config, t uint64) (stepEvents, error) {
	p, prev := t%2, (t+1)%2 // write parity p; read the neighbours' edges of parity prev
	n := len(devs)
	se := stepEvents{kernel: make([]cl.Event, 0, n), migrate: make([]cl.Event, 0, n)}
	kernels := make([]cl.Event, n)
	for i, d := range devs {
		var halos []cl.Mem
		var wait []cl.Event
		left, right := d.zeros, d.zeros
		if i > 0 {
			left = devs[i-1].edgeR[prev]
			halos = append(halos, left)
			wait = appendEvent(wait, devs[i-1].kernEv)
		}
		if i < n-1 {
			right = devs[i+1].edgeL[prev]
			halos = append(halos, right)
			wait = appendEvent(wait, devs[i+1].kernEv)
		}
		if c.Sync == wire.SyncNone {
			wait = nil
		}
		mev, err := d.q.Migrate(halos, wait, true)
		if err != nil {
			return se, err
		}
		se.migrate = append(se.migrate, mev)
		for a, m := range []cl.Mem{d.slab[prev], left, right, d.slab[p], d.edgeL[p], d.edgeR[p]} {
			if err := d.k.SetMem(a, m); err != nil {
				return se, err
			}
		}
		for a, v := range []uint32{uint32(c.Cells), uint32(c.Halo), uint32(t)} {
			if err := d.k.SetUint32(6+a, v); err != nil {
				return se, err
			}
		}
		kev, err := d.q.RunKernel(d.k, c.Cells, true)
		if err != nil {
			return se, err
		}
		se.kernel = append(se.kernel, kev)
		kernels[i] = kev
	}
	// Only now: every migration above waited on the previous step's kernels.
	for i, d := range devs {
		d.kernEv = kernels[i]
		if err := d.q.Flush(); err != nil {
			return se, err
		}
	}
	return se, nil
}

func appendEvent(evs []cl.Event, e cl.Event) []cl.Event {
	if e != 0 {
		evs = append(evs, e)
	}
	return evs
}

// verify reads every slab after step t and compares it with the host reference.
func verify(devs []*device, ref *reference, c Config, t uint64) (uint64, uint64, error) {
	var wrong, maxErr uint64
	buf := make([]byte, c.Cells*4)
	for i, d := range devs {
		if err := d.q.Finish(); err != nil {
			return 0, 0, err
		}
		if _, err := d.q.Read(d.slab[t%2], 0, buf, nil, false); err != nil {
			return 0, 0, err
		}
		want := ref.slab(i)
		for j := range want {
			got := uint32(buf[4*j]) | uint32(buf[4*j+1])<<8 | uint32(buf[4*j+2])<<16 | uint32(buf[4*j+3])<<24
			if got != want[j] {
				wrong++
				diff := uint64(got) - uint64(want[j])
				if got < want[j] {
					diff = uint64(want[j]) - uint64(got)
				}
				maxErr = max(maxErr, diff)
			}
		}
	}
	return wrong, maxErr, nil
}

// comparePaths moves size bytes from device 0 to device 1 in three ways, reps times each, and reports the
// median wall time of each (enqueue to completion): migration of the buffer to the consumer's queue, a copy
// through the host (blocking read on the producer, blocking write on the consumer), and
// clEnqueueCopyBuffer on the consumer's queue inside the context.
func comparePaths(ctx *cl.Context, prod, cons *cl.Queue, size uint64, reps int, c Config) ([]result.ExchangePath, error) {
	src, err := ctx.CreateBuffer(c.bufferFlags(), size, 0)
	if err != nil {
		return nil, err
	}
	defer ctx.ReleaseMem(src)
	dst, err := ctx.CreateBuffer(c.bufferFlags(), size, 0)
	if err != nil {
		return nil, err
	}
	defer ctx.ReleaseMem(dst)
	host := make([]byte, size)
	pattern := []byte{1, 2, 3, 4}
	if size%4 != 0 {
		pattern = pattern[:1]
	}
	prod.SetFillPattern(pattern)
	// Each repetition first writes the source on the producer, so every path really moves data.
	produce := func() error {
		if _, err := prod.Fill(src, size, false); err != nil {
			return err
		}
		return prod.Finish()
	}
	paths := []struct {
		name string
		move func() error
	}{
		{"clEnqueueMigrateMemObjects", func() error {
			if _, err := cons.Migrate([]cl.Mem{src}, nil, false); err != nil {
				return err
			}
			return cons.Finish()
		}},
		{"read to host, write to device", func() error {
			if _, err := prod.Read(src, 0, host, nil, false); err != nil {
				return err
			}
			_, err := cons.Write(dst, 0, host, nil, false)
			return err
		}},
		{"clEnqueueCopyBuffer", func() error {
			if _, err := cons.Copy(src, dst, 0, 0, size, nil, false); err != nil {
				return err
			}
			return cons.Finish()
		}},
	}
	var out []result.ExchangePath
	for _, p := range paths {
		var times []float64
		for r := 0; r < reps+1; r++ {
			if err := produce(); err != nil {
				return nil, err
			}
			t0 := time.Now()
			if err := p.move(); err != nil {
				return nil, fmt.Errorf("%s: %w", p.name, err)
			}
			if r > 0 { // the first is a warm-up
				times = append(times, float64(time.Since(t0).Nanoseconds()))
			}
		}
		m := median(times)
		out = append(out, result.ExchangePath{Path: p.name, Bytes: size, MedianMicros: m / 1e3, GBps: float64(size) / m})
	}
	return out, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func u32bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
	}
	return b
}
