package findings

import (
	"encoding/json"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Judged is a run with what its numbers mean: the findings (the headline first), the verdict's sentences
// and each job's limit. Judge is the one function that makes one, and every renderer of a run takes one,
// so no renderer can show a verdict that a run's numbers no longer support (a saved run.json's stored
// verdict, a checkpoint's, one made by an older build): what a run says is derived again each time.
type Judged struct {
	run      *result.Run // a copy of the judged run with the findings stored, as run.json writes them
	findings []result.Finding
	limits   []result.JobLimit
}

// Judge derives the run's findings (Derive) and returns them with the run; it leaves the run as it is, so a
// checkpoint can judge a run the engine is still writing.
func Judge(r *result.Run) Judged {
	if r == nil {
		r = &result.Run{}
	}
	fs, limits := Derive(r)
	return Judged{run: r.WithFindings(fs, limits), findings: fs, limits: limits}
}

// Run is the judged run. Its jobs are the judgement's own copies: a job's limit is read with Limit, from a
// pointer into these jobs.
func (j Judged) Run() *result.Run { return j.run }

// Thinned is the judgement with at most n samples of each job left in its run (result.Thin), for a report
// that shows fewer: what the judgement says still rests on every sample. The run it was judged from is
// left as it is.
func (j Judged) Thinned(n int) Judged {
	if j.run != nil {
		j.run = j.run.Thinned(n)
	}
	return j
}

// Findings are the run's findings, the headline first.
func (j Judged) Findings() []result.Finding { return j.findings }

// Verdict is the findings' sentences in order.
func (j Judged) Verdict() []string {
	out := make([]string, len(j.findings))
	for i, f := range j.findings {
		out[i] = f.Sentence
	}
	return out
}

// Headline is the first finding, the one that says what happened; false for a run with none.
func (j Judged) Headline() (result.Finding, bool) {
	if len(j.findings) == 0 {
		return result.Finding{}, false
	}
	return j.findings[0], true
}

// Limit is what ended job s (a pointer into Run's jobs) with the numbers its classification rests on; the
// zero value for a job of another run or one that no limit ended.
func (j Judged) Limit(s *result.JobResult) result.JobLimit {
	if j.run == nil {
		return result.JobLimit{}
	}
	for i := range j.run.Jobs {
		if &j.run.Jobs[i] == s && i < len(j.limits) {
			return j.limits[i]
		}
	}
	return result.JobLimit{}
}

// PlacedAlike says whether jobs a and b of the judged run may be held against each other: not where one is
// known to have placed its buffers and the other known to have placed none (a layout that placed nothing
// goes as far as its budget).
func (j Judged) PlacedAlike(a, b *result.JobResult) bool {
	return placedAlike(placementOf(j.run, a), placementOf(j.run, b))
}

// MarshalJSON writes the judged run as run.json holds it: the measurements with the findings, the verdict
// and each job's limit.
func (j Judged) MarshalJSON() ([]byte, error) { return json.Marshal(j.run) }

// JudgedTrace is a trace with what it means: the verdict's sentences (the first failure first) and the
// limit. JudgeTrace is the one function that makes one; every renderer of a trace takes one.
type JudgedTrace struct {
	trace   *result.Trace // a copy of the trace with the verdict stored, as trace.json writes it
	verdict []string
	limit   result.JobLimit
}

// JudgeTrace derives what the trace means (DeriveTrace) and returns it with the trace, which it leaves as it
// is.
func JudgeTrace(t *result.Trace) JudgedTrace {
	if t == nil {
		t = &result.Trace{}
	}
	verdict, limit, evidence := DeriveTrace(t)
	if verdict == nil {
		verdict = []string{}
	}
	l := result.JobLimit{Limit: limit, Evidence: evidence}
	return JudgedTrace{trace: t.WithFindings(verdict, l), verdict: verdict, limit: l}
}

// Trace is the judged trace.
func (j JudgedTrace) Trace() *result.Trace { return j.trace }

// Verdict is the trace's sentences in order.
func (j JudgedTrace) Verdict() []string { return j.verdict }

// Limit is what limited the program, with the numbers its classification rests on.
func (j JudgedTrace) Limit() result.JobLimit { return j.limit }

// MarshalJSON writes the judged trace as trace.json holds it.
func (j JudgedTrace) MarshalJSON() ([]byte, error) { return json.Marshal(j.trace) }
