package trace

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// fakeGPUs is a GPU source with a fixed reading, or none and why.
type fakeGPUs struct {
	reading *wire.GPUReading
	why     string
}

func (f fakeGPUs) Latest() *wire.GPUReading { return f.reading }
func (f fakeGPUs) Unavailable() string      { return f.why }

// The program of the fixture is pid 4242 (9 in the namespace NVML names it from, by its NStgid line); it
// holds one xe client on 0000:65:00.0 of 3 GiB of VRAM and 1 MiB of system memory.
func TestDeviceFiguresBySource(t *testing.T) {
	root := sample.Root{Proc: filepath.Join("testdata", "proc")}
	const pid, nsPID = 4242, 9
	devs := []result.TraceDevice{{Index: 0, PCIBusID: "0000:17:00.0"}, {Index: 1}, {Index: 2, PCIBusID: "0000:65:00.0"}}
	const gib = 1 << 30
	gpu := wire.GPUMemory{PCIBusID: "0000:17:00.1", UsedBytes: 10 * gib, TotalBytes: 80 * gib, FreeBytes: 70 * gib,
		Processes: []wire.GPUProcess{{PID: nsPID, Bytes: 6 * gib, Known: true}, {PID: 100, Bytes: 4 * gib, Known: true}}}
	untraced := wire.GPUMemory{PCIBusID: "0000:ca:00.0", UsedBytes: gib, TotalBytes: 80 * gib}
	nvml := &wire.GPUReading{Sampler: "NVML (test)", GPUs: []wire.GPUMemory{untraced, gpu}}
	listFailed := gpu
	listFailed.Processes, listFailed.ProcessesError = nil, "nvmlDeviceGetComputeRunningProcesses: NVML_ERROR_NO_PERMISSION (4)"
	const absent = "NVML: libnvidia-ml.so.1 not found"
	drm := uint64(3*gib + 1024<<10)
	tests := []struct {
		name        string
		gpus        GPUSource
		devs        []result.TraceDevice
		wantDevs    []result.DeviceSample
		wantProgram []result.TraceDeviceUse
		wantSampler string
	}{
		{"NVML: the traced GPU by PCI id (function aside), the program's share by its namespace id; a GPU not traced left out",
			fakeGPUs{reading: nvml}, devs, []result.DeviceSample{{Device: 0, UsedBytes: gpu.UsedBytes, FreeBytes: gpu.FreeBytes}},
			[]result.TraceDeviceUse{{Device: 0, Bytes: 6 * gib}}, "NVML (test)"},
		{"NVML without a process list: the device's use, not the program's", fakeGPUs{reading: &wire.GPUReading{Sampler: "NVML (test)", GPUs: []wire.GPUMemory{listFailed}}},
			devs, []result.DeviceSample{{Device: 0, UsedBytes: gpu.UsedBytes, FreeBytes: gpu.FreeBytes}}, nil, "NVML (test)"},
		{"NVML absent: the program's DRM fdinfo", fakeGPUs{why: absent}, devs, []result.DeviceSample{{Device: 2, UsedBytes: drm}},
			[]result.TraceDeviceUse{{Device: 2, Bytes: drm}}, "DRM fdinfo drm-total-* (the program's process)"},
		{"NVML sees none of the traced GPUs: DRM fdinfo", fakeGPUs{reading: &wire.GPUReading{GPUs: []wire.GPUMemory{untraced}}}, devs,
			[]result.DeviceSample{{Device: 2, UsedBytes: drm}}, []result.TraceDeviceUse{{Device: 2, Bytes: drm}}, "DRM fdinfo drm-total-* (the program's process)"},
		{"NVML not answered yet: nothing", fakeGPUs{}, devs, nil, nil,
			result.DeviceNotAvailable + "NVML: no reading came; DRM fdinfo: traced device 1 has no PCI bus id"},
		{"no PCI ids (PoCL's CPU devices): not measured, and why", fakeGPUs{why: absent}, []result.TraceDevice{{Index: 0}}, nil, nil,
			result.DeviceNotAvailable + absent + "; DRM fdinfo: traced device 0 has no PCI bus id"},
		{"no device yet", fakeGPUs{why: absent}, nil, nil, nil,
			result.DeviceNotAvailable + absent + "; DRM fdinfo: the program has no device the layer saw"},
	}
	for _, tc := range tests {
		d := newDeviceSampler(tc.gpus, root, pid)
		var s result.TraceSample
		d.read(tc.devs, &s)
		if !reflect.DeepEqual(s.DeviceSamples, tc.wantDevs) || !reflect.DeepEqual(s.ProgramDevices, tc.wantProgram) || string(d.sampler(tc.devs)) != tc.wantSampler {
			t.Errorf("%s:\n devices %+v, program %+v, sampler %q\n want %+v, %+v, %q", tc.name, s.DeviceSamples, s.ProgramDevices, d.sampler(tc.devs),
				tc.wantDevs, tc.wantProgram, tc.wantSampler)
		}
	}
}

// Once NVML has given figures, a trace keeps to it: when its child ends, later samples have no device
// figures rather than another source's.
func TestDeviceSourceKept(t *testing.T) {
	root := sample.Root{Proc: filepath.Join("testdata", "proc")}
	devs := []result.TraceDevice{{Index: 0, PCIBusID: "0000:65:00.0"}}
	src := &fakeGPUs{reading: &wire.GPUReading{Sampler: "NVML (test)", GPUs: []wire.GPUMemory{{PCIBusID: "0000:65:00.0", UsedBytes: 5}}}}
	d := newDeviceSampler(src, root, 4242)
	var first, later result.TraceSample
	d.read(devs, &first)
	src.reading, src.why = nil, "NVML: the GPU memory child hung"
	d.read(devs, &later)
	if len(first.DeviceSamples) != 1 || len(later.DeviceSamples) != 0 || d.sampler(devs) != "NVML (test)" {
		t.Errorf("first %+v, later %+v, sampler %q", first.DeviceSamples, later.DeviceSamples, d.sampler(devs))
	}
}
