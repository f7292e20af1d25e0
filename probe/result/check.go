package result

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/units"
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
	if len(r.Jobs) > maxStrategies {
		return fmt.Errorf("%d strategies, more than %d", len(r.Jobs), maxStrategies)
	}
	if len(r.Devices) > maxDevices {
		return fmt.Errorf("%d devices, more than %d", len(r.Devices), maxDevices)
	}
	if len(r.Config.Sizes) > maxStrategies || len(r.Config.Devices) > maxDevices {
		return fmt.Errorf("config lists %d sizes and %d devices", len(r.Config.Sizes), len(r.Config.Devices))
	}
	if err := deviceIndices("config.devices", r.Config.Devices); err != nil {
		return err
	}
	// Words a renderer prints as they are (in tables, CSV cells, chart text, C, labels) must be the tool's own.
	if r.Config.Touch != "" && !slices.Contains(Touches, r.Config.Touch) {
		return fmt.Errorf("config.touch %q is not a touch clmemprobe knows", r.Config.Touch)
	}
	for _, v := range r.Config.Variants {
		if !IsVariantName(v.Name) {
			return fmt.Errorf("config.variants holds %q, which is not a variant name", v.Name)
		}
	}
	if r.Environment != nil {
		if err := envNames("env_vars", r.Environment.EnvVars); err != nil {
			return err
		}
	}
	for _, v := range r.Config.Variants {
		if err := variantSettings("variant "+v.Name, v.Settings); err != nil {
			return err
		}
	}
	for i := range r.Jobs {
		if err := r.Jobs[i].check(); err != nil {
			return fmt.Errorf("strategy %d (%q): %v", i, r.Jobs[i].Strategy, err)
		}
	}
	return nil
}

func (s *JobResult) check() error {
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
	if err := deviceIndices("devices", s.Devices); err != nil {
		return err
	}
	if err := variantSettings("variant_settings", s.VariantSettings); err != nil {
		return err
	}
	switch {
	case !slices.Contains(Strategies, s.Strategy):
		return fmt.Errorf("strategy %q is not one clmemprobe runs", s.Strategy)
	case !slices.Contains(Outcomes, s.Outcome):
		return fmt.Errorf("outcome %q is not one clmemprobe writes", s.Outcome)
	case s.Limit != "" && !slices.Contains(Limits, s.Limit):
		return fmt.Errorf("limit %q is not one clmemprobe writes", s.Limit)
	case s.StopCause != "" && !slices.Contains(StopCauses, s.StopCause):
		return fmt.Errorf("stop_cause %q is not one clmemprobe writes", s.StopCause)
	case s.Variant != "" && !IsVariantName(s.Variant):
		return fmt.Errorf("variant %q is not a variant name", s.Variant)
	}
	for d := range s.DeviceBytesPerBuffer {
		if n, err := strconv.Atoi(d); err != nil || n < 0 || n >= maxDevices || strconv.Itoa(n) != d {
			return fmt.Errorf("device_bytes_per_buffer names device %q", d)
		}
	}
	if !knownStage(s.LastStage) {
		return fmt.Errorf("last_stage %q is not a stage clmemprobe writes", s.LastStage)
	}
	if f := s.FirstFailure; f != nil {
		if err := f.check(); err != nil {
			return err
		}
	}
	if len(s.Repeats) > maxRepeats {
		return fmt.Errorf("%d repeats, more than %d", len(s.Repeats), maxRepeats)
	}
	for i := range s.Repeats {
		if err := s.Repeats[i].check(); err != nil {
			return fmt.Errorf("repeat %d: %v", i+1, err)
		}
	}
	return s.checkFigures()
}

// maxRepeats bounds a job's repeats (run --repeat takes at most 100 runs).
const maxRepeats = 99

// check refuses a repeat that says what no run writes, as a job's own ending is checked.
func (a *Attempt) check() error {
	switch {
	case !slices.Contains(Outcomes, a.Outcome):
		return fmt.Errorf("outcome %q is not one clmemprobe writes", a.Outcome)
	case a.Limit != "" && !slices.Contains(Limits, a.Limit):
		return fmt.Errorf("limit %q is not one clmemprobe writes", a.Limit)
	case a.Signal != "" && !codeWord.MatchString(a.Signal):
		return fmt.Errorf("signal %q is not a signal's name", a.Signal)
	case a.AllocationsOK > maxExact:
		return fmt.Errorf("allocations_ok %d is beyond what a run can reach", a.AllocationsOK)
	case math.IsNaN(a.Seconds) || math.IsInf(a.Seconds, 0) || a.Seconds < 0:
		return fmt.Errorf("seconds %v", a.Seconds)
	}
	if a.FirstFailure != nil {
		return a.FirstFailure.check()
	}
	return nil
}

// check refuses a first failure that names what no run writes: renderers and the reproducer print its words.
func (f *FirstFailure) check() error {
	switch {
	case f.Index > maxExact:
		return fmt.Errorf("first_failure index %d is beyond what a run can reach", f.Index)
	case !knownStage(f.Stage) || f.Stage == "":
		// Renderers and the C reproducer put the stage where only a known word may go.
		return fmt.Errorf("first_failure stage %q is not a stage clmemprobe writes", f.Stage)
	case f.Device < 0 || f.Device >= maxDevices:
		return fmt.Errorf("first_failure device %d", f.Device)
	case !codeWord.MatchString(f.Name):
		return fmt.Errorf("first_failure name %q is not a code's name", f.Name)
	}
	return nil
}

// checkFigures checks the strategy's durations, fitted costs and samples: finite, and within what a run
// can produce.
func (s *JobResult) checkFigures() error {
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

// deviceIndices checks that every index could name a device: selection, the reproducer and the device
// columns index arrays with them.
func deviceIndices(field string, devices []int) error {
	for _, d := range devices {
		if d < 0 || d >= maxDevices {
			return fmt.Errorf("%s holds device index %d", field, d)
		}
	}
	return nil
}

// codeWord is what a code's name looks like (CL_OUT_OF_HOST_MEMORY, CL_UNKNOWN_ERROR_-9999), or none.
var codeWord = regexp.MustCompile(`^([A-Z][A-Z0-9_-]{0,80})?$`)

// variantWord is what a variant's name may be.
var variantWord = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$`)

// IsVariantName reports whether name could be a variant's name (run --variant takes no other, and a result
// holding another is refused).
func IsVariantName(name string) bool { return variantWord.MatchString(name) }

// envNames checks that every key is a variable name: reports paste them into shell commands and C.
func envNames(field string, vars map[string]string) error {
	for k := range vars {
		if !IsEnvName(k) {
			return fmt.Errorf("%s holds %q, which is not a variable name", field, k)
		}
	}
	return nil
}

// variantSettings checks a variant's settings by the rule run --variant applies: every key a variable name,
// every limit's value one LimitValue reads (the reproducer puts the names into C and passes the values to
// setrlimit; the worker sets them).
func variantSettings(field string, settings map[string]string) error {
	if err := envNames(field, settings); err != nil {
		return err
	}
	for k, v := range settings {
		if IsLimitSetting(k) {
			if _, err := LimitValue(k, v); err != nil {
				return fmt.Errorf("%s: %v", field, err)
			}
		}
	}
	return nil
}

// A variant's setting whose key starts with LimitPrefix is not an environment variable but a limit of the
// worker process (setrlimit, the soft limit, as `ulimit -S` sets it): a runtime that fails at a descriptor or
// locked-memory limit is tested by raising it, which no variable does.
const LimitPrefix = "RLIMIT_"

// LimitSettings are the limits a variant may set, each with what its value is.
var LimitSettings = map[string]string{
	"RLIMIT_NOFILE":  "a count of descriptors or hard",
	"RLIMIT_MEMLOCK": "a size, unlimited or hard",
	"RLIMIT_AS":      "a size, unlimited or hard",
}

// Unlimited is a limit's value for "unlimited" (RLIM_INFINITY).
const Unlimited = math.MaxUint64

// HardLimit is a limit's value for "hard": the soft limit raised to the hard one, as
// `ulimit -S -n $(ulimit -H -n)` does, which needs no privilege and so works wherever the worker runs.
const HardLimit = math.MaxUint64 - 1

// IsLimitSetting reports whether a variant's key names a process limit rather than an environment variable.
func IsLimitSetting(key string) bool { return strings.HasPrefix(key, LimitPrefix) }

// LimitValue reads a limit setting's value: RLIMIT_NOFILE a count of at least 1; RLIMIT_MEMLOCK and
// RLIMIT_AS a size in the tool's syntax (1MiB, 64GB) or "unlimited" (Unlimited), RLIMIT_MEMLOCK also 0;
// any of them "hard" (HardLimit).
func LimitValue(key, value string) (uint64, error) {
	what, ok := LimitSettings[key]
	switch {
	case ok && value == "hard":
		return HardLimit, nil
	case !ok:
		return 0, fmt.Errorf("%s is not a limit a variant sets (RLIMIT_NOFILE, RLIMIT_MEMLOCK or RLIMIT_AS)", key)
	case key == "RLIMIT_NOFILE":
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil || n == 0 || n >= Unlimited {
			return 0, fmt.Errorf("%s=%q: want %s, at least 1", key, value, what)
		}
		return n, nil
	case value == "unlimited":
		return Unlimited, nil
	case key == "RLIMIT_MEMLOCK" && value == "0":
		return 0, nil // no locked memory at all: a test of its own
	}
	n, err := units.ParseSize(value)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want %s: %v", key, value, what, err)
	}
	return n, nil
}

// knownStage reports whether st is empty or one of the stages clmemprobe writes.
func knownStage(st Stage) bool { return st == "" || slices.Contains(Stages, st) }

// finite reports whether v is a number within ±limit.
func finite(v, limit float64) bool { return !math.IsNaN(v) && math.Abs(v) <= limit }
