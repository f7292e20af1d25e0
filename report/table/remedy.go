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

// WriteRemedyTable renders `remedy` for a terminal: the headline, then the baseline and every change, in
// their ranking.
func WriteRemedyTable(w io.Writer, judged findings.JudgedRemedy, opts render.Options) error {
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", render.Plain(j.Change), j.Strategy, units.Size(j.SizeBytes), render.Plain(render.OrDash(j.Flags)), RemedyOutcome(j),
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

// RemedyOutcome is a job's outcome with its failure's code.
func RemedyOutcome(j result.RemedyJob) string {
	if j.Interrupted() {
		return "interrupted"
	}
	if f := j.FirstFailure; f != nil && j.Outcome == result.OutcomeFailed {
		return fmt.Sprintf("failed %d", f.Code)
	}
	return string(j.Outcome)
}
