package system

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// gpuModules are the kernel modules that drive GPUs or serve their memory; nvidia* are matched by prefix
// (nvidia, nvidia_uvm, nvidia_drm, nvidia_modeset, nvidia_peermem).
var gpuModules = map[string]bool{
	"i915": true, "xe": true, "amdgpu": true, "amdxcp": true, "radeon": true, "nouveau": true, "drm": true,
	"drm_kms_helper": true, "ttm": true, "gpu_sched": true, "drm_buddy": true, "drm_exec": true, "drm_ttm_helper": true,
	"intel_vpu": true, "habanalabs": true, "mei_gsc": true,
}

func isGPUModule(name string) bool { return gpuModules[name] || strings.HasPrefix(name, "nvidia") }

// collectModules reads /proc/modules for the GPU modules, each with the version it declares, and the
// NVIDIA driver's version file.
func collectModules(root sample.Root, _ []string, s *result.System) string {
	path := filepath.Join(root.Proc, "modules")
	err := lines(path, func(line string) bool {
		f := strings.Fields(line)
		if len(f) < 4 || !isGPUModule(f[0]) || len(s.Modules) >= maxItems {
			return false
		}
		m := result.KernelModule{Name: clean(f[0])}
		if strings.ContainsAny(m.Name, "/.") { // a module name never has these; a path built from it must not
			return false
		}
		m.Version = readField(filepath.Join(root.Sys, "module", m.Name, "version"))
		for _, u := range strings.Split(strings.Trim(f[3], ","), ",") {
			if u != "" && u != "-" {
				m.UsedBy = append(m.UsedBy, clean(u))
			}
		}
		s.Modules = append(s.Modules, m)
		return false
	})
	slices.SortFunc(s.Modules, func(a, b result.KernelModule) int { return strings.Compare(a.Name, b.Name) })
	s.NVIDIADriver = readField(filepath.Join(root.Proc, "driver/nvidia/version"))
	if err != nil {
		return "cannot read " + path + ": " + errText(err)
	}
	return ""
}
