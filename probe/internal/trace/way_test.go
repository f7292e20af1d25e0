package trace

import (
	"strings"
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
		{"loader took the layer", ViaAuto, LoaderAnswer{Library: lib, Inits: 1, Platforms: 1}, result.WayLayer, "loaded the layer"},
		{"loader without layers", ViaAuto, LoaderAnswer{Library: lib, Platforms: 2}, result.WayPreload, "listed 2 platforms but did not load the layer"},
		{"no platform: cannot tell", ViaAuto, LoaderAnswer{Library: lib}, result.WayLayer, "lists no platform"},
		{"no loader here", ViaAuto, LoaderAnswer{Library: lib, Error: "libOpenCL.so.1 not found"}, result.WayLayer, "no ICD loader could be loaded here (libOpenCL.so.1 not found)"},
		{"the loader crashed", ViaAuto, LoaderAnswer{Library: lib, Fault: "crashed with SIGSEGV"}, result.WayLayer, "it crashed with SIGSEGV"},
		{"--via layer", ViaLayer, LoaderAnswer{Platforms: 2}, result.WayLayer, "--via layer"},
		{"--via preload", ViaPreload, LoaderAnswer{Inits: 1}, result.WayPreload, "--via preload"},
	} {
		way, why := ChooseWay(tc.via, tc.a)
		if way != tc.way || !strings.Contains(why, tc.says) {
			t.Errorf("%s: %s because %q; want %s because ...%q...", tc.name, way, why, tc.way, tc.says)
		}
	}
}
