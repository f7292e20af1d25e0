package trace

import (
	"fmt"
	"os"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// LoaderAnswer is what the tool learnt when it asked the ICD loader whether it loads layers: a child of the
// tool loaded the library with the layer in OPENCL_LAYERS and listed the platforms (wire.KindLayers).
type LoaderAnswer struct {
	Library   string // the loader asked, as it was named to the dynamic linker
	Inits     uint32 // the layer's inits the channel counted: the loader called clInitLayer
	Platforms int    // the platforms it listed
	Error     string // why it could not be loaded or asked, where it could not
	Fault     string // how the child ended, where it crashed or hung
	// File is the loader's file as the child mapped it ("" where it could not tell one); Kept says the
	// answer was kept from an earlier trace (KeptAnswer), not asked now.
	File string
	Kept bool
}

// ChooseWay is the one way the layer goes into the program and why. The user's --via layer or preload is
// taken as it is; auto takes the loader's layers where the loader loaded the layer when asked, or where it
// cannot be told (OPENCL_LAYERS is ignored by a loader without layers and changes nothing else), and
// LD_PRELOAD only where the loader listed platforms without loading the layer: preloaded exports win the
// program's symbol lookups, so they are used only where nothing else reaches the calls.
func ChooseWay(via string, a LoaderAnswer) (way, reason string) {
	switch via {
	case ViaLayer:
		return result.WayLayer, "asked for with --via layer"
	case ViaPreload:
		return result.WayPreload, "asked for with --via preload"
	}
	switch {
	case a.Inits > 0 && a.Kept:
		return result.WayLayer, fmt.Sprintf("the ICD loader (%s) loaded the layer from OPENCL_LAYERS when the tool asked it in an earlier trace, and its file (%s) and the environment that chooses it are unchanged", a.Library, a.File)
	case a.Inits > 0:
		return result.WayLayer, fmt.Sprintf("the ICD loader (%s) loaded the layer from OPENCL_LAYERS when the tool asked it", a.Library)
	case a.Fault != "":
		return result.WayLayer, fmt.Sprintf("asking the ICD loader (%s) whether it loads layers failed: it %s; the layer goes in through OPENCL_LAYERS, which a loader without layers ignores", a.Library, a.Fault)
	case a.Error != "":
		return result.WayLayer, fmt.Sprintf("no ICD loader could be loaded here (%s); a loader the program brings may load the layer from OPENCL_LAYERS", a.Error)
	case a.Platforms == 0:
		return result.WayLayer, fmt.Sprintf("the ICD loader (%s) lists no platform, so whether it loads layers cannot be told (ocl-icd loads them only once a runtime loads); OPENCL_LAYERS changes nothing a loader without layers does", a.Library)
	}
	return result.WayPreload, fmt.Sprintf("the ICD loader (%s) listed %s but did not load the layer named in OPENCL_LAYERS (a loader without layers: ocl-icd before 2.3, the Khronos loader before 2020.06), so LD_PRELOAD",
		a.Library, units.Counted(uint64(a.Platforms), "platform"))
}

// LayerEnv is the environment of the loader-asking child: the layer after the user's own layers, and the
// channel's descriptor.
func LayerEnv(layer string, fd int) []string {
	return []string{"OPENCL_LAYERS=" + join(os.Getenv("OPENCL_LAYERS"), layer, ":"), fmt.Sprintf("CLMEMPROBE_TRACE_FD=%d", fd)}
}

// LayerInits is how many loaders took the layer's table through this channel.
func (c *Channel) LayerInits() uint32 { return c.reach().layerInits }
