package repro

import (
	"fmt"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// ReproSubject says what the C reproducer of a run repeats, in the run's own terms: the first failure of
// the job it follows, or, where that job did not fail, its loop and how it ended. The error says why there
// is no reproducer.
func ReproSubject(j findings.Judged) (string, error) {
	s, err := ReproJob(j, "", "", "")
	switch {
	case err != nil:
		return "", err
	case s.Outcome == result.OutcomeFailed:
		return fmt.Sprintf("the first failure of %s", s.Strategy), nil
	case s.Outcome == result.OutcomeCompleted:
		return fmt.Sprintf("the loop of %s, which reached its budget of %d buffers without a failure", s.Strategy, s.AllocationsOK), nil
	}
	return fmt.Sprintf("the loop of %s, which %s after %s buffers", s.Strategy, render.EndedVerb(s.Outcome), render.Made(s)), nil
}
