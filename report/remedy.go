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

// writeRemedyTable renders `remedy` for a terminal: the headline, then the baseline and every change, in
// their ranking.
func writeRemedyTable(w io.Writer, judged findings.JudgedRemedy, opts Options) error {
	r := judged.Remedy()
	cw := &render.ErrWriter{W: w}
	fmt.Fprintf(cw, "clmemprobe remedy: platform %s, touch %s\n\n", render.Plain(r.Platform.Name), r.Touch)
	tw := tabwriter.NewWriter(cw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "change\tstrategy\tsize\tflags\toutcome\tbuffers\tbytes\tgain")
	for _, j := range append([]result.RemedyJob{r.Baseline}, r.Remedies...) {
		gain := fmt.Sprintf("%.2fx", j.Gain)
		if j.Change == r.Baseline.Change && j.Gain == 0 || j.Interrupted() {
			gain = "-"
		}
		if j.Lifts {
			gain += " lifts it"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", render.Plain(j.Change), j.Strategy, units.Size(j.SizeBytes), render.Plain(render.OrDash(j.Flags)), remedyOutcome(j),
			j.AllocationsOK, units.Bytes(j.BytesOK), gain)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(cw)
	for _, v := range judged.Verdict() {
		fmt.Fprintln(cw, wrapWords("- ", render.Plain(v), opts.Width))
	}
	return cw.Err
}

// remedyOutcome is a job's outcome with its failure's code.
func remedyOutcome(j result.RemedyJob) string {
	if j.Interrupted() {
		return "interrupted"
	}
	if f := j.FirstFailure; f != nil && j.Outcome == result.OutcomeFailed {
		return fmt.Sprintf("failed %d", f.Code)
	}
	return string(j.Outcome)
}

// writeRemedyMarkdown renders `remedy` for a ticket.
func writeRemedyMarkdown(w io.Writer, judged findings.JudgedRemedy, _ Options) error {
	r := judged.Remedy()
	b := &strings.Builder{}
	fmt.Fprintf(b, "# What lifts the failure: %s\n\n", render.MdText(r.Platform.Name))
	for _, v := range judged.Verdict() {
		fmt.Fprintf(b, "- %s\n", render.MdText(v))
	}
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
			render.MdText(render.OrDash(strings.Join(result.Assignments(j.VariantSettings), " "))), remedyOutcome(j), j.AllocationsOK, units.Bytes(j.BytesOK), gain)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
