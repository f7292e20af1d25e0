package trace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/report/result"
)

// GPUSource is the GPUs' memory as read outside this process: NVML, loaded only in a child of the tool
// (the parent loads no vendor library). The readings are keyed by PCI bus id.
type GPUSource interface {
	// Latest is the newest reading; nil when none is current (none yet, or the source has ended).
	Latest() *wire.GPUReading
	// Unavailable is why the source gives nothing; "" while it gives readings or may yet.
	Unavailable() string
}

// drmNone is why DRM fdinfo gave nothing for devices it could be keyed to.
const drmNone = "DRM fdinfo: the program has no DRM client with drm-total-* counters for its devices"

// drmSampler names the program's DRM fdinfo counters as the source of device figures.
const drmSampler = "DRM fdinfo drm-total-* (the program's process)"

// deviceSampler fills a sample's device figures for the trace's devices, in order: NVML's readings (each
// device's use, and the program's own from NVML's process lists), else the program's own DRM fdinfo
// counters (Intel's and AMD's drivers publish them per process), else nothing, and then says why.
type deviceSampler struct {
	gpus GPUSource // nil: no NVML child (tests)
	root sample.Root
	pid  int
	pids []uint32 // the program's ids in every PID namespace its procfs sees, for NVML's process lists
	used string   // the sampler that gave figures first
	// nvmlWhy and drmWhy are why each gave nothing, at the last sample.
	nvmlWhy, drmWhy string
}

func newDeviceSampler(gpus GPUSource, root sample.Root, pid int) *deviceSampler {
	return &deviceSampler{gpus: gpus, root: root, pid: pid, pids: sample.PIDsOf(root, pid),
		nvmlWhy: "NVML: no sample read the program's devices", drmWhy: drmNone}
}

// read puts the devices' figures into s, from the first source that has them for devs.
func (d *deviceSampler) read(devs []result.TraceDevice, s *result.TraceSample) {
	if d.gpus != nil {
		if r := d.gpus.Latest(); r != nil {
			if d.fromNVML(r, devs, s) {
				return
			}
		} else if d.nvmlWhy = d.gpus.Unavailable(); d.nvmlWhy == "" {
			d.nvmlWhy = "NVML: no reading came"
			return // NVML may yet answer: one source for the whole trace, not DRM until it does
		}
	}
	if d.used != "" && d.used != drmSampler {
		return // NVML gave figures before: what it no longer gives is not taken from another source
	}
	byPCI, why := drmTargets(devs)
	if why != "" {
		d.drmWhy = why
	}
	if len(byPCI) == 0 {
		return
	}
	got := sample.DRMUsedBy(d.root, d.pid, byPCI)
	if len(got) == 0 {
		d.drmWhy = drmNone
		return
	}
	s.DeviceSamples = got
	for _, g := range got {
		s.ProgramDevices = append(s.ProgramDevices, result.TraceDeviceUse{Device: g.Device, Bytes: g.UsedBytes})
	}
	d.used = drmSampler
}

// drmTargets are the devices DRM fdinfo can be keyed to (PCI bus id to index), and why one or all cannot.
func drmTargets(devs []result.TraceDevice) (map[string]int, string) {
	byPCI, why := map[string]int{}, ""
	for _, dv := range devs {
		if dv.PCIBusID == "" {
			why = fmt.Sprintf("DRM fdinfo: traced device %d has no PCI bus id", dv.Index)
			continue
		}
		byPCI[dv.PCIBusID] = dv.Index
	}
	if len(devs) == 0 {
		why = "DRM fdinfo: the program has no device the layer saw"
	}
	return byPCI, why
}

// fromNVML keys a reading's GPUs to the trace's devices by PCI bus id (a GPU the trace has no device for is
// left out) and the program's share from the GPUs' process lists; false when no device matched.
func (d *deviceSampler) fromNVML(r *wire.GPUReading, devs []result.TraceDevice, s *result.TraceSample) bool {
	for _, dv := range devs {
		if dv.PCIBusID == "" {
			continue
		}
		for _, g := range r.GPUs {
			if !sample.SamePCI(g.PCIBusID, dv.PCIBusID) {
				continue
			}
			s.DeviceSamples = append(s.DeviceSamples, result.DeviceSample{Device: dv.Index, UsedBytes: g.UsedBytes, FreeBytes: g.FreeBytes})
			if own, ok := d.programShare(g); ok {
				s.ProgramDevices = append(s.ProgramDevices, result.TraceDeviceUse{Device: dv.Index, Bytes: own})
			}
			break
		}
	}
	if len(s.DeviceSamples) == 0 {
		d.nvmlWhy = "NVML: no GPU it sees is at the PCI bus id of a traced device"
		return false
	}
	if d.used == "" {
		d.used = r.Sampler
	}
	return true
}

// programShare is the memory NVML's process list gives the program on a GPU, and whether the list tells:
// a list that could not be read, or that names the program without its memory, does not. A program absent
// from a list it could be in holds nothing there.
func (d *deviceSampler) programShare(g wire.GPUMemory) (uint64, bool) {
	if g.ProcessesError != "" {
		return 0, false
	}
	var own uint64
	for _, p := range g.Processes {
		if slices.Contains(d.pids, p.PID) {
			if !p.Known {
				return 0, false
			}
			own += p.Bytes
		}
	}
	return own, true
}

// sampler is what the trace records as its device sampler: the source that gave figures, or why none did,
// for the devices the program ended with (a program may end before a sample sees its contexts, or any).
func (d *deviceSampler) sampler(devs []result.TraceDevice) string {
	if d.used != "" {
		return d.used
	}
	if d.gpus != nil && d.gpus.Unavailable() != "" {
		d.nvmlWhy = d.gpus.Unavailable()
	}
	if _, why := drmTargets(devs); why != "" {
		d.drmWhy = why
	} else {
		d.drmWhy = drmNone // every device could be keyed, and none gave figures
	}
	why := []string{d.nvmlWhy, d.drmWhy}
	if d.gpus == nil {
		why = why[1:]
	}
	return result.DeviceNotAvailable + strings.Join(why, "; ")
}
