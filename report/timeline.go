package report

import (
	"io"

	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/timeline"
)

// writeTimeline renders a run as a timeline in Chrome's trace event format (report/timeline): what run
// --out writes to timeline.json, for Perfetto and chrome://tracing.
func writeTimeline(w io.Writer, j findings.Judged, _ Options) error {
	return timeline.WriteRun(w, j.Run())
}

// writeTraceTimeline renders a traced program as a timeline, as trace --out writes it to timeline.json.
func writeTraceTimeline(w io.Writer, j findings.JudgedTrace, _ Options) error {
	return timeline.WriteTrace(w, j.Trace())
}
