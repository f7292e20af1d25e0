package report

import (
	"bytes"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/markdown"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// The trace's table and Markdown show each measured device's memory with the program's own share, or why
// device memory was not measured: at the last sample for a trace without a failure; for one with a failure
// the verdict says it (findings.DeriveTrace), and the renderers do not say it a second time.
func TestTraceDeviceMemoryRendered(t *testing.T) {
	const gib = uint64(1) << 30
	code := 0
	tr := &result.Trace{Program: "./prog", Exit: result.TraceExit{Code: &code, Description: "exited with status 0"},
		Devices:  []result.TraceDevice{{Index: 0, Name: "GPU A", GlobalMemBytes: 80 * gib}},
		Contexts: []result.TraceContext{{Index: 0, Devices: []int{0}, DeviceCount: 1}},
		Samples: []result.TraceSample{{Sample: result.Sample{Index: 7, DeviceSamples: []result.DeviceSample{{Device: 0, UsedBytes: 79 * gib}}},
			ProgramDevices: []result.TraceDeviceUse{{Device: 0, Bytes: 77 * gib}}}},
		DeviceSampler: "NVML (test)"}
	const why = "NVML: libnvidia-ml.so.1 not found"
	renderers := map[string]func(*bytes.Buffer) error{
		"table":    func(b *bytes.Buffer) error { return table.WriteTraceTable(b, findings.JudgeTrace(tr), Options{}) },
		"markdown": func(b *bytes.Buffer) error { return markdown.WriteTraceMarkdown(b, findings.JudgeTrace(tr), Options{}) },
	}
	for _, tc := range []struct {
		name    string
		sampler string
		failure *result.TraceFailure
		want    string
	}{
		// The golden files: the last sample's 79 of 80 GiB used and the program's own 77 GiB, read by NVML;
		// "not measured" and why; at a failure, nothing (the verdict says it).
		{"measured", "NVML (test)", nil, "trace-device-memory.measured"},
		{"not measured", result.DeviceNotAvailable + why, nil, "trace-device-memory.not-measured"},
		{"at a failure, the verdict's", "NVML (test)", &result.TraceFailure{Index: 7, Call: "clCreateBuffer", Devices: []int{0}}, "trace-device-memory.at-failure"},
	} {
		tr.DeviceSampler, tr.FirstFailure = result.DeviceSource(tc.sampler), tc.failure
		for name, render := range renderers {
			var b bytes.Buffer
			err := render(&b)
			if err != nil {
				t.Fatalf("%s, %s: %v", tc.name, name, err)
			}
			golden(t, tc.want+"."+name, b.Bytes())
		}
	}
}
