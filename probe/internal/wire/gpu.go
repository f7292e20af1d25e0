package wire

import "time"

// GPUMemorySpec is the GPU memory child's job: read every GPU NVML sees, every Interval, until it is
// ended. It runs for `trace`, whose parent must not load NVML itself (a vendor library, like a runtime).
type GPUMemorySpec struct {
	Interval time.Duration `json:"interval"`
}

// GPUReading is one reading of every GPU the child's library sees (EventGPU), keyed by PCI bus id: the
// parent maps them to its own devices, and leaves out those it has none for.
type GPUReading struct {
	// Sampler names the source, as a run's DeviceSampler names it.
	Sampler string      `json:"sampler"`
	GPUs    []GPUMemory `json:"gpus"`
}

// GPUMemory is one GPU's memory and the processes holding it.
type GPUMemory struct {
	PCIBusID   string `json:"pci"` // "dddd:bb:dd.f", lower case
	UsedBytes  uint64 `json:"used"`
	TotalBytes uint64 `json:"total"`
	FreeBytes  uint64 `json:"free"`
	// Processes are NVML's compute and graphics processes of the GPU, with the memory each holds where
	// NVML tells it; ProcessesError says why the list is missing.
	Processes      []GPUProcess `json:"procs,omitempty"`
	ProcessesError string       `json:"procs_error,omitempty"`
}

// GPUProcess is one process on a GPU; Known is false where NVML could not tell its memory.
type GPUProcess struct {
	PID   uint32 `json:"pid"`
	Bytes uint64 `json:"bytes,omitempty"`
	Known bool   `json:"known,omitempty"`
}

// GPUMemoryAnswer is the GPU memory child's last word: why it does not measure (the library is absent, it
// failed to initialise), in one line as a run's device sampler reason reads ("NVML: libnvidia-ml.so.1 not
// found"). A child that measures sends no answer: it is ended when the trace ends.
type GPUMemoryAnswer struct {
	Unavailable string `json:"unavailable"`
}
