// Package wire is the protocol between the engine (the parent) and its children: the spec a child reads on
// its standard input, the events it writes on its events descriptor, the descriptors themselves, the stages
// it stores in the progress cell, and the answer each kind of child gives. Both sides import it, and nothing
// of each other.
//
// The parent writes one JSON object on the child's stdin: {"protocol": 1, "kind": "strategy" | "describe" |
// "exchange" | "gpu-memory", "library": ..., "strategy" | "exchange" | "gpu_memory": {...}}. Events are JSON lines: hello first (the
// protocol version), then info, sample, notice and end, and result last.
package wire

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// ChildCommand is the hidden command under which the binary re-executes itself as a child.
const ChildCommand = "__child"

// ProtocolVersion is the version of this protocol; a child of another version is refused.
const ProtocolVersion = 1

// The child's file descriptors, as the parent sets them (ExtraFiles start at 3).
const (
	EventsFD = 3
	CellFD   = 4
	// FirstExtraFD is the first of the descriptors a kind of child gets beyond the protocol's (the trace
	// channel of a KindLayers child).
	FirstExtraFD = 5
)

// Kind is the kind of job a child runs.
type Kind string

// The kinds of job.
const (
	KindStrategy Kind = "strategy" // one strategy's allocation loop
	KindDescribe Kind = "describe" // list platforms and devices
	KindExchange Kind = "exchange" // the halo exchange
	// KindGPUMemory reads the GPUs' memory through NVML for `trace` until it is ended (GPUMemorySpec).
	KindGPUMemory Kind = "gpu-memory"
	// KindLayers asks the ICD loader whether it loads layers, for `trace --via auto`: it loads the library
	// with the trace layer in OPENCL_LAYERS and lists the platforms; the layer counts its init in the trace
	// channel (descriptor FirstExtraFD), which the parent reads.
	KindLayers Kind = "loader-layers"
	// KindICD loads one registered runtime (Spec.ICDLibrary) on its own, then the loader pointed at it
	// alone (the parent sets OCL_ICD_VENDORS to a folder of its one .icd file), and answers what each gave (ICDAnswer).
	KindICD Kind = "icd"
	// KindLargestTry makes one buffer of LargestSpec's size on one device, fills it with a pattern of the
	// given size and reads its first and last page back (clmemprobe largest): one try of the search.
	KindLargestTry Kind = "largest-try"
	// KindDecoy holds DecoyBytes of memory at oom_score_adj 1000 until its standard input closes, and runs
	// no job: it has no spec, no events and no cell (supervise.Decoy says why it exists).
	KindDecoy Kind = "oom-decoy"
)

// OOMScoreFirst is the highest oom_score_adj, which any process may raise itself (or a child) to: the OOM
// killer's first choice. Workers, the decoy and a traced program take it.
const OOMScoreFirst = "1000"

// DecoyBytes is what the OOM decoy holds besides its own runtime: freed at once when the OOM killer takes
// it, it is room for the tool's next pages while a program the killer took before is still being freed.
const DecoyBytes = 8 << 20

// Spec is what the parent asks a child to do.
type Spec struct {
	Protocol int           `json:"protocol"`
	Kind     Kind          `json:"kind"`
	Library  string        `json:"library"`
	Strategy *StrategySpec `json:"strategy,omitempty"`
	Exchange *ExchangeSpec `json:"exchange,omitempty"`
	// Largest is the job of a KindLargestTry child.
	Largest *LargestSpec `json:"largest,omitempty"`
	// GPUMemory is the job of a KindGPUMemory child.
	GPUMemory *GPUMemorySpec `json:"gpu_memory,omitempty"`
	// ICDLibrary is the runtime a KindICD child loads, as its .icd file names it.
	ICDLibrary string `json:"icd_library,omitempty"`
}

// ICDAnswer is what a KindICD child answers: the dynamic linker's words where the runtime's library did
// not load (Missing: the library itself does not exist), whether it lacks the ICD entry point, and the
// devices of each platform the loader listed through it; Error where the loader itself failed.
type ICDAnswer struct {
	LoadError string `json:"load_error,omitempty"`
	Missing   bool   `json:"missing,omitempty"`
	NotICD    bool   `json:"not_icd,omitempty"`
	Devices   []int  `json:"devices,omitempty"` // per platform
	Error     string `json:"error,omitempty"`
}

// ReadSpec reads the spec from r and refuses one of another protocol version.
func ReadSpec(r io.Reader) (Spec, error) {
	var s Spec
	if err := json.NewDecoder(r).Decode(&s); err != nil || s.Protocol != ProtocolVersion {
		return s, fmt.Errorf("spec of protocol %d (%v); this build speaks %d", s.Protocol, err, ProtocolVersion)
	}
	return s, nil
}

// LayersAnswer is what the loader-asking child answers: the platforms the loader listed (0: none), or why
// it could not be loaded or asked.
type LayersAnswer struct {
	Platforms int    `json:"platforms"`
	Error     string `json:"error,omitempty"`
	// Loader is the loader's file as the child mapped it, where one file named libOpenCL.so* was mapped.
	Loader string `json:"loader,omitempty"`
}

// DescribeAnswer is what the describing child answers.
type DescribeAnswer struct {
	Inventory result.Inventory `json:"inventory,omitempty"`
	Error     string           `json:"error,omitempty"`
	NoOpenCL  bool             `json:"no_opencl,omitempty"`
	// NoPlatform: the loader loaded and listed no platform (the parent then asks each runtime why).
	NoPlatform bool `json:"no_platform,omitempty"`
}
