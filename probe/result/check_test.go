package result

import (
	"math"
	"strings"
	"testing"
)

// A variant's name starts with a letter or digit and goes on with letters, digits, '.', '_' or '-', 40
// characters at most: nothing a shell, a file name or a table would read otherwise.
func TestIsVariantName(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want bool
	}{
		{"the default", DefaultVariant, true},
		{"dotted and dashed", "pocl-1.8_big.pool", true},
		{"a digit first", "2x", true},
		{"40 characters", strings.Repeat("a", 40), true},
		{"41 characters", strings.Repeat("a", 41), false},
		{"empty", "", false},
		{"a dash first", "-v", false},
		{"a blank", "big pool", false},
		{"a shell word", "a;rm", false},
		{"a slash", "a/b", false},
	} {
		if got := IsVariantName(c.in); got != c.want {
			t.Errorf("%s: IsVariantName(%q) = %v, want %v", c.name, c.in, got, c.want)
		}
	}
}

// A variant's key names a process limit when it starts with LimitPrefix, whether or not it is one a
// variant may set.
func TestIsLimitSetting(t *testing.T) {
	for key, want := range map[string]bool{"RLIMIT_NOFILE": true, "RLIMIT_STACK": true, "POCL_MEMORY_LIMIT": false, "rlimit_nofile": false, "MY_RLIMIT_AS": false} {
		if got := IsLimitSetting(key); got != want {
			t.Errorf("IsLimitSetting(%q) = %v, want %v", key, got, want)
		}
	}
}

// A limit's value is read by its limit: a descriptor count of at least 1, a size or "unlimited" for
// memory, 0 for locked memory only, and "hard" for any of them.
func TestLimitValueReadsEachLimitsSyntax(t *testing.T) {
	for _, c := range []struct {
		name       string
		key, value string
		want       uint64
	}{
		{"descriptor count", "RLIMIT_NOFILE", "65536", 65536},
		{"one descriptor", "RLIMIT_NOFILE", "1", 1},
		{"descriptors hard", "RLIMIT_NOFILE", "hard", HardLimit},
		{"locked memory size", "RLIMIT_MEMLOCK", "64KiB", 64 << 10},
		{"locked memory none", "RLIMIT_MEMLOCK", "0", 0},
		{"locked memory unlimited", "RLIMIT_MEMLOCK", "unlimited", Unlimited},
		{"address space in decimal units", "RLIMIT_AS", "64GB", 64e9},
		{"address space as a sum", "RLIMIT_AS", "1MiB+4KiB", 1<<20 + 4<<10},
		{"address space hard", "RLIMIT_AS", "hard", HardLimit},
	} {
		got, err := LimitValue(c.key, c.value)
		if err != nil || got != c.want {
			t.Errorf("%s: LimitValue(%s, %q) = %d, %v; want %d", c.name, c.key, c.value, got, err, c.want)
		}
	}
	for _, c := range []struct{ name, key, value string }{
		{"descriptors as a size", "RLIMIT_NOFILE", "64KiB"},
		{"no descriptors", "RLIMIT_NOFILE", "0"},
		{"descriptors unlimited", "RLIMIT_NOFILE", "unlimited"},
		{"negative descriptors", "RLIMIT_NOFILE", "-1"},
		{"descriptors beyond any count", "RLIMIT_NOFILE", "18446744073709551615"},
		{"empty", "RLIMIT_NOFILE", ""},
		{"no address space", "RLIMIT_AS", "0"},
		{"not a size", "RLIMIT_AS", "lots"},
		{"a limit no variant sets", "RLIMIT_STACK", "8MiB"},
		{"the key in lower case", "rlimit_nofile", "1"},
	} {
		if got, err := LimitValue(c.key, c.value); err == nil {
			t.Errorf("%s: LimitValue(%s, %q) = %d, want an error", c.name, c.key, c.value, got)
		}
	}
}

// checkedRun is a run every check passes: one completed job on device 0.
func checkedRun() *Run {
	return &Run{SchemaVersion: SchemaVersion, Tool: Tool{Name: "clmemprobe"},
		Config: Config{Devices: []int{0}, Touch: TouchNone},
		Jobs:   []JobResult{{Strategy: Shared, Devices: []int{0}, SizeBytes: 1 << 20, Outcome: OutcomeCompleted, AllocationsOK: 10}}}
}

// Check refuses a run whose configuration or environment names what no run writes: device indices out of
// range, an unknown touch, a variant name or setting a variant cannot have, a variable that is no name.
func TestCheckRefusesAnUnknownConfiguration(t *testing.T) {
	if err := checkedRun().Check(); err != nil {
		t.Fatalf("the base run: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(r *Run)
	}{
		{"negative device", func(r *Run) { r.Config.Devices = []int{-1} }},
		{"device beyond the table", func(r *Run) { r.Config.Devices = []int{maxDevices} }},
		{"unknown touch", func(r *Run) { r.Config.Touch = "poke" }},
		{"variant name", func(r *Run) { r.Config.Variants = []Variant{{Name: "a b"}} }},
		{"variant setting name", func(r *Run) { r.Config.Variants = []Variant{{Name: "v", Settings: map[string]string{"A=B": "1"}}} }},
		{"variant limit value", func(r *Run) {
			r.Config.Variants = []Variant{{Name: "v", Settings: map[string]string{"RLIMIT_NOFILE": "0"}}}
		}},
		{"environment variable name", func(r *Run) { r.Environment = &Environment{EnvVars: map[string]string{"$(id)": "x"}} }},
		{"too many devices", func(r *Run) { r.Devices = make([]Device, maxDevices+1) }},
		{"too many configured sizes", func(r *Run) { r.Config.Sizes = make([]uint64, maxStrategies+1) }},
	} {
		r := checkedRun()
		c.edit(r)
		if err := r.Check(); err == nil {
			t.Errorf("%s: Check() accepted the run", c.name)
		}
	}
}

// Check refuses a job whose words are not the tool's or whose figures lie beyond what a run produces
// (huge sizes and counts, durations and costs that are not finite), and names the job it refused.
func TestCheckRefusesAJobNoRunWrites(t *testing.T) {
	nan, huge := math.NaN(), float64(maxPerBuffer)*2
	failure := func() *FirstFailure { return &FirstFailure{Stage: StageCreate, Name: "CL_OUT_OF_RESOURCES"} }
	for _, c := range []struct {
		name string
		edit func(s *JobResult)
	}{
		{"size 0", func(s *JobResult) { s.SizeBytes = 0 }},
		{"size beyond any device", func(s *JobResult) { s.SizeBytes = maxExact + 1 }},
		{"allocations beyond a run", func(s *JobResult) { s.AllocationsOK = math.MaxUint64 }},
		{"failed without a failure", func(s *JobResult) { s.Outcome = OutcomeFailed }},
		{"unknown strategy", func(s *JobResult) { s.Strategy = "scatter" }},
		{"unknown outcome", func(s *JobResult) { s.Outcome = "fine" }},
		{"unknown limit", func(s *JobResult) { s.Limit = "moon-phase" }},
		{"variant name", func(s *JobResult) { s.Variant = "../x" }},
		{"job device", func(s *JobResult) { s.Devices = []int{-3} }},
		{"device key not a number", func(s *JobResult) { s.DeviceBytesPerBuffer = map[string]float64{"gpu": 1} }},
		{"device key with a leading zero", func(s *JobResult) { s.DeviceBytesPerBuffer = map[string]float64{"01": 1} }},
		{"unknown last stage", func(s *JobResult) { s.LastStage = "lunch" }},
		{"negative samples total", func(s *JobResult) { s.SamplesTotal = -1 }},
		{"variant setting", func(s *JobResult) { s.VariantSettings = map[string]string{"RLIMIT_AS": "lots"} }},
		{"failure without a stage", func(s *JobResult) { s.FirstFailure = failure(); s.FirstFailure.Stage = "" }},
		{"failure at an unknown stage", func(s *JobResult) { s.FirstFailure = failure(); s.FirstFailure.Stage = `create"); system("id` }},
		{"failure on a negative device", func(s *JobResult) { s.FirstFailure = failure(); s.FirstFailure.Device = -1 }},
		{"failure index beyond a run", func(s *JobResult) { s.FirstFailure = failure(); s.FirstFailure.Index = maxExact + 1 }},
		{"failure name not a code's", func(s *JobResult) { s.FirstFailure = failure(); s.FirstFailure.Name = "out of memory" }},
		{"seconds not a number", func(s *JobResult) { s.Seconds = nan }},
		{"negative seconds", func(s *JobResult) { s.Seconds = -1 }},
		{"host cost infinite", func(s *JobResult) { s.HostBytesPerBuffer = math.Inf(1) }},
		{"device cost beyond a PiB", func(s *JobResult) { s.DeviceBytesPerBuffer = map[string]float64{"0": huge} }},
		{"replication not a number", func(s *JobResult) { s.ReplicationFactor = &nan }},
		{"sample index beyond a run", func(s *JobResult) { s.Samples = []Sample{{Index: maxExact + 1}} }},
		{"sample time not a number", func(s *JobResult) { s.Samples = []Sample{{Seconds: nan}} }},
	} {
		r := checkedRun()
		c.edit(&r.Jobs[0])
		err := r.Check()
		if err == nil {
			t.Errorf("%s: Check() accepted the job", c.name)
		} else if !strings.HasPrefix(err.Error(), `strategy 0 ("`) {
			t.Errorf("%s: %v, want the error to name strategy 0", c.name, err)
		}
	}
	r := checkedRun()
	r.Jobs[0].Outcome, r.Jobs[0].FirstFailure = OutcomeFailed, failure()
	r.Jobs[0].DeviceBytesPerBuffer = map[string]float64{"0": 1 << 20}
	if err := r.Check(); err != nil {
		t.Errorf("a failed job with its failure and a device cost: %v", err)
	}
}

// A repeat is checked as the job's own ending is: an index no run reaches, an outcome no run writes.
func TestCheckRefusesAHostileRepeat(t *testing.T) {
	for bad, want := range map[*Attempt]string{
		{Outcome: OutcomeFailed, FirstFailure: &FirstFailure{Index: 1 << 62, Stage: StageCreate}}: "repeat 1: first_failure index 4611686018427387904 is beyond what a run can reach",
		{Outcome: "### injected"}:                    `repeat 1: outcome "### injected" is not one clmemprobe writes`,
		{Outcome: OutcomeCrashed, Signal: "### SIG"}: `repeat 1: signal "### SIG" is not a signal's name`,
	} {
		r := &Run{SchemaVersion: SchemaVersion, Jobs: []JobResult{{Strategy: Shared, SizeBytes: 1 << 20, Outcome: OutcomeCompleted, Repeats: []Attempt{*bad}}}}
		if err := r.Jobs[0].check(); err == nil || err.Error() != want {
			t.Errorf("repeat %+v: %v, want %q", bad, err, want)
		}
	}
}
