package markdown

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// WriteLargestMarkdown renders `largest` for a ticket: the headlines, the table, and every try.
func WriteLargestMarkdown(w io.Writer, j findings.JudgedLargest, _ render.Options) error {
	l := j.Largest()
	b := &strings.Builder{}
	fmt.Fprintf(b, "# The largest buffer: %s\n\n", render.MdText(l.Platform.Name))
	writeBullets(b, j.Verdict())
	b.WriteString("\n| device | max alloc | global | pattern | largest verified | x max alloc | first not verified |\n|--:|--:|--:|--:|--:|--:|:--|\n")
	for _, d := range l.Devices {
		for _, r := range table.LargestRows(d) {
			fmt.Fprintf(b, "| %d %s | %s | %s | %d B | %s | %s | %s |\n", d.Index, render.MdText(d.Name), units.Bytes(d.MaxAllocBytes), units.Bytes(d.GlobalMemBytes),
				r.PatternBytes, r.VerifiedText(), table.RatioOf(r.Verified, d.MaxAllocBytes), r.FirstNot)
		}
	}
	b.WriteString("\n" + detailsOpen("Every try") + "\n\n| device | size | pattern | outcome | code | seconds |\n|--:|--:|--:|:--|:--|--:|\n")
	for _, d := range l.Devices {
		for _, t := range d.Tries {
			code := ""
			if t.Code != 0 {
				code = fmt.Sprintf("%d (%s) at %s", t.Code, result.CodeName(t.Code), render.MdText(t.Call))
			}
			fmt.Fprintf(b, "| %d | %s | %d B | %s | %s | %.2f |\n", d.Index, units.Size(t.SizeBytes), t.PatternBytes, t.Outcome, code, t.Seconds)
		}
	}
	b.WriteString("\n</details>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeBullets writes a verdict's sentences as a Markdown list, each escaped: the headlines of largest,
// remedy and trace.
func writeBullets(w io.Writer, sentences []string) {
	for _, v := range sentences {
		fmt.Fprintf(w, "- %s\n", render.MdText(v))
	}
}
