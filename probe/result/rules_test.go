package result

import (
	"testing"
)

// A cost per buffer is noise up to NoiseFraction of the buffer size either way, the bound itself included,
// and means something just past it.
func TestIsNoiseDrawsTheLineAtTheNoiseFraction(t *testing.T) {
	const size = 1 << 20
	bound := NoiseFraction * size
	for _, c := range []struct {
		name  string
		bytes float64
		want  bool
	}{
		{"nothing", 0, true},
		{"at the bound", bound, true},
		{"at the bound, negative", -bound, true},
		{"just past the bound", bound + 1, false},
		{"just past the bound, negative", -bound - 1, false},
		{"a whole buffer", size, false},
	} {
		if got := IsNoise(c.bytes, size); got != c.want {
			t.Errorf("%s: IsNoise(%g, %d) = %v, want %v", c.name, c.bytes, size, got, c.want)
		}
	}
}

// Device memory means a buffer was placed from PlacedFraction of the buffer size per buffer on, and never
// for a buffer of no size.
func TestPlacedNeedsAFractionOfTheBuffer(t *testing.T) {
	const size = 1 << 20
	bound := PlacedFraction * size
	for _, c := range []struct {
		name  string
		bytes float64
		size  uint64
		want  bool
	}{
		{"nothing", 0, size, false},
		{"just below the fraction", bound - 1, size, false},
		{"at the fraction", bound, size, true},
		{"a replica per device", 2 * size, size, true},
		{"a buffer of no size", 100, 0, false},
	} {
		if got := Placed(c.bytes, c.size); got != c.want {
			t.Errorf("%s: Placed(%g, %d) = %v, want %v", c.name, c.bytes, c.size, got, c.want)
		}
	}
}

// A stopped job was stopped by the guard when its cause says so or it records the reserve it stopped at;
// it was interrupted when its cause says so and the guard did not stop it. The reason's words decide
// nothing (the loader reads them only for results written before the cause was). Jobs that were not
// stopped are neither.
func TestStopsAreToldApartByTheirCause(t *testing.T) {
	for _, c := range []struct {
		name        string
		s           JobResult
		guard, intr bool
	}{
		{"the guard's cause", JobResult{Outcome: OutcomeStopped, StopCause: StopHostGuard, Reason: "host guard: 1 GiB left"}, true, false},
		{"the parent's backstop, no reserve recorded", JobResult{Outcome: OutcomeStopped, StopCause: StopHostGuard}, true, false},
		{"guard recorded, any cause", JobResult{Outcome: OutcomeStopped, Guard: GuardCgroup, StopCause: StopInterrupted}, true, false},
		{"interrupted", JobResult{Outcome: OutcomeStopped, StopCause: StopInterrupted, Reason: "interrupted"}, false, true},
		{"interrupted, whatever the words", JobResult{Outcome: OutcomeStopped, StopCause: StopInterrupted, Reason: "Ctrl-C"}, false, true},
		{"guard words without the cause", JobResult{Outcome: OutcomeStopped, StopCause: StopTimedOut, Reason: "host guard: memory low"}, false, false},
		{"interrupt words without the cause", JobResult{Outcome: OutcomeStopped, Reason: "interrupted (SIGINT)"}, false, false},
		{"time limit", JobResult{Outcome: OutcomeStopped, StopCause: StopTimedOut, Reason: "timeout after 600 s"}, false, false},
		{"the tool's own mapping", JobResult{Outcome: OutcomeStopped, StopCause: StopHostMapping}, false, false},
		{"failed with a guard cause", JobResult{Outcome: OutcomeFailed, StopCause: StopHostGuard}, false, false},
		{"crashed with an interrupt cause", JobResult{Outcome: OutcomeCrashed, StopCause: StopInterrupted}, false, false},
	} {
		if got := c.s.GuardStopped(); got != c.guard {
			t.Errorf("%s: GuardStopped() = %v, want %v", c.name, got, c.guard)
		}
		if got := c.s.Interrupted(); got != c.intr {
			t.Errorf("%s: Interrupted() = %v, want %v", c.name, got, c.intr)
		}
	}
}

// Every strategy but per-device and pool (one context per device, its pools in it) puts all devices in one
// context, as the strategies' descriptions say.
func TestSharesContextIsFalseOnlyForPerDeviceAndPool(t *testing.T) {
	for _, s := range Strategies {
		if got, want := s.SharesContext(), s != PerDevice && s != Pool; got != want {
			t.Errorf("%s: SharesContext() = %v, want %v", s, got, want)
		}
	}
	if PerDevice.SharesContext() {
		t.Errorf("per-device has one context per device, not a shared one")
	}
}

// Codes are named as the OpenCL headers name them, an unknown code by its number, and CodeNames hands out
// a copy that a caller may change without changing the names.
func TestCodeNamesFollowTheHeaders(t *testing.T) {
	for _, c := range []struct {
		name string
		code int32
		want string
	}{
		{"success", 0, "CL_SUCCESS"},
		{"out of resources", -5, "CL_OUT_OF_RESOURCES"},
		{"out of host memory", -6, "CL_OUT_OF_HOST_MEMORY"},
		{"allocation failure", -4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
		{"invalid buffer size", -61, "CL_INVALID_BUFFER_SIZE"},
		{"unknown", -9999, "CL_UNKNOWN_ERROR_-9999"},
	} {
		if got := CodeName(c.code); got != c.want {
			t.Errorf("%s: CodeName(%d) = %q, want %q", c.name, c.code, got, c.want)
		}
	}
	names := CodeNames()
	if names[-5] != "CL_OUT_OF_RESOURCES" {
		t.Errorf("CodeNames()[-5] = %q, want CL_OUT_OF_RESOURCES", names[-5])
	}
	for code := range names {
		delete(names, code)
	}
	if len(CodeNames()) == 0 || CodeName(-5) != "CL_OUT_OF_RESOURCES" {
		t.Errorf("emptying the map CodeNames returned emptied the names themselves")
	}
}

// Variables that choose the ICD loader's runtime or steer this tool are told from a runtime's settings by
// their prefixes, which must start the name.
func TestSelectsRuntimeOrToolByPrefix(t *testing.T) {
	for _, c := range []struct {
		name string
		v    string
		want bool
	}{
		{"loader vendors", "OCL_ICD_VENDORS", true},
		{"loader filenames", "OCL_ICD_FILENAMES", true},
		{"the tool's own", "CLMEMPROBE_DEBUG", true},
		{"a runtime's setting", "POCL_MEMORY_LIMIT", false},
		{"prefix inside the name", "MY_OCL_ICD_VENDORS", false},
		{"lower case", "ocl_icd_vendors", false},
	} {
		if got := SelectsRuntimeOrTool(c.v); got != c.want {
			t.Errorf("%s: SelectsRuntimeOrTool(%q) = %v, want %v", c.name, c.v, got, c.want)
		}
	}
}

// Every stop cause has words of its own, for the table's cell and check's refusal.
func TestEachStopCauseHasItsOwnWords(t *testing.T) {
	seen := map[string]StopCause{}
	for _, c := range StopCauses {
		w := c.Words()
		if w == "" {
			t.Errorf("stop cause %q has no words", c)
		}
		if o, dup := seen[w]; dup {
			t.Errorf("stop causes %q and %q share the words %q", o, c, w)
		}
		seen[w] = c
	}
	if w := StopCause("").Words(); w != "" {
		t.Errorf("no cause has words %q", w)
	}
}
