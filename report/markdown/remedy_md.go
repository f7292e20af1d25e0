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

// WriteRemedyMarkdown renders `remedy` for a ticket.
func WriteRemedyMarkdown(w io.Writer, judged findings.JudgedRemedy, _ render.Options) error {
	r := judged.Remedy()
	b := &strings.Builder{}
	fmt.Fprintf(b, "# What lifts the failure: %s\n\n", render.MdText(r.Platform.Name))
	writeBullets(b, judged.Verdict())
	b.WriteString("\n| change | strategy | size | flags | settings | outcome | buffers | bytes | gain |\n|:--|:--|--:|:--|:--|:--|--:|--:|--:|\n")
	for _, j := range append([]result.RemedyJob{r.Baseline}, r.Remedies...) {
		gain := fmt.Sprintf("%.2fx", j.Gain)
		if j.Interrupted() {
			gain = "-"
		}
		if j.Lifts {
			gain += " (lifts it)"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %d | %s | %s |\n", render.MdText(j.Change), j.Strategy, units.Size(j.SizeBytes), render.MdText(render.OrDash(j.Flags)),
			render.MdText(render.OrDash(strings.Join(result.Assignments(j.VariantSettings), " "))), table.RemedyOutcome(j), j.AllocationsOK, units.Bytes(j.BytesOK), gain)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
