package result

// Remedy is what `clmemprobe remedy` found: a failing job (the baseline) and the known changes, each run in
// its own job, ordered by how far each went.
type Remedy struct {
	SchemaVersion int         `json:"schema_version"`
	Kind          string      `json:"kind"` // RemedyKind
	Tool          Tool        `json:"tool"`
	Started       string      `json:"started"`
	Command       []string    `json:"command"`
	Platform      Platform    `json:"platform"`
	Devices       []Device    `json:"devices"`
	Touch         Touch       `json:"touch"`
	Baseline      RemedyJob   `json:"baseline"`
	Remedies      []RemedyJob `json:"remedies"`
	// ChangesPlanned is how many changes the search meant to try; Interrupted says Ctrl-C ended it, so that
	// only the jobs in Remedies ran (the last of them, interrupted, may be among them).
	ChangesPlanned int  `json:"changes_planned,omitempty"`
	Interrupted    bool `json:"interrupted,omitempty"`
	// Judgement is the verdict, one headline: the smallest change that lifts the failure and how far it
	// goes, and which changes did not help.
	Judgement
}

// Interrupted reports whether Ctrl-C stopped the job: how far it went says nothing of its change.
func (j RemedyJob) Interrupted() bool { return j.StopCause == StopInterrupted }

// RemedyKind marks a remedy result.
const RemedyKind = "clmemprobe-remedy"

// RemedyJob is one job of the search: the baseline, or a change to it.
type RemedyJob struct {
	Change          string            `json:"change"`
	Strategy        Strategy          `json:"strategy"`
	Flags           string            `json:"flags,omitempty"`
	Variant         string            `json:"variant,omitempty"`
	VariantSettings map[string]string `json:"variant_settings,omitempty"`
	SizeBytes       uint64            `json:"size_bytes"`
	AllocationsOK   uint64            `json:"allocations_ok"`
	BytesOK         uint64            `json:"bytes_ok"`
	Outcome         Outcome           `json:"outcome"`
	FirstFailure    *FirstFailure     `json:"first_failure"`
	Reason          string            `json:"reason,omitempty"` // why it stopped, crashed or was unsupported
	// StopCause is what stopped a job whose outcome is stopped (interrupted: Ctrl-C, which says nothing of the
	// change).
	StopCause StopCause `json:"stop_cause,omitempty"`
	// Limit is what the judge found ended the job (cgroup-memory: its memory cgroup's OOM killer).
	Limit Limit `json:"limit,omitempty"`
	// Gain is how far the job went against the baseline, in bytes placed: 2.0 is twice as far. Against a
	// baseline that placed nothing it is the job's bytes over one baseline buffer.
	Gain float64 `json:"gain"`
	// Lifts says the job reached its budget where the baseline failed: the change lifts the failure.
	Lifts bool `json:"lifts"`
	// Order is how small the change is (0 the smallest): the tie-breaker among equal gains.
	Order int `json:"-"`
}
