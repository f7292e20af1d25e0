package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// ticketRun is a completed run of four strategies on two devices of one model, none failing, one with a
// limit whose evidence holds a large byte count and an unknown key, as a user's machine records it.
func ticketRun() *result.Run {
	const model = "Model X GPU"
	const sampler = "not available: no sampler for these devices"
	r := &result.Run{Command: []string{"/tmp/u1/clone/bin/clmemprobe", "run", "--out", "/tmp/u1/out", "--touch", "fill", "--out=/tmp/u1/o2", "--force"},
		Config:  result.Config{Touch: result.TouchFill, MaxAllocs: 100},
		Devices: []result.Device{{Index: 0, Name: model, GlobalMemBytes: 8 << 30}, {Index: 1, Name: model, GlobalMemBytes: 8 << 30}}}
	for _, st := range result.Strategies {
		r.Jobs = append(r.Jobs, result.JobResult{Strategy: st, Devices: []int{0, 1}, SizeBytes: 1 << 20,
			Outcome: result.OutcomeCompleted, AllocationsOK: 100, BytesOK: 100 << 20, DeviceSampler: sampler})
	}
	r.Jobs[1].Outcome = result.OutcomeStopped
	return r
}

func renderMarkdown(t *testing.T, r *result.Run, opts Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := RenderWith(&b, "markdown", judged(r), opts); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The report names the model once with its count, heads the table by what it holds, writes evidence in
// words and units, says a sentence every strategy shares once, and reproduces without the user's paths.
func TestMarkdownReadsAsATicket(t *testing.T) {
	r := ticketRun()
	md := renderMarkdown(t, r, Options{})
	model := r.Devices[0].Name
	if want := fmt.Sprintf("# clmemprobe report: %dx %s\n", len(r.Devices), model); !strings.HasPrefix(md, want) {
		t.Errorf("title should be %q:\n%s", want, md[:strings.IndexByte(md, '\n')])
	}
	sampler := strings.TrimPrefix(string(r.Jobs[0].DeviceSampler), "not available: ")
	if n := strings.Count(md, sampler); n != 1 {
		t.Errorf("the device sampler's sentence, shared by %d strategies, appears %d times; want once", len(r.Jobs), n)
	}
	// The rest (headed as a run without a failure, the reproduce line without the user's paths, --out and
	// --force) is the golden file's.
	golden(t, "markdown-ticket", []byte(md))
}

// The devices are listed as the runtime described them under its own settings; where a variant changes
// the runtime's settings, the Devices section says the variant's devices may differ and are not recorded.
func TestMarkdownDevicesSayWhichSettingsTheyWereListedUnder(t *testing.T) {
	r := ticketRun()
	const variant = "pocl-limit"
	r.Config.Variants = []result.Variant{{Name: result.DefaultVariant}, {Name: variant, Settings: map[string]string{"POCL_MEMORY_LIMIT": "1"}}}
	md := renderMarkdown(t, r, Options{})
	devices := md[strings.Index(md, "## Devices"):]
	devices = devices[:strings.Index(devices, "## Reproduce")]
	// The caveat for the variant is the golden file's; markdown-ticket, the same run without variants,
	// holds none.
	golden(t, "markdown-devices-variant-caveat", []byte(devices))
}

// A job that recorded its devices' sizes under a variant that changed them gets a line saying so, in the
// variant's words and units, and no caveat that the sizes were not recorded.
func TestMarkdownDevicesUnderAVariant(t *testing.T) {
	r := ticketRun()
	const variant = "limit-1g"
	r.Config.Variants = []result.Variant{{Name: result.DefaultVariant}, {Name: variant, Settings: map[string]string{"POCL_MEMORY_LIMIT": "1"}}}
	job := r.Jobs[0]
	job.Variant = variant
	global, maxAlloc := uint64(1)<<30, uint64(256)<<20
	job.DeviceSizes = []result.DeviceSize{{Device: r.Devices[0].Index, GlobalMemBytes: global, MaxAllocBytes: maxAlloc}}
	r.Jobs = append(r.Jobs, job)
	md := renderMarkdown(t, r, Options{})
	want := fmt.Sprintf("under variant %s, device %d reports global memory %s, max allocation %s", variant, r.Devices[0].Index, units.Bytes(global), units.Bytes(maxAlloc))
	devices := md[strings.Index(md, "## Devices"):]
	devices = devices[:strings.Index(devices, "## Reproduce")]
	if got := strings.Count(devices, want); got != 1 {
		t.Errorf("the Devices section should say %q once:\n%s", want, devices)
	}
	golden(t, "markdown-devices-variant-sizes", []byte(devices)) // and no caveat
}
