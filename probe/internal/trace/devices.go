package trace

import (
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// GPUSource is the GPUs' memory as read outside this process: NVML, loaded only in a child of the tool
// (the parent loads no vendor library). The readings are keyed by PCI bus id.
type GPUSource = sample.GPUSource

// deviceSampler fills a sample's device figures for the trace's devices from the program's device-memory
// chain (sample.Chain), the run's chain given the program's data: NVML's readings streamed from the GPU
// memory child (each device's use, and the program's own from NVML's process lists), else the program's own
// DRM fdinfo counters (Intel's and AMD's drivers publish them per process), else nothing, and then why.
// The trace learns its devices as the program makes contexts, so the chain chooses again at every sample.
type deviceSampler struct{ chain *sample.Chain }

func newDeviceSampler(gpus GPUSource, root sample.Root, pid int) *deviceSampler {
	return &deviceSampler{sample.NewChain(sample.ChainSpec{Root: root, PID: pid, GPUs: gpus, Later: true, Own: true})}
}

// read puts the devices' figures into s, from the first source that has them for devs.
func (d *deviceSampler) read(devs []result.TraceDevice, s *result.TraceSample) {
	s.DeviceSamples, s.ProgramDevices = d.chain.Read(targets(devs))
}

// sampler is what the trace records as its device sampler: the source that gave figures, or why none did,
// for the devices the program ended with (a program may end before a sample sees its contexts, or any).
func (d *deviceSampler) sampler(devs []result.TraceDevice) result.DeviceSource {
	return d.chain.Sampler(targets(devs))
}

// targets are the traced devices as the chain reads them: an index and a PCI bus id, where the layer saw one.
func targets(devs []result.TraceDevice) []sample.Target {
	ts := make([]sample.Target, len(devs))
	for i, dv := range devs {
		ts[i] = sample.Target{Index: dv.Index, PCIBusID: dv.PCIBusID}
	}
	return ts
}
