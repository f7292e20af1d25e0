// Package judge is the one stage that says what a document means: one function per kind of document,
// each taking what was measured (or loaded) and returning the judged value that the renderers and the
// commands take. A judge function never writes into its input: what it stores (a verdict, a ranking, a
// job's limit) it stores in a copy, so an engine may go on writing a run while a checkpoint is judged, and
// a document judged twice says the same both times. The claims themselves are derived in package findings
// (a run's, a trace's, a search's) and package comparison (between runs); this package is where every
// command gets them from.
//
// The kinds that carry no verdict (the device listing, the environment, the plan of a dry run, the
// presets, the expectations of check --record) are rendered as they are and have no function here.
package judge

import (
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

// Run judges a probe run: its findings, the verdict and each job's limit (findings.Judge).
func Run(r *result.Run) findings.Judged { return findings.Judge(r) }

// Trace judges a traced program: the verdict and the limit (findings.JudgeTrace). interrupted says Ctrl-C
// ended the trace (the context the program ran under was cancelled): the judged trace says so, whatever
// the program's end said, and the trace itself is left as it is.
func Trace(t *result.Trace, interrupted bool) findings.JudgedTrace {
	if t != nil && interrupted && !t.Exit.Interrupted {
		cp := *t
		cp.Exit.Interrupted = true
		t = &cp
	}
	return findings.JudgeTrace(t)
}

// Largest judges a largest-buffer search: one headline per device (findings.JudgeLargest).
func Largest(l *result.Largest) findings.JudgedLargest { return findings.JudgeLargest(l) }

// Remedy judges a remedy search: its changes ranked against the baseline and the headline
// (findings.JudgeRemedy).
func Remedy(r *result.Remedy) findings.JudgedRemedy { return findings.JudgeRemedy(r) }

// RemedyJob is the remedy search's record of a one-job run: how far its job went and the limit the
// findings say ended it, from a judged copy of the run. The change, strategy and size are the caller's.
func RemedyJob(run *result.Run) result.RemedyJob {
	judged := findings.Judge(run)
	s := &judged.Run().Jobs[0]
	return result.RemedyJob{Flags: s.Flags, Variant: s.Variant, VariantSettings: s.VariantSettings, AllocationsOK: s.AllocationsOK,
		BytesOK: s.BytesOK, Outcome: s.Outcome, FirstFailure: s.FirstFailure, Reason: s.Reason, StopCause: s.StopCause,
		Limit: judged.Limit(s).Limit}
}

// Exchange judges a halo exchange: what its check found (findings.JudgeExchange).
func Exchange(e *result.ExchangeRun) findings.JudgedExchange { return findings.JudgeExchange(e) }

// Compare judges a run against a base run, job by job, at the tolerance (comparison.CompareJudged), with
// what ended each job as each run's own judgement finds it.
func Compare(base, next *result.Run, tolerance float64) *comparison.Comparison {
	return comparison.CompareJudged(base, next, tolerance, endedAt(base), endedAt(next))
}

// endedAt is the limit that ended each job of r, from a judged copy of it.
func endedAt(r *result.Run) comparison.EndedAt {
	judged := findings.Judge(r)
	return func(i int) result.Limit { return judged.Limit(&judged.Run().Jobs[i]).Limit }
}

// Merge judges the results a merger holds against each job's median at the tolerance (the merger is spent
// after: its rows move into the answer).
func Merge(m *comparison.FleetMerger, tolerance float64) *comparison.Fleet { return m.Fleet(tolerance) }

// CheckInterrupted is check's answer when Ctrl-C ended its run (r, nil where none began): nothing is
// judged, and it says how many of the planned jobs ran to their end.
func CheckInterrupted(r *result.Run, planned int) *comparison.Health {
	h := &comparison.Health{Interrupted: true, JobsPlanned: planned}
	if r != nil {
		for i := range r.Jobs {
			if !r.Jobs[i].Interrupted() {
				h.JobsDone++
			}
		}
	}
	return h
}

// Check holds a run to its expectations at the tolerance, within the time limit; took is how long the check
// took, which its answer says (comparison.CheckHealth).
func Check(e *result.Expectations, r *result.Run, tolerance float64, limit, took time.Duration) *comparison.Health {
	h := comparison.CheckHealth(e, r, tolerance, limit.Seconds())
	h.Seconds = took.Seconds()
	return h
}
