package result

// Judgement is what the judge says of a document: the verdict's sentences (the headline first) and, for a
// run, the findings they are the sentences of. Every judged document (a run, a trace, a largest search, a
// remedy search) embeds one, so its JSON fields stand where they always stood, and WithJudgement is the one
// place that stores one: the engine leaves it empty, and what a renderer reads there the judge put there.
type Judgement struct {
	// Verdict is the sentences, in order: the first says what happened (for a run: and what to try next).
	Verdict []string `json:"verdict"`
	// Findings are the verdict's sentences with what they rest on, for scripts.
	Findings []Finding `json:"findings,omitempty"`
}

// judgement is the judgement a document embeds, for WithJudgement.
func (j *Judgement) judgement() *Judgement { return j }

// WithJudgement returns a copy of doc that holds judgement j, and leaves doc as it is. The copy shares
// everything else with doc: a caller that stores more in it (a job's limit) clones what it writes.
func WithJudgement[D any, P interface {
	*D
	judgement() *Judgement
}](doc *D, j Judgement) *D {
	cp := *doc
	*P(&cp).judgement() = j
	return &cp
}

// FoundLimit is what the judge says ended a job, or limited a traced program, with the numbers its
// classification rests on. A job and a trace embed one, so its JSON fields stand where they always stood,
// and withLimit is the one place that stores one, into a judged copy.
type FoundLimit struct {
	Limit         Limit              `json:"limit,omitempty"`
	LimitEvidence map[string]float64 `json:"limit_evidence,omitempty"`
}

// foundLimit is the limit a document embeds, for withLimit.
func (l *FoundLimit) foundLimit() *FoundLimit { return l }

// withLimit stores l in doc, a job of a judged run's copy or a judged trace's copy.
func withLimit[P interface{ foundLimit() *FoundLimit }](doc P, l JobLimit) {
	*doc.foundLimit() = FoundLimit{Limit: l.Limit, LimitEvidence: l.Evidence}
}
