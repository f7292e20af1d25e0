package table

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// WriteLargestTable renders `largest` for a terminal: the headlines, then per device and pattern size the
// largest verified buffer and the first try that was not; with AllFindings every try.
func WriteLargestTable(w io.Writer, j findings.JudgedLargest, opts render.Options) error {
	l := j.Largest()
	cw := &render.ErrWriter{W: w}
	fmt.Fprintf(cw, "clmemprobe largest: platform %s\n\n", render.Plain(l.Platform.Name))
	tw := tabwriter.NewWriter(cw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "device\tmax alloc\tglobal\tpattern\tlargest verified\tx max alloc\tfirst not verified")
	for _, d := range l.Devices {
		for _, r := range LargestRows(d) {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d B\t%s\t%s\t%s\n", d.Index, units.Bytes(d.MaxAllocBytes), units.Bytes(d.GlobalMemBytes), r.PatternBytes,
				r.VerifiedText(), RatioOf(r.Verified, d.MaxAllocBytes), r.FirstNot)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(cw)
	for _, v := range j.Verdict() {
		fmt.Fprintln(cw, wrapWords("- ", render.Plain(v), opts.Width))
	}
	if opts.AllFindings {
		fmt.Fprintln(cw)
		writeTries(cw, l)
	}
	return cw.Err
}

// writeTries writes every try, in the order they ran.
func writeTries(w io.Writer, l *result.Largest) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "device\tsize\tpattern\toutcome\tcode\tseconds\tfill seconds")
	for _, d := range l.Devices {
		for _, t := range d.Tries {
			code := "-"
			if t.Code != 0 {
				code = fmt.Sprintf("%d at %s", t.Code, t.Call)
			}
			fmt.Fprintf(tw, "%d\t%s\t%d B\t%s\t%s\t%.2f\t%.3f\n", d.Index, units.Size(t.SizeBytes), t.PatternBytes, t.Outcome, code, t.Seconds, t.FillSeconds)
		}
	}
	_ = tw.Flush()
}

// LargestRow is one row of largest's table: a pattern size, the largest buffer verified with it, and the
// first size that was not.
type LargestRow struct {
	PatternBytes int
	Verified     uint64
	AtLeast      bool // the search with this pattern was interrupted: Verified is a lower bound
	FirstNot     string
}

// VerifiedText is the row's largest verified buffer: "at least" it where the search was interrupted.
func (r LargestRow) VerifiedText() string {
	switch {
	case r.AtLeast && r.Verified == 0:
		return "none yet"
	case r.AtLeast:
		return "at least " + units.Size(r.Verified)
	}
	return units.Size(r.Verified)
}

// LargestRows are device d's rows: one per pattern whose search ran to its end, then, where the search was
// interrupted, the pattern it was cut in, with what its tries verified before (a lower bound) and the try
// the interrupt ended (before, an interrupted search printed no row at all beside a verdict of 2 GiB).
func LargestRows(d result.LargestDevice) []LargestRow {
	var rows []LargestRow
	done := map[int]bool{}
	for _, p := range d.Patterns {
		rows = append(rows, LargestRow{PatternBytes: p.PatternBytes, Verified: p.LargestVerifiedBytes, FirstNot: FirstNotVerified(d, p.PatternBytes)})
		done[p.PatternBytes] = true
	}
	if !d.Interrupted {
		return rows
	}
	var cut *LargestRow
	for _, t := range d.Tries {
		switch {
		case done[t.PatternBytes]:
			continue
		case cut == nil:
			cut = &LargestRow{PatternBytes: t.PatternBytes, AtLeast: true, FirstNot: "interrupted"}
		case t.PatternBytes != cut.PatternBytes:
			continue
		}
		if t.Outcome == result.TryVerified {
			cut.Verified = max(cut.Verified, t.SizeBytes)
		}
		if t.Outcome == result.TryInterrupted {
			cut.FirstNot = units.Size(t.SizeBytes) + " interrupted"
		}
	}
	if cut != nil {
		rows = append(rows, *cut)
	}
	return rows
}

func RatioOf(v, maxAlloc uint64) string {
	if maxAlloc == 0 || v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", float64(v)/float64(maxAlloc))
}

// FirstNotVerified is the smallest size that did not verify with a pattern, and how it ended.
func FirstNotVerified(d result.LargestDevice, pattern int) string {
	var first *result.LargestTry
	for i, t := range d.Tries {
		if t.PatternBytes == pattern && t.Outcome != result.TryVerified && t.Outcome.Settled() && (first == nil || t.SizeBytes < first.SizeBytes) {
			first = &d.Tries[i]
		}
	}
	if first == nil {
		return "none"
	}
	s := fmt.Sprintf("%s %s", units.Size(first.SizeBytes), first.Outcome)
	if first.Code != 0 {
		s += fmt.Sprintf(" (%d)", first.Code)
	}
	return s
}
