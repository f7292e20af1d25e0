package markdown

import (
	"fmt"
	"io"

	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// WriteTraceMarkdown writes a trace for a bug ticket.
func WriteTraceMarkdown(w io.Writer, j findings.JudgedTrace, _ render.Options) error {
	t := j.Trace()
	cw := &render.ErrWriter{W: w}
	fmt.Fprintf(cw, "# clmemprobe trace\n\n%s\n\n", render.MdBlock(render.TraceCommand(t), "sh"))
	fmt.Fprintf(cw, "Way in: %s (asked: %s). Recorded by: %s. The program %s after %.2f s.\n\n", table.WayIn(t), t.Via, t.Interception, render.MdText(t.Exit.Description), t.Seconds)
	if t.WayInReason != "" {
		fmt.Fprintf(cw, "Why that way: %s.\n\n", render.MdText(t.WayInReason))
	}
	writeBullets(cw, j.Verdict())
	fmt.Fprint(cw, "\n| context | devices | created | live at failure | live at end | peak | failures |\n|--:|:--|--:|--:|--:|--:|--:|\n")
	for _, c := range t.Contexts {
		fmt.Fprintf(cw, "| %d | %s | %d (%s) | %s | %d (%s) | %s | %d |\n", c.Index, render.MdText(table.DeviceNames(t, c.Devices, c.DeviceCount)),
			c.BuffersCreated, units.Bytes(c.BytesCreated), table.LiveAtFailure(t, c.Index), c.LiveBuffers, units.Bytes(c.LiveBytes), units.Bytes(c.PeakBytes), c.Failures)
	}
	if f := t.FirstFailure; f != nil {
		fmt.Fprintf(cw, "\nFirst failure: %s, `%s`, %s (%d)", render.FailurePlace(f), f.Call, f.CodeName, f.Code)
		if f.SizeBytes > 0 {
			fmt.Fprintf(cw, ", %s, %s", units.Bytes(f.SizeBytes), f.Flags)
		}
		fmt.Fprintf(cw, ", at %.3f s.\n", f.Seconds)
	}
	if t.FirstFailure == nil {
		fmt.Fprintf(cw, "\n%s\n", render.MdText(table.TraceDeviceLine(t)))
	}
	fmt.Fprintf(cw, "\n%d allocation calls (%d failed), %d failed enqueues, %d records dropped.\n", t.Allocations, t.CreatesFailed, t.EnqueuesFailed, t.RecordsDropped)
	writeSitesMarkdown(cw, t)
	return cw.Err
}
