package sample

import (
	"path/filepath"
	"strconv"

	"github.com/clmemprobe/clmemprobe/probe/internal/nvml"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The processes of a DRM device (Intel's xe and i915, AMD's amdgpu): every process's DRM clients, read from
// <proc>/<pid>/fdinfo, where the kernel gives each client its device (drm-pdev), its id (drm-client-id) and
// its memory by region (drm-total-*). A client shared by several descriptors or processes (dup, fork) is
// counted once, for the first process found holding it. Only processes this one may read are seen: all of
// them as root, the user's own otherwise; that is said where the list is used, never guessed at.

// The DRM samplers name the processes holding their devices' memory.
var (
	_ ProcessLister = (*fdinfoSampler)(nil)
	_ ProcessLister = (*amdgpuSysfsSampler)(nil)
)

// Processes lists the DRM clients of every process on the sampler's devices.
func (s *fdinfoSampler) Processes() (map[int][]result.DeviceProcess, error) {
	return drmProcesses(Root{Proc: s.proc}, s.byPCI), nil
}

// Processes lists the DRM clients of every process on the sampler's devices.
func (s *amdgpuSysfsSampler) Processes() (map[int][]result.DeviceProcess, error) {
	byPCI := map[string]int{}
	for _, t := range s.ts {
		byPCI[pciKey(t.PCIBusID)] = t.Index
	}
	root := s.root
	if root.Proc == "" {
		root = System
	}
	return drmProcesses(root, byPCI), nil
}

// drmProcesses sums each process's DRM clients per device (byPCI: PCI key to the run's device index) and
// lists them as processesOf does for NVML's lists: named, this process marked, largest first.
func drmProcesses(root Root, byPCI map[string]int) map[int][]result.DeviceProcess {
	dirs, _ := filepath.Glob(filepath.Join(root.Proc, "[0-9]*", "fdinfo"))
	seen := map[string]bool{} // drm-pdev/drm-client-id
	held := map[int]map[uint32]uint64{}
	for _, dir := range dirs {
		pid, err := strconv.ParseUint(filepath.Base(filepath.Dir(dir)), 10, 32)
		if err != nil {
			continue
		}
		eachDRMClient(dir, byPCI, seen, func(idx int, c DRMClient) {
			if held[idx] == nil {
				held[idx] = map[uint32]uint64{}
			}
			held[idx][uint32(pid)] += c.TotalBytes
		})
	}
	own := ownIn(OwnPIDs(root))
	out := map[int][]result.DeviceProcess{}
	for idx, byPID := range held {
		infos := make([]nvml.Process, 0, len(byPID))
		for pid, b := range byPID {
			infos = append(infos, nvml.Process{PID: pid, UsedBytes: b, UsedKnown: true})
		}
		out[idx] = processesOf(infos, root, own)
	}
	return out
}
