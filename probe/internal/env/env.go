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

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/host"
)

// envPrefixes are variables that change what OpenCL runtimes do; any variable with one of these prefixes
// (or named exactly) goes into the report.
var envPrefixes = []string{"POCL_", "CUDA_", "NVIDIA_", "__GL", "GPU_", "HSA_", "ROC", "HIP_", "AMD_", "ZE_", "NEO",
	"IGC_", "OCL_ICD", "OPENCL_", "CL_", "SYCL_", "ONEAPI_", "INTEL_", "CLMEMPROBE_", "LD_LIBRARY_PATH", "LD_PRELOAD"}

// NEO's debug keys are plain names (NEOReadDebugKeys=1 makes it read them): the ones that change memory
// placement or reporting are named here.
var neoKeys = map[string]bool{"NEOReadDebugKeys": true, "LogAllocationSummaryReport": true, "EnableMultiTileSupport": true,
	"ForceLocalMemoryAccessMode": true, "EnableHostPtrTracking": true, "EnableDeferredDeleter": true,
	"EnableLocalMemory": true, "UseKmdMigration": true, "EnableBOMmapCreate": true, "ExperimentalSmallBufferPoolAllocator": true,
	"EnableHostUsmAllocationPool": true, "EnableDeviceUsmAllocationPool": true, "PrintDebugSettings": true}

// Collect reads the environment under root.
func Collect(root sample.Root, openclLibrary string) *result.Environment {
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
	e.ICDVendorsDir = os.Getenv("OCL_ICD_VENDORS")
	dir := e.ICDVendorsDir
	if dir == "" {
		dir = filepath.Join(root.Etc, "OpenCL/vendors")
		e.ICDVendorsDir = dir
	}
	e.ICDFiles = icdFiles(dir)
	e.DRIDevices = driDevices(root)
	e.EnvVars = relevantEnv(os.Environ())
	return e
}

// icdFiles maps each .icd file the loader reads to the library it names. OCL_ICD_VENDORS may also name a
// single file.
func icdFiles(dir string) map[string]string {
	out := map[string]string{}
	var files []string
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		files = []string{dir}
	} else {
		files, _ = filepath.Glob(filepath.Join(dir, "*.icd"))
	}
	for _, f := range files {
		out[f] = sample.ReadTrim(f)
	}
	if len(out) == 0 {
		return nil
	}
	return out
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

func relevantEnv(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if neoKeys[k] {
			out[k] = v
			continue
		}
		for _, p := range envPrefixes {
			if strings.HasPrefix(k, p) {
				out[k] = v
				break
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
