package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
)

// The trace's table and Markdown show each measured device's memory at the first failure with the
// program's own share, or why device memory was not measured.
func TestTraceDeviceMemoryRendered(t *testing.T) {
	const gib = uint64(1) << 30
	code := 0
	tr := &result.Trace{Program: "./prog", Exit: result.TraceExit{Code: &code, Description: "exited with status 0"},
		Devices:      []result.TraceDevice{{Index: 0, Name: "GPU A", GlobalMemBytes: 80 * gib}},
		Contexts:     []result.TraceContext{{Index: 0, Devices: []int{0}, DeviceCount: 1}},
		FirstFailure: &result.TraceFailure{Index: 7, Call: "clCreateBuffer", Context: 0, Devices: []int{0}},
		Samples: []result.TraceSample{{Sample: result.Sample{Index: 7, DeviceSamples: []result.DeviceSample{{Device: 0, UsedBytes: 79 * gib}}},
			ProgramDevices: []result.TraceDeviceUse{{Device: 0, Bytes: 77 * gib}}}},
		DeviceSampler: "NVML (test)"}
	want := "device 0 " + units.Bytes(79*gib) + " used of " + units.Bytes(80*gib) + ", the program's own " + units.Bytes(77*gib)
	const why = "NVML: libnvidia-ml.so.1 not found"
	for _, tc := range []struct {
		name    string
		sampler string
		want    string
	}{{"measured", "NVML (test)", "Device memory at the failure (after 7 allocation calls, 0.00 s; NVML (test)): " + want}, {"not measured", result.DeviceNotAvailable + why, "Device memory not measured: " + why}} {
		tr.DeviceSampler = tc.sampler
		for name, render := range map[string]func(*bytes.Buffer) error{
			"table":    func(b *bytes.Buffer) error { return writeTraceTable(b, tr, Options{}) },
			"markdown": func(b *bytes.Buffer) error { return writeTraceMarkdown(b, tr, Options{}) },
		} {
			var b bytes.Buffer
			if err := render(&b); err != nil || !strings.Contains(b.String(), tc.want) {
				t.Errorf("%s, %s: %v\n%s\nwant %q", tc.name, name, err, b.String(), tc.want)
			}
		}
	}
}
