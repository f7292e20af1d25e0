package probe

import (
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Preset is a set of variants that tests one known switch of one runtime, each key with the public source
// that says what it does.
type Preset struct {
	Name    string
	Runtime string // the runtime's name, as help says it
	// Vendor is the runtime's (VendorOther for a preset of any runtime).
	Vendor   result.Vendor
	Purpose  string
	Variants []result.Variant
	Source   string
}

// The public sources the presets and logging settings cite, at the commits this project read.
const (
	neoContextSource = "https://github.com/intel/compute-runtime/blob/master/opencl/source/context/context.cpp " +
		"(Context::BufferPoolAllocator::isAggregatedSmallBuffersEnabled: -1 the product's default, 0 off, 1 single-device contexts, 2 every context)"
	neoDebugSource = "https://github.com/intel/compute-runtime/blob/master/shared/source/debug_settings/debug_variables_base.inl " +
		"(NEOReadDebugKeys=1 makes a release build read the keys of release_variables.inl; others need a debug build)"
	clrFlagsSource = "https://github.com/ROCm/clr/blob/develop/rocclr/utils/flags.hpp (release flag DISABLE_DEFERRED_ALLOC: " +
		"rocclr/platform/memory.cpp allocates on every device of the context at clCreateBuffer when it is set)"
	clrLogSource = "https://github.com/ROCm/clr/blob/develop/rocclr/utils/flags.hpp (AMD_LOG_LEVEL 0-4, AMD_LOG_MASK)"
	poclSource   = "https://github.com/pocl/pocl/blob/main/doc/sphinx/source/using.rst (POCL_MEMORY_LIMIT: the global memory, " +
		"in GB, reported by the pthread and basic devices; POCL_DEBUG: categories of debug messages)"
	// The descriptor leak is known from the runtime's history, not from a document: leads to read, not a finding.
	neoFDSource = "leads, not a confirmed cause: https://github.com/intel/compute-runtime/commit/890724c562 (\"close leaked PRIME FD\", " +
		"in release 26.18) closes a descriptor NEO left open per buffer for each additional GPU of a multi-device context; " +
		"the leak is traced to commit 5205d34894. The test and the workaround are one: the descriptor limit (ulimit -n), " +
		"which this variant raises for the worker; further than before means descriptors were the limit"
)

// Presets are the documented variants, for run --variant-preset NAME.
var Presets = []Preset{
	{
		Name: "neo-pool", Runtime: "Intel compute-runtime (NEO)", Vendor: result.VendorIntelGPU,
		Purpose: "small-buffer pooling off, and on for every context: NEO pools buffers up to its threshold (1-2 MiB) only in single-device contexts by default, which may be why one context per device reaches more buffers",
		Variants: []result.Variant{
			{Name: "pool-off", Settings: map[string]string{"NEOReadDebugKeys": "1", "ExperimentalSmallBufferPoolAllocator": "0"}},
			{Name: "pool-all", Settings: map[string]string{"NEOReadDebugKeys": "1", "ExperimentalSmallBufferPoolAllocator": "2"}},
		},
		Source: neoContextSource,
	},
	{
		Name: "neo-log", Runtime: "Intel compute-runtime (NEO)", Vendor: result.VendorIntelGPU,
		Purpose: "the runtime's own account of its allocations, kept in each worker's output: debug messages, an allocation summary at exit, the memory regions",
		Variants: []result.Variant{{Name: "neo-log", Settings: map[string]string{"NEOReadDebugKeys": "1", "PrintDebugMessages": "1",
			"LogAllocationSummaryReport": "1", "PrintMemoryRegionSizes": "1"}}},
		Source: neoDebugSource,
	},
	{
		Name: "rocm-no-deferred", Runtime: "ROCm CLR", Vendor: result.VendorAMD,
		Purpose:  "no deferred allocation: buffers of a context over several devices get their memory on every device at clCreateBuffer instead of at first use",
		Variants: []result.Variant{{Name: "no-deferred", Settings: map[string]string{"DISABLE_DEFERRED_ALLOC": "1"}}},
		Source:   clrFlagsSource,
	},
	{
		Name: "nofile", Runtime: "any",
		Purpose: "raise the descriptor limit: a runtime that keeps descriptors per buffer (Intel's NEO kept one per buffer for every " +
			"additional GPU of a shared context) fails near the soft limit (ulimit -n, often 1024), NEO with -6 at create",
		// The hard limit, not a number: raising the soft limit to it needs no privilege, so the preset works
		// wherever the tool runs (a number above the hard limit would fail the job at set-up).
		Variants: []result.Variant{{Name: "nofile-hard", Settings: map[string]string{"RLIMIT_NOFILE": "hard"}}},
		Source:   neoFDSource,
	},
	{
		Name: "pocl-limit", Runtime: "PoCL", Vendor: result.VendorPoCL,
		Purpose:  "PoCL's CPU devices report 1 GB of global memory (and a quarter of it as the largest allocation) instead of most of the RAM",
		Variants: []result.Variant{{Name: "limit-1g", Settings: map[string]string{"POCL_MEMORY_LIMIT": "1"}}},
		Source:   poclSource,
	},
}

// PresetNamed returns the named preset, or false.
func PresetNamed(name string) (Preset, bool) {
	for _, p := range Presets {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

// runtimeLog is one runtime's documented logging variables, for run --runtime-log.
type runtimeLog struct {
	vendor   result.Vendor
	settings map[string]string
	source   string
}

var runtimeLogs = []runtimeLog{
	{result.VendorIntelGPU, map[string]string{"NEOReadDebugKeys": "1", "PrintDebugMessages": "1", "LogAllocationSummaryReport": "1",
		"PrintMemoryRegionSizes": "1"}, neoDebugSource},
	{result.VendorAMD, map[string]string{"AMD_LOG_LEVEL": "3"}, clrLogSource},
	{result.VendorPoCL, map[string]string{"POCL_DEBUG": "memory,error,warning"}, poclSource},
	// The project's fault-injection runtime logs every allocation decision when asked.
	{result.VendorFaultCL, map[string]string{"FAULTCL_LOG": "1"}, "scripts/faultcl/faultcl.c (FAULTCL_LOG)"},
}

// RuntimeLogFor returns the logging variables of the vendor's runtime and where they are documented, or
// nil where none is known (NVIDIA's OpenCL documents none; NEO's keys are NEO's, not Intel's CPU runtime's).
func RuntimeLogFor(v result.Vendor) (map[string]string, string) {
	for _, l := range runtimeLogs {
		if l.vendor == v {
			return l.settings, l.source
		}
	}
	return nil, ""
}
