package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// ExpectationsKind marks an expectations file, which `check --record` writes.
const ExpectationsKind = "clmemprobe-expectations"

// ExpectationsVersion is the version of the expectations file's fields.
const ExpectationsVersion = 1

// Expectations is what `check` holds a node to: what a recorded run asked for, on which devices, and what
// each of its jobs reached. A small file to keep in configuration management beside the node's image.
type Expectations struct {
	Kind          string `json:"kind"`
	Version       int    `json:"version"`
	RecordedBy    Tool   `json:"recorded_by"`
	RecordedFrom  string `json:"recorded_from"` // the run's start time, RFC 3339
	Platform      string `json:"platform"`
	DeviceModel   string `json:"device_model"` // as DeviceModel names the devices
	DriverVersion string `json:"driver_version"`
	Devices       []int  `json:"devices"`
	Touch         Touch  `json:"touch"`
	MaxAllocs     uint64 `json:"max_allocs"`
	MaxBytes      uint64 `json:"max_bytes,omitempty"`
	// Variants are the runtime settings the recorded run's jobs ran under (run --variant), which a check
	// applies again; absent when only the runtime's defaults ran.
	Variants []Variant `json:"variants,omitempty"`
	// FlagSets are the buffer flags the recorded run's jobs ran with (run --flags), which a check uses
	// again; absent when only the default read-write ran.
	FlagSets []string      `json:"flag_sets,omitempty"`
	Jobs     []ExpectedJob `json:"jobs"`
	// Partial is whether the run the expectations were taken from was interrupted. Never written: a file
	// holds expectations only from a run that ended (comparison.Baseline refuses the others).
	Partial bool `json:"-"`
}

// ExpectedJob is one job of the recorded run and how it ended.
type ExpectedJob struct {
	Strategy      Strategy `json:"strategy"`
	SizeBytes     uint64   `json:"size_bytes"`
	Variant       string   `json:"variant,omitempty"`
	Flags         string   `json:"flags,omitempty"`
	Outcome       Outcome  `json:"outcome"`
	AllocationsOK uint64   `json:"allocations_ok"`
	Seconds       float64  `json:"seconds"` // how long the recorded job's loop took
	// StopCause is what stopped a stopped job of a run. Never written, as no stopped job is: a file's
	// expectations say only the outcome.
	StopCause StopCause `json:"-"`
}

// ExpectationsFrom takes what a check needs from a run, and what says whether the run is a baseline at all
// (whether it was interrupted, what stopped a job).
func ExpectationsFrom(r *Run) *Expectations {
	e := &Expectations{Kind: ExpectationsKind, Version: ExpectationsVersion, RecordedBy: r.Tool, RecordedFrom: r.Started,
		Platform: r.Platform.Name, DeviceModel: DeviceModel(r.Devices), DriverVersion: DriverVersions(r.Devices),
		Devices: r.Config.Devices, Touch: r.Config.Touch, MaxAllocs: r.Config.MaxAllocs, MaxBytes: r.Config.MaxBytes,
		Variants: r.Config.Variants, FlagSets: r.Config.FlagSets, Jobs: []ExpectedJob{}, Partial: r.Partial}
	for _, s := range r.Jobs {
		e.Jobs = append(e.Jobs, ExpectedJob{Strategy: s.Strategy, SizeBytes: s.SizeBytes, Variant: s.Variant, Flags: s.Flags, Outcome: s.Outcome,
			AllocationsOK: s.AllocationsOK, Seconds: s.Seconds, StopCause: s.StopCause})
	}
	return e
}

// Sizes are the buffer sizes of the expected jobs, each once, in order.
func (e *Expectations) Sizes() []uint64 {
	return distinct(e.Jobs, func(j *ExpectedJob) uint64 { return j.SizeBytes })
}

// Strategies are the strategies of the expected jobs, each once, in order.
func (e *Expectations) Strategies() []Strategy {
	return distinct(e.Jobs, func(j *ExpectedJob) Strategy { return j.Strategy })
}

// LoadExpectations reads an expectations file, or a run.json to take the expectations from.
func LoadExpectations(path string) (*Expectations, error) {
	b, err := readFile(path, nil)
	if err != nil {
		return nil, err
	}
	var head struct {
		Kind          string `json:"kind"`
		SchemaVersion *int   `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, &NotAResultError{path, "not JSON (" + err.Error() + ")"}
	}
	if head.SchemaVersion != nil {
		r, err := decodeRun(b, path)
		if err != nil {
			return nil, err
		}
		return ExpectationsFrom(r), nil
	}
	if head.Kind != ExpectationsKind {
		return nil, &NotAResultError{path, "neither a run.json nor an expectations file (check --record writes one)"}
	}
	var e Expectations
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, &NotAResultError{path, err.Error()}
	}
	if err := e.check(); err != nil {
		return nil, &NotAResultError{path, err.Error()}
	}
	return &e, nil
}

// check refuses expectations a check could not run or judge.
func (e *Expectations) check() error {
	switch {
	case e.Version != ExpectationsVersion:
		return fmt.Errorf("expectations version %d; this build reads version %d", e.Version, ExpectationsVersion)
	case len(e.Jobs) == 0:
		return fmt.Errorf("no jobs to expect")
	case e.MaxAllocs == 0 || e.MaxAllocs > maxExact:
		return fmt.Errorf("max_allocs %d", e.MaxAllocs)
	case len(e.Devices) == 0 || len(e.Devices) > maxDevices:
		return fmt.Errorf("%d devices", len(e.Devices))
	}
	if !slices.Contains(Touches, e.Touch) {
		return fmt.Errorf("touch %q", e.Touch)
	}
	if err := deviceIndices("devices", e.Devices); err != nil {
		return err
	}
	// Every job's variant must be one the check can run again, with its settings. Both sides are named as
	// VariantName names them: a job's "" and a configuration's "default" are one variant.
	variants := map[string]bool{}
	if len(e.Variants) == 0 {
		variants[DefaultVariant] = true
	}
	for _, v := range e.Variants {
		if !IsVariantName(v.Name) {
			return fmt.Errorf("variant %q is not a variant name", v.Name)
		}
		if err := envNames("variant "+v.Name, v.Settings); err != nil {
			return err
		}
		variants[VariantName(v.Name)] = true
	}
	for _, j := range e.Jobs {
		if !variants[VariantName(j.Variant)] {
			return fmt.Errorf("job %s runs under variant %q, which the expectations do not set", j.Strategy, j.Variant)
		}
	}
	for _, j := range e.Jobs {
		switch {
		case !slices.Contains(Strategies, j.Strategy):
			return fmt.Errorf("strategy %q", j.Strategy)
		case !slices.Contains(Outcomes, j.Outcome):
			return fmt.Errorf("outcome %q", j.Outcome)
		case j.SizeBytes == 0 || j.SizeBytes > maxExact:
			return fmt.Errorf("size_bytes %d", j.SizeBytes)
		case j.AllocationsOK > e.MaxAllocs:
			return fmt.Errorf("%s: allocations_ok %d beyond max_allocs %d", j.Strategy, j.AllocationsOK, e.MaxAllocs)
		case !(j.Seconds >= 0 && j.Seconds < 1e7):
			return fmt.Errorf("%s: seconds %v", j.Strategy, j.Seconds)
		}
	}
	return nil
}
