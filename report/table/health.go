package table

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// WriteHealthText is check's one line: the verdict, each job's threshold against the expected one, and the time.
func WriteHealthText(w io.Writer, h *comparison.Health, _ render.Options) error {
	if h.Interrupted {
		_, err := fmt.Fprintf(w, "clmemprobe check: INTERRUPTED (Ctrl-C) after %d of %d jobs: nothing is judged\n", h.JobsDone, h.JobsPlanned)
		return err
	}
	var parts []string
	for _, j := range h.Jobs {
		name := healthJobName(&j)
		if j.Healthy {
			parts = append(parts, fmt.Sprintf("%s %d (expected %d)", name, j.AllocationsOK, j.ExpectedAllocs))
		} else {
			parts = append(parts, fmt.Sprintf("%s: %s", name, render.Plain(j.Why)))
		}
	}
	verdict := "healthy"
	if !h.Healthy {
		verdict = "BELOW EXPECTATION"
	}
	notes := ""
	for _, n := range h.Notes {
		notes += "; " + render.Plain(n)
	}
	_, err := fmt.Fprintf(w, "clmemprobe check: %s: %s; %.1f s of %.0f s%s\n", verdict, strings.Join(parts, ", "), h.Seconds, h.Budget, notes)
	return err
}

// healthJobName names a job of a check the same way in the one line and in -v's lines: its strategy, size,
// flags other than the default, and "variant NAME" (a bare name could be read as a flag or a word).
func healthJobName(j *comparison.HealthJob) string {
	name := fmt.Sprintf("%s %s", j.Strategy, units.Size(j.SizeBytes))
	if j.Flags != result.FlagsName("") && j.Flags != "" {
		name += " " + render.Plain(j.Flags)
	}
	if j.Variant != result.DefaultVariant {
		name += " variant " + render.Plain(j.Variant)
	}
	return name
}

// WriteHealthJobs writes each job of a check on a line of its own, what check -v prints on stderr: the buffers
// it reached and how it ended, against the recorded ones, the tolerance, and the job's verdict with why.
func WriteHealthJobs(w io.Writer, h *comparison.Health) error {
	for _, j := range h.Jobs {
		name := healthJobName(&j)
		reached := "did not run"
		if j.Outcome != "" {
			reached = fmt.Sprintf("%d buffers (%s)", j.AllocationsOK, j.Outcome)
		}
		verdict := "healthy"
		if !j.Healthy {
			verdict = "below expectation: " + render.Plain(j.Why)
		}
		if _, err := fmt.Fprintf(w, "clmemprobe check: %s: %s, recorded %d (%s), tolerance %.3g%%: %s\n", name, reached,
			j.ExpectedAllocs, j.ExpectedOutcome, 100*h.Tolerance, verdict); err != nil {
			return err
		}
	}
	return nil
}
