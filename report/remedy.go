package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

// writeRemedyTable renders `remedy` for a terminal: the headline, then the baseline and every change, in
// their ranking.
func writeRemedyTable(w io.Writer, judged findings.JudgedRemedy, opts Options) error {
	r := judged.Remedy()
	cw := &errWriter{w: w}
	fmt.Fprintf(cw, "clmemprobe remedy: platform %s, touch %s\n\n", plain(r.Platform.Name), r.Touch)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", plain(j.Change), j.Strategy, units.Size(j.SizeBytes), plain(OrDash(j.Flags)), remedyOutcome(j),
			j.AllocationsOK, units.Bytes(j.BytesOK), gain)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(cw)
	for _, v := range judged.Verdict() {
		fmt.Fprintln(cw, wrapWords("- ", plain(v), opts.Width))
	}
	return cw.err
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
	fmt.Fprintf(b, "# What lifts the failure: %s\n\n", mdText(r.Platform.Name))
	for _, v := range judged.Verdict() {
		fmt.Fprintf(b, "- %s\n", mdText(v))
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
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %d | %s | %s |\n", mdText(j.Change), j.Strategy, units.Size(j.SizeBytes), mdText(OrDash(j.Flags)),
			mdText(OrDash(strings.Join(result.Assignments(j.VariantSettings), " "))), remedyOutcome(j), j.AllocationsOK, units.Bytes(j.BytesOK), gain)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
