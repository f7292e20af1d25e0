package result

import (
	"math"
	"strings"
)

// The noise rules: what a measured cost per buffer must reach before it means anything. They live here,
// in the model every layer imports, so that the engine that fits the costs, the findings that read them
// and the comparisons (compare, merge, check) that hold one run against another draw the line in one place.
const (
	// NoiseFraction is the sampling noise of a cost per buffer, as a fraction of the buffer size: a cost,
	// or a change of one, within 1% of the buffer size either way is noise. System memory moves with
	// everything else on the machine, and two runs of one build differ by about this much.
	NoiseFraction = 0.01
	// PlacedFraction is the least device memory per buffer, as a fraction of the buffer size, that means
	// the buffers were placed: below 5% of a buffer per buffer nothing was, and a replication factor of
	// 0.00 would read as a measurement.
	PlacedFraction = 0.05
)

// IsNoise reports whether a cost per buffer (or a change of one) is within the noise of a buffer of size
// bytes.
func IsNoise(bytes float64, size uint64) bool { return math.Abs(bytes) <= NoiseFraction*float64(size) }

// Measured reports whether a fitted cost per buffer is a measurement of something the buffers took: above
// zero, above the noise floor of a buffer of size (IsNoise), and above its slope's own noise (the scatter
// of its readings: 0 where a result does not record it).
func Measured(bytes, noise float64, size uint64) bool {
	return bytes > 0 && !IsNoise(bytes, size) && bytes > noise
}

// Noise is the recorded noise of a job's slopes, zeros where it was not recorded.
func (s *JobResult) Noise() SlopeNoise {
	if s.SlopeNoise == nil {
		return SlopeNoise{}
	}
	return *s.SlopeNoise
}

// Placed reports whether device memory of bytes per buffer, summed over the devices, means a buffer of
// size bytes was placed.
func Placed(bytes float64, size uint64) bool {
	return size > 0 && bytes >= PlacedFraction*float64(size)
}

// Interrupted reports whether a job was stopped by an interrupt (Ctrl-C) rather than by the guard or its
// time limit.
func (s *JobResult) Interrupted() bool {
	return s.Outcome == OutcomeStopped && !s.GuardStopped() && s.StopCause == StopInterrupted
}

// GuardStopped reports whether the host guard stopped the job, before the memory it keeps a reserve of ran
// out: its cause says so, or the reserve it stopped at is recorded.
func (s *JobResult) GuardStopped() bool {
	return s.Outcome == OutcomeStopped && (s.StopCause == StopHostGuard || s.Guard != "")
}

// legacyStopCause is the cause of a stopped or hung job in a result written before stop_cause was
// recorded, when the engine said it only in the reason's first words (and in the guard, once that was
// recorded); "" for a job that was neither, or whose words name no cause. Only the loader uses it.
func legacyStopCause(s *JobResult) StopCause {
	switch {
	case s.Outcome == OutcomeHung:
		return StopHung
	case s.Outcome != OutcomeStopped:
		return ""
	case s.Guard != "" || strings.HasPrefix(s.Reason, "host guard"):
		return StopHostGuard
	case strings.HasPrefix(s.Reason, "interrupted"):
		return StopInterrupted
	case strings.HasPrefix(s.Reason, "timeout"):
		return StopTimedOut
	case strings.HasPrefix(s.Reason, "the tool could not map the host memory"):
		return StopHostMapping
	}
	return ""
}

// AddressSlack is the address space kept free under an address-space limit (ulimit -v): one malloc arena of
// glibc's, 64 MiB, which any thread of a runtime may map at any moment, so that two workers of the same
// job map their own memory to within about that much. The host guard keeps it free of the limit, largest
// keeps it below its bound, and a comparison of jobs stopped at that limit takes it as their scatter.
const AddressSlack = 64 << 20

// StoppedAtAddressSpace reports whether the host guard stopped a job before its address-space limit.
func StoppedAtAddressSpace(outcome Outcome, cause StopCause, limit Limit) bool {
	return outcome == OutcomeStopped && cause == StopHostGuard && limit == LimitAddressSpace
}
