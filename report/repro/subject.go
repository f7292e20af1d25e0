package repro

import (
	"fmt"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
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

// ReproPrints says what repro.c prints when it is run, for the job it repeats (ReproSubject's): a failed
// call in the report's words with clmemprobe's record beside it; "no failure" at the budget; and for a job
// that no failed call ended (a kill, the host guard, which repro.c does not have), only its progress lines,
// so that where it is killed again its last line says how far it got.
func ReproPrints(j findings.Judged) (string, error) {
	s, err := ReproJob(j, "", "", "")
	switch {
	case err != nil:
		return "", err
	case s.Outcome == result.OutcomeFailed && s.FirstFailure != nil:
		return "It prints the failed call in the same words as the report, and what clmemprobe recorded beside it.", nil
	case s.Outcome == result.OutcomeCompleted:
		return fmt.Sprintf("It prints a progress line every %s and \"no failure in %d buffers\" at the end, as clmemprobe recorded.", progressWords(s), s.AllocationsOK), nil
	}
	by := ""
	if s.GuardStopped() {
		by = " by clmemprobe's host guard, which repro.c does not have"
	}
	return fmt.Sprintf("It prints a progress line every %s. No call failed in the run: clmemprobe recorded that the loop %s after %s buffers%s (the comment at the top of repro.c). Where a signal ends it (the OOM killer's SIGKILL: the shell says \"Killed\", exit status 137), its last progress line says how far it got.",
		progressWords(s), render.EndedVerb(s.Outcome), render.Made(s), by), nil
}

// progressWords is how often repro.c prints its progress: "16 buffers (16 MiB)".
func progressWords(s *result.JobResult) string {
	n := progressEvery(s.SizeBytes, s.AllocationsOK)
	return fmt.Sprintf("%s (%s)", units.Counted(n, "buffer"), units.Size(n*s.SizeBytes))
}
