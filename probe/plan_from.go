package probe

import (
	"fmt"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The plans a command builds from a recorded result rather than from its flags: check runs again what
// expectations were recorded from, and remedy starts from one job of a run. They are built here, beside
// Plan, so that what a job of a result means as a plan is said once.

// ExpectedPlan is the plan that runs again the jobs the expectations were recorded from: their strategies,
// sizes, budgets, touch mode, variants and flag sets, every job given an equal share of the time left (and
// at most a minute to set up or to go without progress). The library, platform, devices and command line
// are the caller's to set.
func ExpectedPlan(exp *result.Expectations, left time.Duration) (Plan, error) {
	p := Plan{Strategies: exp.Strategies(), Sizes: exp.Sizes(), MaxAllocs: exp.MaxAllocs, MaxBytes: exp.MaxBytes,
		Touch: exp.Touch, Variants: exp.Variants, HostReserve: DefaultHostReserve(), SampleInterval: 10 * time.Millisecond}
	for _, name := range exp.FlagSets {
		f, err := result.ParseMemFlags(name)
		if err != nil {
			return p, fmt.Errorf("the expectations' flag set %q: %w", name, err)
		}
		p.FlagSets = append(p.FlagSets, f)
	}
	jobs := len(p.Strategies) * len(p.Sizes) * max(1, len(p.Variants)) * max(1, len(p.FlagSets))
	if jobs == 0 {
		return p, fmt.Errorf("the expectations hold no job")
	}
	share := (left / time.Duration(jobs)).Truncate(10 * time.Millisecond)
	p.Limits = Limits{Setup: min(share, time.Minute), Hang: min(share, time.Minute), Total: share}
	return p, nil
}

// JobPlan is base narrowed to job s of a run configured as c: its strategy, size, flags and variant on the
// run's platform and devices, with the run's budgets, touch mode, pool size, time limits and host reserve.
func JobPlan(base Plan, c result.Config, s *result.JobResult) (Plan, error) {
	flags, err := result.JobFlags(s.Flags)
	if err != nil {
		return base, fmt.Errorf("the run's flags %q: %w", s.Flags, err)
	}
	p := base
	p.Platform, p.Devices, p.Touch, p.MaxAllocs, p.MaxBytes, p.PoolSize = c.Platform, c.Devices, c.Touch, c.MaxAllocs, c.MaxBytes, c.PoolSize
	p.Strategies, p.Sizes, p.FlagSets, p.Variants = []result.Strategy{s.Strategy}, []uint64{s.SizeBytes}, nil, nil
	if s.Flags != "" {
		p.FlagSets = []result.MemFlags{flags}
	}
	if s.Variant != "" {
		p.Variants = []result.Variant{{Name: s.Variant, Settings: s.VariantSettings}}
	}
	if c.TimeoutSeconds > 0 {
		p.Limits.Total = time.Duration(c.TimeoutSeconds * float64(time.Second))
	}
	if c.HangSeconds > 0 {
		p.Limits.Hang = time.Duration(c.HangSeconds * float64(time.Second))
	}
	p.HostReserve = c.HostReserveByte
	return p, nil
}
