package cl

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

// stackDepths is how many depths the stack test tries: every depth from 0 up, so that at some of them the
// goroutine's stack is just full when the binding calls into C and must grow (be copied) during the call.
const stackDepths = 600

// deepen recurses n frames (each with a little stack of its own) and then runs f: the caller of f sits at
// a different stack depth for every n.
//
//go:noinline
func deepen(n int, f func()) {
	var pad [16]uint64
	if n == 0 {
		f()
		return
	}
	pad[n%16] = uint64(n)
	deepen(n-1, f)
	if pad[n%16] != uint64(n) {
		panic("stack corrupted")
	}
}

// atEveryDepth runs f on a fresh goroutine at each depth and collects what went wrong.
func atEveryDepth(t *testing.T, name string, f func() error) {
	t.Helper()
	var bad []string
	for d := 0; d < stackDepths; d++ {
		done := make(chan error, 1)
		go deepen(d, func() { done <- f() })
		if err := <-done; err != nil {
			bad = append(bad, fmt.Sprintf("depth %d: %v", d, err))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s: wrong answers at %d of %d stack depths; first: %s", name, len(bad), stackDepths, bad[0])
	}
}

// TestStackMovesDuringCalls calls every entry point that takes a pointer (out-parameters, property lists,
// argument values) from fresh goroutines at 600 stack depths and compares each answer with the one given
// at the top of the stack. A binding that turns a pointer into a uintptr before the call expression that
// passes it to C lets C write into a stack that Go has already moved: the answers then go wrong at some
// depths (a false "no platform", a 0-byte device, a failed call).
func TestStackMovesDuringCalls(t *testing.T) {
	e := openStackEnv(t)
	for _, c := range []struct {
		name string
		call func(e *stackEnv) error
	}{
		{"clGetPlatformIDs and clGetPlatformInfo", (*stackEnv).platforms},
		{"clGetDeviceIDs", (*stackEnv).devices},
		{"clGetDeviceInfo", (*stackEnv).deviceInfo},
		{"clCreateContext", (*stackEnv).context},
		{"clCreateBuffer, clEnqueueFillBuffer, clEnqueueReadBuffer, events", (*stackEnv).fillAndRead},
		{"clEnqueueMigrateMemObjects with a wait list", (*stackEnv).migrate},
		{"clEnqueueWriteBuffer, clEnqueueCopyBuffer, a pattern of its own, clCreateSubBuffer", (*stackEnv).writeCopyAndSubBuffer},
		{"clCreateProgramWithSource", (*stackEnv).program},
		{"clCreateKernel, clSetKernelArg, clEnqueueNDRangeKernel", (*stackEnv).kernel},
	} {
		t.Run(c.name, func(t *testing.T) {
			atEveryDepth(t, c.name, func() error { return c.call(e) })
		})
	}
}

// stackSource is the stack test's kernel: it writes v into every cell of b.
const stackSource = "__kernel void k(__global uint *b, uint v) { b[get_global_id(0)] = v; }"

// stackEnv is what the stack test's calls share: the library, its first platform's devices, a context over
// them with a profiling queue on the first, a built program, and the answers given at the top of the stack.
type stackEnv struct {
	lib   *Library
	plats []*Platform
	devs  []*Device
	ctx   *Context
	q     *Queue
	prog  *Program

	wantVendor []byte
}

// openStackEnv opens the runtime for the stack test, or skips it (fails it, where OpenCL is required).
func openStackEnv(t *testing.T) *stackEnv {
	t.Helper()
	if os.Getenv("POCL_DEVICES") == "" {
		t.Setenv("POCL_DEVICES", "pthread pthread")
	}
	lib, err := Open(ResolveLibraryPath(""))
	if err != nil {
		requireOpenCL(t, "%v", err)
	}
	plats, devs, err := lib.AllDevices()
	if err != nil || len(devs) == 0 || len(devs[0]) == 0 {
		requireOpenCL(t, "no OpenCL device: %v", err)
	}
	e := &stackEnv{lib: lib, plats: plats, devs: devs[0]}
	e.wantVendor, _ = e.devs[0].InfoBytes(DEVICE_VENDOR)
	if e.ctx, err = lib.CreateContext(e.devs, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.ctx.Release)
	if e.q, err = e.ctx.CreateQueue(e.devs[0], true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.q.Release)
	// A build takes tens of milliseconds on PoCL and has no out-parameter: one, at the top.
	if e.prog, err = e.ctx.BuildProgram(stackSource, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.prog.Release)
	return e
}

func (e *stackEnv) platforms() error {
	ps, err := e.lib.Platforms()
	if err != nil {
		return err
	}
	if len(ps) != len(e.plats) || ps[0].Name != e.plats[0].Name {
		return fmt.Errorf("%d platforms, first %q; want %d, %q", len(ps), ps[0].Name, len(e.plats), e.plats[0].Name)
	}
	return nil
}

func (e *stackEnv) devices() error {
	ds, err := e.plats[0].Devices()
	if err != nil {
		return err
	}
	if len(ds) != len(e.devs) {
		return fmt.Errorf("%d devices, want %d", len(ds), len(e.devs))
	}
	return nil
}

func (e *stackEnv) deviceInfo() error {
	dev := e.devs[0]
	g, err := dev.InfoUint64(DEVICE_GLOBAL_MEM_SIZE)
	if err != nil {
		return err
	}
	v, err := dev.InfoBytes(DEVICE_VENDOR)
	if err != nil {
		return err
	}
	if g != dev.GlobalMem || !bytes.Equal(v, e.wantVendor) {
		return fmt.Errorf("global memory %d, vendor %q; want %d, %q", g, v, dev.GlobalMem, e.wantVendor)
	}
	return nil
}

func (e *stackEnv) context() error {
	c, err := e.lib.CreateContext(e.devs[:1], 1)
	if err != nil {
		return err
	}
	c.Release()
	return nil
}

// readBack reads the first len(want) bytes of m and compares them with want.
func (e *stackEnv) readBack(m Mem, want []byte, wait ...Event) error {
	got := make([]byte, len(want))
	if _, err := e.q.Read(m, 0, got, wait, false); err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("read back %v, want %v", got[:min(8, len(got))], want[:min(8, len(want))])
	}
	return nil
}

func (e *stackEnv) fillAndRead() error {
	m, err := e.ctx.CreateBuffer(MEM_READ_WRITE, 64, 0)
	if err != nil {
		return err
	}
	defer e.ctx.ReleaseMem(m)
	e.q.SetFillPattern([]byte{7, 7, 7, 7})
	ev, err := e.q.Fill(m, 64, true)
	if err != nil {
		return err
	}
	defer e.q.ReleaseEvent(ev)
	if err := e.lib.Wait(ev); err != nil {
		return err
	}
	if st, err := e.q.CommandStatus(ev); err != nil || st != 0 {
		return fmt.Errorf("event status %d, %v; want complete", st, err)
	}
	if _, _, err := e.lib.Profile(ev); err != nil {
		return err
	}
	if err := e.readBack(m, bytes.Repeat([]byte{7}, 64), ev); err != nil {
		return err
	}
	if err := e.q.Finish(); err != nil {
		return err
	}
	return nil
}

// twoBuffers creates two buffers of 64 bytes; release releases those it made, also when it fails.
func (e *stackEnv) twoBuffers() (ms [2]Mem, release func(), err error) {
	release = func() {
		for _, m := range ms {
			if m != 0 {
				_ = e.ctx.ReleaseMem(m)
			}
		}
	}
	for i := range ms {
		if ms[i], err = e.ctx.CreateBuffer(MEM_READ_WRITE, 64, 0); err != nil {
			break
		}
	}
	return ms, release, err
}

func (e *stackEnv) migrate() error {
	ms, release, err := e.twoBuffers()
	defer release()
	if err != nil {
		return err
	}
	e.q.SetFillPattern([]byte{9, 9})
	fev, err := e.q.Fill(ms[0], 64, true)
	if err != nil {
		return err
	}
	defer e.q.ReleaseEvent(fev)
	mev, err := e.q.Migrate(ms[:], []Event{fev}, true)
	if err != nil {
		return err
	}
	defer e.q.ReleaseEvent(mev)
	if err := e.q.Finish(); err != nil {
		return err
	}
	return e.readBack(ms[0], bytes.Repeat([]byte{9}, 64))
}

// writeCopyAndSubBuffer writes a buffer, copies it to a second and reads that back, then fills the first
// with a pattern of its own and reads it back through a sub-buffer of its first half.
func (e *stackEnv) writeCopyAndSubBuffer() error {
	ms, release, err := e.twoBuffers()
	defer release()
	if err != nil {
		return err
	}
	data := bytes.Repeat([]byte{5, 6, 7, 8}, 16)
	if _, err := e.q.Write(ms[0], 0, data, nil, false); err != nil {
		return err
	}
	ev, err := e.q.Copy(ms[0], ms[1], 0, 0, uint64(len(data)), nil, true)
	if err != nil {
		return err
	}
	defer e.q.ReleaseEvent(ev)
	if err := e.readBack(ms[1], data, ev); err != nil {
		return err
	}
	if err := e.q.FillWith(ms[0], []byte{3, 4}, 64); err != nil {
		return err
	}
	sub, err := e.ctx.CreateSubBuffer(ms[0], 0, 0, 32)
	if err != nil {
		return err
	}
	defer e.ctx.ReleaseMem(sub)
	return e.readBack(sub, bytes.Repeat([]byte{3, 4}, 16))
}

func (e *stackEnv) program() error {
	p, err := e.ctx.CreateProgram(stackSource)
	if err != nil {
		return err
	}
	p.Release()
	return nil
}

func (e *stackEnv) kernel() error {
	k, err := e.prog.Kernel("k")
	if err != nil {
		return err
	}
	m, err := e.ctx.CreateBuffer(MEM_READ_WRITE, 16, 0)
	if err != nil {
		return err
	}
	defer e.ctx.ReleaseMem(m)
	if err := k.SetMem(0, m); err != nil {
		return err
	}
	if err := k.SetUint32(1, 0xC0FFEE); err != nil {
		return err
	}
	if _, err := e.q.RunKernel(k, 4, false); err != nil {
		return err
	}
	return e.readBack(m, bytes.Repeat([]byte{0xEE, 0xFF, 0xC0, 0}, 4))
}

// requireOpenCL skips a test that needs an OpenCL runtime, or fails it where CLMEMPROBE_REQUIRE_OPENCL=1.
func requireOpenCL(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CLMEMPROBE_REQUIRE_OPENCL") == "1" {
		t.Fatalf("required by CLMEMPROBE_REQUIRE_OPENCL=1: "+format, args...)
	}
	t.Skipf(format, args...)
}
