package report

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

// writeTraceTable writes a trace for a terminal: what was traced and how, the verdict, the contexts with
// their buffers, the first failure's live buffers per context, and how the program ended.
func writeTraceTable(w io.Writer, j findings.JudgedTrace, _ Options) error {
	t := j.Trace()
	cw := &render.ErrWriter{W: w}
	fmt.Fprintf(cw, "Trace of %s (way in: %s)\n\n", render.Plain(render.TraceCommand(t)), wayIn(t))
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
			liveAtFailure(t, c.Index), c.LiveBuffers, units.Bytes(c.PeakBytes), c.Failures)
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
		fmt.Fprintf(cw, "\n%s\n", render.Plain(traceDeviceLine(t)))
	}
	if t.WayInReason != "" {
		fmt.Fprintf(cw, "\nThe layer went in as %s: %s.\n", t.WayIn, render.Plain(t.WayInReason))
	}
	fmt.Fprintf(cw, "\n%d allocation calls (%d failed), %d failed enqueues, %d records dropped; the program %s after %.2f s.\n",
		t.Allocations, t.CreatesFailed, t.EnqueuesFailed, t.RecordsDropped, render.Plain(t.Exit.Description), t.Seconds)
	return cw.Err
}

// writeTraceMarkdown writes a trace for a bug ticket.
func writeTraceMarkdown(w io.Writer, j findings.JudgedTrace, _ Options) error {
	t := j.Trace()
	cw := &render.ErrWriter{W: w}
	fmt.Fprintf(cw, "# clmemprobe trace\n\n%s\n\n", render.MdBlock(render.TraceCommand(t), "sh"))
	fmt.Fprintf(cw, "Way in: %s (asked: %s). Recorded by: %s. The program %s after %.2f s.\n\n", wayIn(t), t.Via, t.Interception, render.MdText(t.Exit.Description), t.Seconds)
	if t.WayInReason != "" {
		fmt.Fprintf(cw, "Why that way: %s.\n\n", render.MdText(t.WayInReason))
	}
	for _, v := range j.Verdict() {
		fmt.Fprintf(cw, "- %s\n", render.MdText(v))
	}
	fmt.Fprint(cw, "\n| context | devices | created | live at failure | live at end | peak | failures |\n|--:|:--|--:|--:|--:|--:|--:|\n")
	for _, c := range t.Contexts {
		fmt.Fprintf(cw, "| %d | %s | %d (%s) | %s | %d (%s) | %s | %d |\n", c.Index, render.MdText(deviceNames(t, c.Devices, c.DeviceCount)),
			c.BuffersCreated, units.Bytes(c.BytesCreated), liveAtFailure(t, c.Index), c.LiveBuffers, units.Bytes(c.LiveBytes), units.Bytes(c.PeakBytes), c.Failures)
	}
	if f := t.FirstFailure; f != nil {
		fmt.Fprintf(cw, "\nFirst failure: %s, `%s`, %s (%d)", render.FailurePlace(f), f.Call, f.CodeName, f.Code)
		if f.SizeBytes > 0 {
			fmt.Fprintf(cw, ", %s, %s", units.Bytes(f.SizeBytes), f.Flags)
		}
		fmt.Fprintf(cw, ", at %.3f s.\n", f.Seconds)
	}
	if t.FirstFailure == nil {
		fmt.Fprintf(cw, "\n%s\n", render.MdText(traceDeviceLine(t)))
	}
	fmt.Fprintf(cw, "\n%d allocation calls (%d failed), %d failed enqueues, %d records dropped.\n", t.Allocations, t.CreatesFailed, t.EnqueuesFailed, t.RecordsDropped)
	writeSitesMarkdown(cw, t)
	return cw.Err
}

// wayIn is the way the layer went into the program; a trace made before the tool chose one way says what
// recorded the calls.
func wayIn(t *result.Trace) string {
	if t.WayIn != "" {
		return t.WayIn
	}
	return t.Interception
}

// deviceNames lists a context's devices by index and name; count is the context's own, which may exceed
// the devices the layer listed.
func deviceNames(t *result.Trace, devs []int, count int) string {
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

func liveAtFailure(t *result.Trace, ctx int) string {
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
