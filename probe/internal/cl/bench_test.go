package cl

import (
	"os"
	"testing"
)

// openPoCL opens the ICD loader for benchmarks; they need a real runtime and skip without one.
func openPoCL(b *testing.B) (*Library, *Context) {
	b.Helper()
	if os.Getenv("POCL_DEVICES") == "" {
		b.Setenv("POCL_DEVICES", "pthread pthread")
	}
	lib, err := Open(ResolveLibraryPath(""))
	if err != nil {
		b.Skip(err)
	}
	ps, devs, err := lib.AllDevices()
	if err != nil || len(devs) == 0 || len(devs[0]) == 0 {
		b.Skip("no OpenCL device")
	}
	_ = ps
	ctx, err := lib.CreateContext(devs[0], 0)
	if err != nil {
		b.Fatal(err)
	}
	return lib, ctx
}

// BenchmarkCreateBuffer is one clCreateBuffer through the binding: the probe's hot path. Buffers are
// released every 4096 so the runtime's own bookkeeping does not grow through the benchmark.
func BenchmarkCreateBuffer(b *testing.B) {
	_, ctx := openPoCL(b)
	defer ctx.Release()
	held := make([]Mem, 0, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := ctx.CreateBuffer(MEM_READ_WRITE, 1<<20, 0)
		if err != nil {
			b.Fatal(err)
		}
		held = append(held, m)
		if len(held) == cap(held) {
			b.StopTimer()
			for _, m := range held {
				_ = ctx.ReleaseMem(m)
			}
			held = held[:0]
			b.StartTimer()
		}
	}
}
