package table

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// WriteTraceTable writes a trace for a terminal: what was traced and how, the verdict, the contexts with
// their buffers, the first failure's live buffers per context, and how the program ended.
func WriteTraceTable(w io.Writer, j findings.JudgedTrace, _ render.Options) error {
	t := j.Trace()
	cw := &render.ErrWriter{W: w}
	fmt.Fprintf(cw, "Trace of %s (way in: %s)\n\n", render.Plain(render.TraceCommand(t)), WayIn(t))
	for _, v := range j.Verdict() {
		fmt.Fprintln(cw, render.Plain(v))
	}
	fmt.Fprintln(cw)
	// Fits 80 columns: devices by index (their names in the line below), counts where the peak gives the
	// bytes; the Markdown has every figure.
	tw := tabwriter.NewWriter(cw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "context\tdevices\tcreated\tlive at failure\tlive at end\tpeak\tfailed")
	for _, c := range t.Contexts {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d\t%s\t%d\n", c.Index, deviceIndices(c.Devices, c.DeviceCount), c.BuffersCreated,
			LiveAtFailure(t, c.Index), c.LiveBuffers, units.Bytes(c.PeakBytes), c.Failures)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if legend := deviceLegend(t); legend != "" {
		fmt.Fprintf(cw, "Devices: %s.\n", render.Plain(legend))
	}
	if err := writeSitesTable(cw, t); err != nil {
		return err
	}
	if t.FirstFailure == nil {
		// At a failure the verdict says what the devices held (findings.DeriveTrace): said once.
		fmt.Fprintf(cw, "\n%s\n", render.Plain(TraceDeviceLine(t)))
	}
	if t.WayInReason != "" {
		fmt.Fprintf(cw, "\nThe layer went in as %s: %s.\n", t.WayIn, render.Plain(t.WayInReason))
	}
	fmt.Fprintf(cw, "\n%d allocation calls (%d failed), %d failed enqueues, %d records dropped; the program %s after %.2f s.\n",
		t.Allocations, t.CreatesFailed, t.EnqueuesFailed, t.RecordsDropped, render.Plain(t.Exit.Description), t.Seconds)
	return cw.Err
}

// WayIn is the way the layer went into the program; a trace made before the tool chose one way says what
// recorded the calls.
func WayIn(t *result.Trace) string {
	if t.WayIn != "" {
		return t.WayIn
	}
	return t.Interception
}

// DeviceNames lists a context's devices by index and name; count is the context's own, which may exceed
// the devices the layer listed.
func DeviceNames(t *result.Trace, devs []int, count int) string {
	var parts []string
	for _, d := range devs {
		if d >= 0 && d < len(t.Devices) && t.Devices[d].Name != "" {
			parts = append(parts, fmt.Sprintf("%d %s", d, t.Devices[d].Name))
		} else {
			parts = append(parts, fmt.Sprint(d))
		}
	}
	if count > len(devs) {
		parts = append(parts, fmt.Sprintf("+%d more", count-len(devs)))
	}
	return strings.Join(parts, ", ")
}

// deviceIndices lists a context's devices by index, runs of consecutive ones as ranges ("0-15"); count is
// the context's own, which may exceed the devices the layer listed.
func deviceIndices(devs []int, count int) string {
	var parts []string
	for i := 0; i < len(devs); {
		j := i
		for j+1 < len(devs) && devs[j+1] == devs[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, fmt.Sprint(devs[i]))
		case j == i+1:
			parts = append(parts, fmt.Sprint(devs[i]), fmt.Sprint(devs[j]))
		default:
			parts = append(parts, fmt.Sprintf("%d-%d", devs[i], devs[j]))
		}
		i = j + 1
	}
	if count > len(devs) {
		parts = append(parts, fmt.Sprintf("+%d", count-len(devs)))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

// deviceLegend names the trace's devices by index, one run of devices with the same name said once
// ("0-1 pthread-haswell-AMD EPYC").
func deviceLegend(t *result.Trace) string {
	var parts []string
	for i := 0; i < len(t.Devices); {
		j := i
		for j+1 < len(t.Devices) && t.Devices[j+1].Name == t.Devices[i].Name && t.Devices[j+1].Index == t.Devices[j].Index+1 {
			j++
		}
		name := t.Devices[i].Name
		if name == "" {
			name = "(no name)"
		}
		if j == i {
			parts = append(parts, fmt.Sprintf("%d %s", t.Devices[i].Index, name))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d %s", t.Devices[i].Index, t.Devices[j].Index, name))
		}
		i = j + 1
	}
	return strings.Join(parts, "; ")
}

func LiveAtFailure(t *result.Trace, ctx int) string {
	if t.FirstFailure == nil {
		return "-"
	}
	for _, l := range t.FirstFailure.Live {
		if l.Context == ctx {
			return fmt.Sprintf("%d (%s)", l.Buffers, units.Bytes(l.Bytes))
		}
	}
	return "0"
}
