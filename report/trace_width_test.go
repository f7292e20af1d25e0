package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// The trace's table fits 80 columns whatever the devices are called and however many buffers the program
// made (the H200's 142627 buffers of 1 MiB, a context over 16 devices): devices by index in the table,
// their names once in the line under it; a run of same-named devices is one range.
func TestTraceTableFits80Columns(t *testing.T) {
	const gib = uint64(1) << 30
	code := 0
	var devs []result.TraceDevice
	var all []int
	for i := 0; i < 16; i++ {
		devs = append(devs, result.TraceDevice{Index: i, Name: "pthread-skylake-avx512-Intel(R) Xeon(R) Processor"})
		all = append(all, i)
	}
	tr := &result.Trace{Program: "./prog", Exit: result.TraceExit{Code: &code, Description: "exited with status 0"}, Devices: devs,
		Contexts: []result.TraceContext{
			{Index: 0, Devices: all, DeviceCount: 18, BuffersCreated: 142627, BytesCreated: 139 * gib, LiveBuffers: 142627, LiveBytes: 139 * gib, PeakBytes: 139 * gib, Failures: 1},
			{Index: 1, Devices: []int{3, 5, 6}, DeviceCount: 3, BuffersCreated: 7, PeakBytes: 7 << 20},
		},
		FirstFailure: &result.TraceFailure{Index: 142627, Call: "clEnqueueFillBuffer", Context: 0, Devices: all,
			Live: []result.TraceLive{{Context: 0, Buffers: 142627, Bytes: 139 * gib}}}}
	var b bytes.Buffer
	if err := table.WriteTraceTable(&b, findings.JudgeTrace(tr), Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	head := strings.Index(out, "context  ")
	if head < 0 {
		t.Fatalf("no table:\n%s", out)
	}
	table, _, _ := strings.Cut(out[head:], "\nDevices: ")
	for _, line := range strings.Split(table, "\n") {
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("a table line of %d columns: %q", n, line)
		}
	}
	// The device ranges ("0-15,+2", "3,5,6") and the names once under the table are the golden file's.
	golden(t, "trace-16-devices", b.Bytes())
}
