package result

import (
	"fmt"
	"math"
)

// Limits of a result that renderers and findings rely on. Real results stay far below them; a file beyond
// them was not written by clmemprobe, or was edited, and is refused rather than drawn.
const (
	maxExact      = 1 << 53 // counts stay exact as float64 (fits, charts)
	maxStrategies = 100_000
	maxDevices    = 4096
	maxSamples    = 1_000_000 // per strategy
	maxSeconds    = 1e9       // a sample time or a duration
	maxPerBuffer  = 1 << 50   // a fitted cost per buffer, in bytes (1 PiB)
)

// Check reports the first figure of the run that contradicts another or lies beyond what a run can
// produce; renderers and findings may assume a checked run.
func (r *Run) Check() error {
	if len(r.Strategies) > maxStrategies {
		return fmt.Errorf("%d strategies, more than %d", len(r.Strategies), maxStrategies)
	}
	if len(r.Devices) > maxDevices {
		return fmt.Errorf("%d devices, more than %d", len(r.Devices), maxDevices)
	}
	if len(r.Config.Sizes) > maxStrategies || len(r.Config.Devices) > maxDevices {
		return fmt.Errorf("config lists %d sizes and %d devices", len(r.Config.Sizes), len(r.Config.Devices))
	}
	for i := range r.Strategies {
		if err := r.Strategies[i].check(); err != nil {
			return fmt.Errorf("strategy %d (%q): %v", i, r.Strategies[i].Strategy, err)
		}
	}
	return nil
}

func (s *StrategyResult) check() error {
	switch {
	case s.SizeBytes == 0:
		return fmt.Errorf("size_bytes is 0")
	case s.SizeBytes > maxExact:
		return fmt.Errorf("size_bytes %d is beyond any device", s.SizeBytes)
	case s.AllocationsOK > maxExact:
		return fmt.Errorf("allocations_ok %d is beyond what a run can reach", s.AllocationsOK)
	case s.Outcome == OutcomeFailed && s.FirstFailure == nil:
		return fmt.Errorf("outcome failed without a first_failure")
	case len(s.Devices) > maxDevices:
		return fmt.Errorf("%d devices", len(s.Devices))
	case len(s.Samples) > maxSamples:
		return fmt.Errorf("%d samples, more than %d", len(s.Samples), maxSamples)
	case s.SamplesTotal < 0:
		return fmt.Errorf("samples_total %d", s.SamplesTotal)
	}
	if f := s.FirstFailure; f != nil && f.Index > maxExact {
		return fmt.Errorf("first_failure index %d is beyond what a run can reach", f.Index)
	}
	for _, v := range []float64{s.Seconds, s.NanosPerAlloc} {
		if !finite(v, maxSeconds*1e9) || v < 0 {
			return fmt.Errorf("a duration of %g", v)
		}
	}
	if !finite(s.HostBytesPerBuffer, maxPerBuffer) {
		return fmt.Errorf("host_bytes_per_buffer %g", s.HostBytesPerBuffer)
	}
	if len(s.DeviceBytesPerBuffer) > maxDevices {
		return fmt.Errorf("%d device costs", len(s.DeviceBytesPerBuffer))
	}
	for d, v := range s.DeviceBytesPerBuffer {
		if !finite(v, maxPerBuffer) {
			return fmt.Errorf("device %s costs %g per buffer", d, v)
		}
	}
	if s.ReplicationFactor != nil && !finite(*s.ReplicationFactor, 1e6) {
		return fmt.Errorf("replication_factor %g", *s.ReplicationFactor)
	}
	for i := range s.Samples {
		smp := &s.Samples[i]
		if smp.Index > maxExact || !finite(smp.Seconds, maxSeconds) || len(smp.DeviceSamples) > maxDevices {
			return fmt.Errorf("sample %d: index %d at %g s with %d devices", i, smp.Index, smp.Seconds, len(smp.DeviceSamples))
		}
	}
	return nil
}

// finite reports whether v is a number within ±limit.
func finite(v, limit float64) bool { return !math.IsNaN(v) && math.Abs(v) <= limit }
