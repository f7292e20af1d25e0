// Package env collects the environment block of a bug report: the machine, the kernel's memory policy, the
// ICD loader's configuration and the variables that change vendor runtime behaviour. Each piece that cannot
// be read is left empty; collecting never fails.
package env

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/internal/icd"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/system"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/host"
)

// The environment variables a report records: those that change what OpenCL loaders and runtimes do, by
// exact name or by a prefix only a runtime uses. Anything else stays out of the report, and a recorded
// name that looks like a secret (result.IsSecret) has its value redacted.
var (
	envNames = map[string]bool{
		// ICD loaders (ocl-icd, Khronos) and the dynamic linker
		"OCL_ICD_VENDORS": true, "OCL_ICD_FILENAMES": true, "OCL_ICD_PLATFORM_SORT": true, "OCL_ICD_DEFAULT_PLATFORM": true,
		"OCL_ICD_DEBUG": true, "OCL_ICD_ENABLE_TRACE": true, "OPENCL_LAYERS": true, "OPENCL_LAYER_PATH": true,
		"LD_LIBRARY_PATH": true, "LD_PRELOAD": true,
		// Intel NEO: its debug keys are plain names, read when NEOReadDebugKeys=1
		"NEOReadDebugKeys": true, "PrintDebugSettings": true, "PrintDebugMessages": true, "LogAllocationSummaryReport": true,
		"PrintMemoryRegionSizes": true, "LogAllocationMemoryPool": true, "ExperimentalSmallBufferPoolAllocator": true,
		"EnableMultiTileSupport": true, "ForceLocalMemoryAccessMode": true, "EnableHostPtrTracking": true,
		"EnableDeferredDeleter": true, "EnableLocalMemory": true, "UseKmdMigration": true, "EnableBOMmapCreate": true,
		"EnableHostUsmAllocationPool": true, "EnableDeviceUsmAllocationPool": true,
		// ROCm/CLR
		"DISABLE_DEFERRED_ALLOC": true, "ROCR_VISIBLE_DEVICES": true, "HIP_VISIBLE_DEVICES": true,
		// NVIDIA and CUDA: device visibility and order
		"CUDA_VISIBLE_DEVICES": true, "CUDA_DEVICE_ORDER": true, "NVIDIA_VISIBLE_DEVICES": true, "NVIDIA_DRIVER_CAPABILITIES": true,
		"CUDA_CACHE_DISABLE": true, "CUDA_LAUNCH_BLOCKING": true,
		// Level Zero and SYCL selectors
		"ONEAPI_DEVICE_SELECTOR": true, "SYCL_DEVICE_FILTER": true,
	}
	envPrefixes = []string{
		"CLMEMPROBE_",                                                       // this tool
		"POCL_",                                                             // PoCL
		"IGC_",                                                              // Intel's graphics compiler, under NEO
		"GPU_", "HSA_", "AMD_LOG_", "AMD_SERIALIZE_", "AMD_DIRECT_DISPATCH", // ROCm/CLR
		"ZE_", // Level Zero
	}
)

// Collect reads the environment under root; keepDir is where slow answers are kept between runs ("": none;
// see system.CollectKeeping).
func Collect(root sample.Root, openclLibrary, keepDir string) *result.Environment {
	ctx := root.Context(context.Background())
	e := &result.Environment{OS: runtime.GOOS, CPUs: runtime.NumCPU(), OpenCLLibrary: openclLibrary}
	if platform, _, version, err := host.PlatformInformationWithContext(ctx); err == nil && platform != "" {
		e.OS = strings.TrimSpace(platform + " " + version)
	}
	e.Kernel = sample.ReadTrim(filepath.Join(root.Proc, "sys/kernel/osrelease"))
	e.Hostname = sample.ReadTrim(filepath.Join(root.Proc, "sys/kernel/hostname"))
	if ci, err := cpu.InfoWithContext(ctx); err == nil && len(ci) > 0 {
		e.CPU = ci[0].ModelName
	}
	if mi, err := root.Meminfo(); err == nil {
		e.HostMemBytes, e.SwapBytes = mi.Total, mi.SwapTotal
	}
	e.Overcommit = sample.ReadTrim(filepath.Join(root.Proc, "sys/vm/overcommit_memory"))
	e.OvercommitPct = sample.ReadTrim(filepath.Join(root.Proc, "sys/vm/overcommit_ratio"))
	e.MaxMapCount, _ = root.MaxMapCount()
	dir, files := icd.Registered(root.Etc)
	e.ICDVendorsDir = dir
	for _, f := range files {
		if e.ICDFiles == nil {
			e.ICDFiles = map[string]string{}
		}
		e.ICDFiles[f.Path] = f.Library
	}
	e.DRIDevices = driDevices(root)
	e.EnvVars = relevantEnv(os.Environ())
	libs := []string{openclLibrary}
	for _, f := range files {
		libs = append(libs, f.Path, f.Library) // the .icd file's package is the runtime's too
	}
	e.System = system.CollectKeeping(root, libs, keepDir)
	return e
}

// driDevices lists /dev/dri render and card nodes with the kernel driver bound to each.
func driDevices(root sample.Root) []string {
	nodes, _ := filepath.Glob(filepath.Join(root.Dev, "dri", "*"))
	var out []string
	for _, n := range nodes {
		base := filepath.Base(n)
		if !strings.HasPrefix(base, "card") && !strings.HasPrefix(base, "renderD") {
			continue
		}
		drv := ""
		if link, err := os.Readlink(filepath.Join(root.Sys, "class/drm", base, "device/driver")); err == nil {
			drv = filepath.Base(link)
		}
		line := "/dev/dri/" + base
		if drv != "" {
			line += " (" + drv + ")"
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// relevantEnv picks the recorded variables from an environment and redacts their secrets.
func relevantEnv(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !recorded(k) || !result.IsEnvName(k) {
			continue
		}
		if result.IsSecret(k) {
			v = result.Redacted
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func recorded(name string) bool {
	if envNames[name] {
		return true
	}
	for _, p := range envPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
