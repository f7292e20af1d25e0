package main

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// TestSizeNotesNameAVendorsFlagOnlyOnItsRuntime: a size over the reported maximum allocation names Intel's
// flag that lifts it on Intel's runtime, and not on PoCL running on an Intel CPU, whose device's vendor is
// "GenuineIntel": a substring of the platform's and device's strings had named it there.
func TestSizeNotesNameAVendorsFlagOnlyOnItsRuntime(t *testing.T) {
	const maxAlloc = 1 << 30
	for _, c := range []struct {
		platform result.Platform
		device   string
		names    bool
	}{
		{result.Platform{Name: "Intel(R) OpenCL Graphics", Vendor: "Intel(R) Corporation"}, "Intel(R) Corporation", true},
		{result.Platform{Name: "Portable Computing Language", Vendor: "The pocl project"}, "GenuineIntel", false},
		{result.Platform{Name: "NVIDIA CUDA", Vendor: "NVIDIA Corporation"}, "NVIDIA Corporation", false},
	} {
		inv := result.Inventory{{Platform: c.platform, Devices: []result.Device{{Name: "dev", Vendor: c.device, MaxAllocBytes: maxAlloc}}}}
		notes := sizeNotes(inv, 0, []int{0}, []uint64{2 * maxAlloc}, nil)
		if len(notes) != 1 {
			t.Fatalf("%s: %d notes for a size over the maximum, want 1", c.platform.Name, len(notes))
		}
		want := `size 2 GiB is over device 0's reported maximum allocation of 1 GiB ("dev"): tried all the same; ` +
			"the runtime may refuse it (-61, CL_INVALID_BUFFER_SIZE), and clmemprobe largest finds what it really takes"
		if c.names {
			want += "; Intel documents CL_MEM_ALLOW_UNRESTRICTED_SIZE_INTEL (--flags 0x800000) to lift it"
		}
		if notes[0] != want {
			t.Errorf("%s on a %q device: %q, want %q (Intel's flag named only on Intel's runtime)", c.platform.Name, c.device, notes[0], want)
		}
	}
}
