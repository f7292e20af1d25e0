package probe

import (
	"reflect"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A check's plan runs the expectations' jobs again: every strategy and size once, their budgets and touch
// mode, the flag sets parsed, and the time left shared equally between the jobs (a minute at most to set
// up or to hang); a flag set that does not parse is refused with its name.
func TestExpectedPlanRunsTheRecordedJobs(t *testing.T) {
	exp := &result.Expectations{MaxAllocs: 500, MaxBytes: 1 << 30, Touch: result.TouchFill, FlagSets: []string{"read-write", "alloc-host-ptr"},
		Jobs: []result.ExpectedJob{{Strategy: result.Shared, SizeBytes: 1 << 20}, {Strategy: result.PerDevice, SizeBytes: 1 << 20}, {Strategy: result.Shared, SizeBytes: 4 << 20}}}
	left := 10 * time.Minute
	p, err := ExpectedPlan(exp, left)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Strategies, []result.Strategy{result.Shared, result.PerDevice}) || !reflect.DeepEqual(p.Sizes, []uint64{1 << 20, 4 << 20}) {
		t.Errorf("strategies %v sizes %v, want each of the expectations' once, in order", p.Strategies, p.Sizes)
	}
	if p.MaxAllocs != exp.MaxAllocs || p.MaxBytes != exp.MaxBytes || p.Touch != exp.Touch || len(p.FlagSets) != len(exp.FlagSets) {
		t.Errorf("plan %+v does not keep the expectations' budgets, touch and %d flag sets", p, len(exp.FlagSets))
	}
	jobs := 2 * 2 * 2 // strategies x sizes x flag sets
	share := (left / time.Duration(jobs)).Truncate(10 * time.Millisecond)
	if want := (Limits{Setup: time.Minute, Hang: time.Minute, Total: share}); p.Limits != want {
		t.Errorf("limits %+v, want %+v", p.Limits, want)
	}
	exp.FlagSets = []string{"no-such-flag"}
	if _, err := ExpectedPlan(exp, left); err == nil {
		t.Error("a flag set that does not parse was taken")
	}
	if _, err := ExpectedPlan(&result.Expectations{}, left); err == nil {
		t.Error("expectations without a job gave a plan")
	}
}

// Remedy's plan is the base narrowed to the one job, on the run's devices with the run's budgets and limits;
// the default read-write flags and the default variant are no sweep step.
func TestJobPlanIsTheRunsJob(t *testing.T) {
	base := Plan{Library: "libOpenCL.so.1", Strategies: []result.Strategy{result.Shared, result.PerDevice}, Sizes: []uint64{1, 2}, Limits: Limits{Setup: time.Second}}
	c := result.Config{Platform: 1, Devices: []int{0, 2}, Touch: result.TouchFill, MaxAllocs: 77, MaxBytes: 99, PoolSize: 5, TimeoutSeconds: 3, HangSeconds: 2, HostReserveByte: 64 << 20}
	s := &result.JobResult{Strategy: result.PerDevice, SizeBytes: 4096}
	p, err := JobPlan(base, c, s)
	if err != nil {
		t.Fatal(err)
	}
	if p.Library != base.Library || p.Platform != c.Platform || !reflect.DeepEqual(p.Devices, c.Devices) || p.MaxAllocs != c.MaxAllocs || p.MaxBytes != c.MaxBytes || p.PoolSize != c.PoolSize || p.HostReserve != c.HostReserveByte {
		t.Errorf("plan %+v does not keep the base's library and the run's configuration %+v", p, c)
	}
	if !reflect.DeepEqual(p.Strategies, []result.Strategy{s.Strategy}) || !reflect.DeepEqual(p.Sizes, []uint64{s.SizeBytes}) || p.FlagSets != nil || p.Variants != nil {
		t.Errorf("jobs %v %v %v %v, want the one job", p.Strategies, p.Sizes, p.FlagSets, p.Variants)
	}
	if want := (Limits{Setup: time.Second, Hang: 2 * time.Second, Total: 3 * time.Second}); p.Limits != want {
		t.Errorf("limits %+v, want %+v", p.Limits, want)
	}
	s.Flags, s.Variant, s.VariantSettings = "alloc-host-ptr", "pool-off", map[string]string{"K": "0"}
	if p, err = JobPlan(base, c, s); err != nil || len(p.FlagSets) != 1 || len(p.Variants) != 1 || p.Variants[0].Name != s.Variant {
		t.Errorf("a job with flags and a variant: flag sets %v variants %v (%v)", p.FlagSets, p.Variants, err)
	}
	s.Flags = "no-such-flag"
	if _, err := JobPlan(base, c, s); err == nil {
		t.Error("flags that do not parse were taken")
	}
}
