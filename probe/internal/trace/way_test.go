package trace

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The one way in, from what the loader answered: preload only where a loader listed platforms and did not
// load the layer; the user's --via as it is; every reason names what it rests on.
func TestChooseWay(t *testing.T) {
	const lib = "libOpenCL.so.1"
	for _, tc := range []struct {
		name, via string
		a         LoaderAnswer
		way, says string
	}{
		{"loader took the layer", ViaAuto, LoaderAnswer{Library: lib, Inits: 1, Platforms: 1}, result.WayLayer, "the ICD loader (libOpenCL.so.1) loaded the layer from OPENCL_LAYERS when the tool asked it"},
		{"loader without layers", ViaAuto, LoaderAnswer{Library: lib, Platforms: 2}, result.WayPreload, "the ICD loader (libOpenCL.so.1) listed 2 platforms but did not load the layer named in OPENCL_LAYERS " +
			"(a loader without layers: ocl-icd before 2.3, the Khronos loader before 2020.06), so LD_PRELOAD"},
		{"no platform: cannot tell", ViaAuto, LoaderAnswer{Library: lib}, result.WayLayer, "the ICD loader (libOpenCL.so.1) lists no platform, so whether it loads layers cannot be told " +
			"(ocl-icd loads them only once a runtime loads); OPENCL_LAYERS changes nothing a loader without layers does"},
		{"no loader here", ViaAuto, LoaderAnswer{Library: lib, Error: "libOpenCL.so.1 not found"}, result.WayLayer, "no ICD loader could be loaded here (libOpenCL.so.1 not found); a loader the program brings may load the layer from OPENCL_LAYERS"},
		{"the loader crashed", ViaAuto, LoaderAnswer{Library: lib, Fault: "crashed with SIGSEGV"}, result.WayLayer, "asking the ICD loader (libOpenCL.so.1) whether it loads layers failed: it crashed with SIGSEGV; " +
			"the layer goes in through OPENCL_LAYERS, which a loader without layers ignores"},
		{"--via layer", ViaLayer, LoaderAnswer{Platforms: 2}, result.WayLayer, "asked for with --via layer"},
		{"--via preload", ViaPreload, LoaderAnswer{Inits: 1}, result.WayPreload, "asked for with --via preload"},
	} {
		way, why := ChooseWay(tc.via, tc.a)
		if way != tc.way || why != tc.says {
			t.Errorf("%s: %s because %q; want %s because %q", tc.name, way, why, tc.way, tc.says)
		}
	}
}
