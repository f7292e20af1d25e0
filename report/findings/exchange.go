package findings

import (
	"encoding/json"
	"fmt"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// ExchangeOutcome is what an exchange's check found, the claim its one sentence states.
type ExchangeOutcome string

// The outcomes of an exchange.
const (
	ExchangeInterrupted ExchangeOutcome = "interrupted" // Ctrl-C: nothing was verified or timed
	ExchangeUnverified  ExchangeOutcome = "unverified"  // the result was not read back
	ExchangeVerified    ExchangeOutcome = "verified"    // every cell matches the host reference
	// ExchangeCorrupted: wrong cells without event wait lists (--sync none), which that setting invites.
	ExchangeCorrupted ExchangeOutcome = "corrupted"
	// ExchangeFailed: wrong cells with event wait lists, a failure of the runtime or the tool.
	ExchangeFailed ExchangeOutcome = "failed"
)

// JudgedExchange is an exchange run with what its check means. JudgeExchange is the one function that makes
// one; every renderer of an exchange takes one.
type JudgedExchange struct {
	run     *result.ExchangeRun
	outcome ExchangeOutcome
}

// JudgeExchange says what the exchange's check found; it leaves e as it is.
func JudgeExchange(e *result.ExchangeRun) JudgedExchange {
	if e == nil {
		e = &result.ExchangeRun{}
	}
	o := ExchangeFailed
	switch {
	case e.Interrupted:
		o = ExchangeInterrupted
	case !e.Verified:
		o = ExchangeUnverified
	case e.Correct:
		o = ExchangeVerified
	case e.Sync == "none":
		o = ExchangeCorrupted
	}
	return JudgedExchange{run: e, outcome: o}
}

// Exchange is the judged run, as it was measured.
func (j JudgedExchange) Exchange() *result.ExchangeRun { return j.run }

// Outcome is what the check found.
func (j JudgedExchange) Outcome() ExchangeOutcome { return j.outcome }

// Conclusion is the outcome's one sentence, with the numbers it rests on.
func (j JudgedExchange) Conclusion() string {
	e := j.run
	switch j.outcome {
	case ExchangeInterrupted:
		return fmt.Sprintf("Interrupted (Ctrl-C) after %d of %d steps: nothing was verified or timed.", e.StepsDone, e.Steps)
	case ExchangeUnverified:
		return "The result was not verified."
	case ExchangeVerified:
		return fmt.Sprintf("Verified: all %d cells match the host reference after %d steps with --sync %s (%d check(s)).",
			e.Cells*uint64(len(e.Devices)), e.Steps, e.Sync, len(e.Checks))
	case ExchangeCorrupted:
		return fmt.Sprintf("Corruption observed: %d wrong cells (largest error %d) without event wait lists (--sync none): a migration ran before the producer's kernel finished.", e.WrongCells, e.MaxError)
	}
	return fmt.Sprintf("FAILED: %d wrong cells (largest error %d) with --sync events.", e.WrongCells, e.MaxError)
}

// MarshalJSON writes the exchange run as exchange --format json does: the measurements (the outcome follows
// from them).
func (j JudgedExchange) MarshalJSON() ([]byte, error) { return json.Marshal(j.run) }
