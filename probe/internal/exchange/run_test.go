package exchange

import (
	"os"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// The exchange on the runtime, at the sizes a check uses: every step verified against the reference, the
// steps collected more often than verified, and the copy paths measured.
func TestRunOnTheRuntime(t *testing.T) {
	if os.Getenv("POCL_DEVICES") == "" {
		t.Setenv("POCL_DEVICES", "pthread pthread")
	}
	lib, err := cl.Open(cl.ResolveLibraryPath(""))
	if err != nil {
		requireOpenCL(t, "%v", err)
	}
	_, devs, err := lib.AllDevices()
	if err != nil || len(devs) == 0 || len(devs[0]) < 2 {
		requireOpenCL(t, "no platform with two devices: %v", err)
	}
	const steps = maxPendingSteps + 6
	for _, c := range []struct {
		name   string
		devs   []*cl.Device
		verify uint64
	}{
		{"two devices, verified at the end", devs[0][:2], 0},
		{"two devices, verified every 5 steps", devs[0][:2], 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Devices: c.devs, Indices: []int{0, 1}, Cells: 512, Halo: 4, Steps: steps, Sync: wire.SyncEvents,
				VerifyEvery: c.verify, BenchBytes: 4096, BenchReps: 1}
			var seen uint64
			cfg.OnStep = func(done uint64) { seen = done }
			res, err := Run(lib, cfg)
			if err != nil {
				t.Fatal(err)
			}
			checks := 1
			if c.verify > 0 {
				checks = int((steps + c.verify - 1) / c.verify)
			}
			if !res.Correct || res.WrongCells != 0 || len(res.Checks) != checks || seen != steps || len(res.Paths) != 6 ||
				res.BytesMigratedPerStep != uint64(2*(len(c.devs)-1))*4*4 {
				t.Errorf("correct %v (%d wrong), %d checks, %d steps seen, %d paths, %d bytes a step", res.Correct, res.WrongCells,
					len(res.Checks), seen, len(res.Paths), res.BytesMigratedPerStep)
			}
		})
	}
}

// requireOpenCL skips a test that needs an OpenCL runtime, or fails it where CLMEMPROBE_REQUIRE_OPENCL=1.
func requireOpenCL(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CLMEMPROBE_REQUIRE_OPENCL") == "1" {
		t.Fatalf("required by CLMEMPROBE_REQUIRE_OPENCL=1: "+format, args...)
	}
	t.Skipf(format, args...)
}
