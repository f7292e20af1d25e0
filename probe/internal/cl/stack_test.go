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
	if os.Getenv("POCL_DEVICES") == "" {
		t.Setenv("POCL_DEVICES", "pthread pthread")
	}
	lib, err := Open(ResolveLibraryPath(""))
	if err != nil {
		requireOpenCL(t, "%v", err)
		return
	}
	plats, devs, err := lib.AllDevices()
	if err != nil || len(devs) == 0 || len(devs[0]) == 0 {
		requireOpenCL(t, "no OpenCL device: %v", err)
		return
	}
	dev := devs[0][0]
	wantPlatforms := len(plats)
	wantName := plats[0].Name
	wantDevices := len(devs[0])
	wantGlobal := dev.GlobalMem
	wantVendor, _ := dev.InfoBytes(DEVICE_VENDOR)

	atEveryDepth(t, "clGetPlatformIDs and clGetPlatformInfo", func() error {
		ps, err := lib.Platforms()
		if err != nil {
			return err
		}
		if len(ps) != wantPlatforms || ps[0].Name != wantName {
			return fmt.Errorf("%d platforms, first %q; want %d, %q", len(ps), ps[0].Name, wantPlatforms, wantName)
		}
		return nil
	})
	atEveryDepth(t, "clGetDeviceIDs", func() error {
		ds, err := plats[0].Devices()
		if err != nil {
			return err
		}
		if len(ds) != wantDevices {
			return fmt.Errorf("%d devices, want %d", len(ds), wantDevices)
		}
		return nil
	})
	atEveryDepth(t, "clGetDeviceInfo", func() error {
		g, err := dev.InfoUint64(DEVICE_GLOBAL_MEM_SIZE)
		if err != nil {
			return err
		}
		v, err := dev.InfoBytes(DEVICE_VENDOR)
		if err != nil {
			return err
		}
		if g != wantGlobal || !bytes.Equal(v, wantVendor) {
			return fmt.Errorf("global memory %d, vendor %q; want %d, %q", g, v, wantGlobal, wantVendor)
		}
		return nil
	})
	ctx, err := lib.CreateContext(devs[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	q, err := ctx.CreateQueue(dev, true)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Release()
	atEveryDepth(t, "clCreateContext", func() error {
		c, err := lib.CreateContext(devs[0][:1], 1)
		if err != nil {
			return err
		}
		c.Release()
		return nil
	})
	atEveryDepth(t, "clCreateBuffer, clEnqueueFillBuffer, clEnqueueReadBuffer, events", func() error {
		m, err := ctx.CreateBuffer(MEM_READ_WRITE, 64)
		if err != nil {
			return err
		}
		defer ctx.ReleaseMem(m)
		ev, err := q.Fill(m, []byte{7, 7, 7, 7}, 0, 64, nil, true)
		if err != nil {
			return err
		}
		defer lib.ReleaseEvent(ev)
		if err := lib.Wait(ev); err != nil {
			return err
		}
		if st, err := lib.EventStatus(ev); err != nil || st != 0 {
			return fmt.Errorf("event status %d, %v; want complete", st, err)
		}
		if _, _, err := lib.Profile(ev); err != nil {
			return err
		}
		got := make([]byte, 64)
		if _, err := q.Read(m, 0, got, []Event{ev}, false); err != nil {
			return err
		}
		if !bytes.Equal(got, bytes.Repeat([]byte{7}, 64)) {
			return fmt.Errorf("read back %v", got[:8])
		}
		// The loop's calls through the pinned block.
		q.SetFillPattern([]byte{9, 9})
		if _, err := q.MigrateBuffer(m, false); err != nil {
			return err
		}
		fev, err := q.FillBuffer(m, 64, true)
		if err != nil {
			return err
		}
		defer lib.ReleaseEvent(fev)
		if err := q.Finish(); err != nil {
			return err
		}
		if _, err := q.Read(m, 0, got, nil, false); err != nil {
			return err
		}
		if !bytes.Equal(got, bytes.Repeat([]byte{9}, 64)) {
			return fmt.Errorf("read back %v after FillBuffer", got[:8])
		}
		return nil
	})
	const source = "__kernel void k(__global uint *b, uint v) { b[get_global_id(0)] = v; }"
	atEveryDepth(t, "clCreateProgramWithSource", func() error {
		p, err := ctx.CreateProgram(source)
		if err != nil {
			return err
		}
		p.Release()
		return nil
	})
	// A build takes tens of milliseconds on PoCL and has no out-parameter: one, at the top.
	prog, err := ctx.BuildProgram(source, "")
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Release()
	atEveryDepth(t, "clCreateKernel, clSetKernelArg, clEnqueueNDRangeKernel", func() error {
		k, err := prog.Kernel("k")
		if err != nil {
			return err
		}
		m, err := ctx.CreateBuffer(MEM_READ_WRITE, 16)
		if err != nil {
			return err
		}
		defer ctx.ReleaseMem(m)
		readBack := func(want uint32) error {
			got := make([]byte, 16)
			if _, err := q.Read(m, 0, got, nil, false); err != nil {
				return err
			}
			for i := 0; i < 16; i += 4 {
				if v := uint32(got[i]) | uint32(got[i+1])<<8 | uint32(got[i+2])<<16 | uint32(got[i+3])<<24; v != want {
					return fmt.Errorf("the kernel wrote %#x, want %#x", v, want)
				}
			}
			return nil
		}
		if err := k.SetMem(0, m); err != nil {
			return err
		}
		if err := k.SetUint32(1, 0xC0FFEE); err != nil {
			return err
		}
		if _, err := q.RunKernel(k, 4, nil, false); err != nil {
			return err
		}
		if err := readBack(0xC0FFEE); err != nil {
			return err
		}
		if _, err := q.RunKernelOn(k, m, 0xBEEF, 4, false); err != nil {
			return err
		}
		return readBack(0xBEEF)
	})
}

// requireOpenCL skips a test that needs an OpenCL runtime, or fails it where CLMEMPROBE_REQUIRE_OPENCL=1.
func requireOpenCL(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CLMEMPROBE_REQUIRE_OPENCL") == "1" {
		t.Fatalf("required by CLMEMPROBE_REQUIRE_OPENCL=1: "+format, args...)
	}
	t.Skipf(format, args...)
}
