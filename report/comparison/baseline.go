package comparison

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// BaselineFault is why expectations are no baseline to hold a node to.
type BaselineFault string

// The faults, in the order Baseline looks for them.
const (
	// BaselineInterrupted: the run was interrupted, so it lacks jobs, and the last one it has was cut short.
	BaselineInterrupted BaselineFault = "interrupted"
	// BaselineStopped: the host guard, Ctrl-C, --timeout or the tool's own host mapping stopped a job, so
	// its count says where the stop came, not where the runtime fails.
	BaselineStopped BaselineFault = "stopped"
	// BaselineBroken: a job crashed, hung or read back wrong (Broken). CheckHealth fails every such job
	// whatever was recorded, so a baseline holding one would fail every check, even of a node that fails
	// the same way.
	BaselineBroken BaselineFault = "broken"
)

// RefusedJob is a job that keeps expectations from being a baseline, and what ended it.
type RefusedJob struct {
	Strategy  result.Strategy
	SizeBytes uint64
	Variant   string // "" under the runtime's defaults
	Flags     string // "" for the default read-write
	Ending    string // what ended it: a stop's cause in words ("host guard", "timed out"), "stopped", or the outcome
}

// Refusal is Baseline's answer for expectations that are no baseline: the first fault found and the jobs
// that have it (none for an interrupted run: what it lacks is the point).
type Refusal struct {
	Fault BaselineFault
	Jobs  []RefusedJob
}

// Error says what is wrong, without what to do about it: that depends on who asked.
func (r *Refusal) Error() string {
	var names []string
	for _, j := range r.Jobs {
		names = append(names, j.name())
	}
	switch r.Fault {
	case BaselineInterrupted:
		return "an interrupted run, without every job"
	case BaselineStopped:
		return "jobs were stopped, not ended by the runtime: " + strings.Join(names, ", ")
	}
	return "jobs crashed, hung or read back wrong: " + strings.Join(names, ", ") + "; check fails every one of these, so a baseline with one would fail every check"
}

// name is the job as the refusal names it: strategy and size, its variant and flags where they are not the
// defaults, and what ended it.
func (j RefusedJob) name() string {
	s := string(j.Strategy) + " " + units.Size(j.SizeBytes)
	if j.Variant != "" && result.VariantName(j.Variant) != result.DefaultVariant {
		s += ", variant " + j.Variant
	}
	if j.Flags != "" && result.FlagsName(j.Flags) != result.FlagsName("") {
		s += ", " + j.Flags
	}
	return fmt.Sprintf("%s (%s)", s, j.Ending)
}

// Baseline is the one rule of what check holds a node to, for check --record and check --expect alike:
// nil when every job of e ended by itself (a failure, its whole budget, or unsupported), else a *Refusal.
// Expectations taken from a run (result.ExpectationsFrom) know whether it was interrupted and what stopped
// each job; an expectations file knows only each job's outcome, and a stop there is called "stopped".
func Baseline(e *result.Expectations) error {
	if e.Partial {
		return &Refusal{Fault: BaselineInterrupted}
	}
	var stopped, broken []RefusedJob
	for _, j := range e.Jobs {
		r := RefusedJob{Strategy: j.Strategy, SizeBytes: j.SizeBytes, Variant: j.Variant, Flags: j.Flags}
		switch {
		case j.Outcome == result.OutcomeStopped:
			r.Ending = cmp.Or(j.StopCause.Words(), "stopped")
			stopped = append(stopped, r)
		case Broken(j.Outcome):
			r.Ending = string(j.Outcome)
			broken = append(broken, r)
		}
	}
	switch {
	case len(stopped) > 0:
		return &Refusal{Fault: BaselineStopped, Jobs: stopped}
	case len(broken) > 0:
		return &Refusal{Fault: BaselineBroken, Jobs: broken}
	}
	return nil
}
