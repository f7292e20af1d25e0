package comparison

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// cloneWith is the fixture with f applied to every strategy of a copy.
func cloneWith(base *result.Run, f func(s *result.JobResult)) *result.Run {
	n := *base
	n.Jobs = append([]result.JobResult{}, base.Jobs...)
	for i := range n.Jobs {
		f(&n.Jobs[i])
	}
	return &n
}

func TestCompare(t *testing.T) {
	base := fixture.Run(t)
	shared := func(c *Comparison) ComparisonRow {
		for _, r := range c.Rows {
			if r.Strategy == "shared" {
				return r
			}
		}
		t.Fatal("no shared row")
		return ComparisonRow{}
	}
	cases := []struct {
		name      string
		next      *result.Run
		change    string
		regressed bool
	}{
		{"equal", cloneWith(base, func(*result.JobResult) {}), ChangeEqual, false},
		{"within tolerance", cloneWith(base, func(s *result.JobResult) { s.AllocationsOK = s.AllocationsOK * 95 / 100 }), ChangeEqual, false},
		{"improved", cloneWith(base, func(s *result.JobResult) { s.AllocationsOK *= 2 }), ChangeImproved, false},
		{"regressed threshold", cloneWith(base, func(s *result.JobResult) { s.AllocationsOK /= 2 }), ChangeRegressed, true},
		{"now crashes", cloneWith(base, func(s *result.JobResult) { s.Outcome = result.OutcomeCrashed }), ChangeRegressed, true},
		{"host cost grew", cloneWith(base, func(s *result.JobResult) { s.HostBytesPerBuffer *= 2 }), ChangeRegressed, true},
		{"missing", cloneWith(base, func(s *result.JobResult) { s.Strategy += "-renamed" }), ChangeMissing, true},
		// The default variant is one variant, however a file names it.
		{"default variant named", cloneWith(base, func(s *result.JobResult) { s.Variant = result.DefaultVariant }), ChangeEqual, false},
		// Only under another variant: the runs asked different things, job by job (no regression).
		{"another variant", cloneWith(base, func(s *result.JobResult) { s.Variant = "pool-off" }), ChangeNotComparable, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmp := Compare(base, c.next, 0.10)
			if got := shared(cmp).Change; got != c.change || cmp.Regressed != c.regressed {
				t.Errorf("change %q regressed %v; want %q %v", got, cmp.Regressed, c.change, c.regressed)
			}
		})
	}
}

// Runs on other devices, or with another touch mode, are not compared; another driver is what compare is for.
func TestCompareRefusesRunsThatAreNotAlike(t *testing.T) {
	base := fixture.Run(t)
	for name, change := range map[string]func(r *result.Run){
		"devices": func(r *result.Run) { r.Devices[0].Name = "another GPU" },
		"touch":   func(r *result.Run) { r.Config.Touch = result.TouchKernel },
	} {
		next := fixture.Run(t)
		change(next)
		if c := Compare(base, next, 0.1); c.Incomparable == "" || len(c.Rows) != 0 {
			t.Errorf("%s differ: compared all the same (%d rows)", name, len(c.Rows))
		}
	}
	next := fixture.Run(t)
	next.Devices[0].DriverVersion = "99.0"
	if c := Compare(base, next, 0.1); c.Incomparable != "" {
		t.Errorf("another driver: %q, want it compared", c.Incomparable)
	}
}

// A plain run against one of the same strategies only under a variant (--no-default-variant) asked
// different things: each job is not comparable, said job by job with both settings, and nothing
// regressed; a job the new run lacks under the base's own settings is still missing.
func TestJobsAskedDifferentlyAreNotComparable(t *testing.T) {
	mk := func(st result.Strategy, variant string, n uint64) result.JobResult {
		return result.JobResult{Strategy: st, Variant: variant, SizeBytes: 1 << 20, Outcome: result.OutcomeFailed, AllocationsOK: n}
	}
	base := &result.Run{Jobs: []result.JobResult{mk(result.Shared, "", 1000), mk(result.PerDevice, "", 2000)}}
	next := &result.Run{Config: result.Config{Variants: []result.Variant{{Name: "pool-off", Settings: map[string]string{"X_POOL": "0"}}}},
		Jobs: []result.JobResult{mk(result.Shared, "pool-off", 500), mk(result.PerDevice, "pool-off", 100)}}
	c := Compare(base, next, 0.1)
	if c.Regressed || len(c.Rows) != 2 {
		t.Fatalf("regressed %v, %d rows: %+v", c.Regressed, len(c.Rows), c.Rows)
	}
	var why []string
	for _, r := range c.Rows {
		if r.Change != ChangeNotComparable || r.Variant != "" || r.BaseOutcome != result.OutcomeFailed {
			t.Errorf("%s: %s under %q, base outcome %q; want the base's job (the default settings) not comparable", r.Strategy, r.Change, r.Variant, r.BaseOutcome)
		}
		why = append(why, string(r.Strategy)+": "+r.Why)
	}
	// Why names the settings of each side: the golden file's words.
	fixture.GoldenLines(t, "compare-variants-why", why, *update, "./report/comparison")
	// The new run under the base's settings too, without per-device: per-device is missing, a regression.
	next.Jobs = append(next.Jobs, mk(result.Shared, "", 1000))
	c = Compare(base, next, 0.1)
	if !c.Regressed {
		t.Errorf("a job missing under the base's own settings is no regression: %+v", c.Rows)
	}
}

// A base job whose worker died with a batch in flight ended between the buffers the device confirmed and
// those made: a change is said only where it holds across that range, and the row gives the range. Before,
// "1031 -> 901 (-12.6%)" where the device had confirmed 967 (-6.8% from it).
func TestCompareHoldsARangeAsARange(t *testing.T) {
	const made, sure = 1031, 967
	c := uint64(sure)
	base := &result.JobResult{Strategy: result.Shared, SizeBytes: 1 << 20, Outcome: result.OutcomeCrashed, Signal: "SIGKILL", AllocationsOK: made, ConfirmedOK: &c}
	for _, tc := range []struct {
		next uint64
		want string
	}{
		{901, ChangeInconclusive}, // -12.6% from the top, -6.8% from the confirmed: within the 10% tolerance at one end
		{800, ChangeRegressed},    // -22.4% to -17.3%: below at both ends
		{1200, ChangeImproved},    // +16.4% to +24.1%
		{1100, ChangeInconclusive},
	} {
		n := &result.JobResult{Strategy: result.Shared, SizeBytes: 1 << 20, Outcome: result.OutcomeCrashed, Signal: "SIGKILL", AllocationsOK: tc.next}
		if got, why := judge(base, n, Tolerance, ""); got != tc.want {
			t.Errorf("%d-%d -> %d: %s (%s), want %s", sure, made, tc.next, got, why, tc.want)
		}
	}
	row := ComparisonRow{BaseAllocations: made, BaseConfirmed: &c, NewAllocations: 901, ThresholdChange: Change(901, made)}
	if got, want := row.ChangeRange(), fmt.Sprintf("%+.1f%% to %+.1f%%", 100*Change(901, made), 100*Change(901, sure)); got != want {
		t.Errorf("change %q, want %q", got, want)
	}
	if got, want := Made(made, &c), fmt.Sprintf("%d-%d", sure, made); got != want {
		t.Errorf("buffers %q, want %q", got, want)
	}
}

// Two runs killed at their memory cgroups' limits, 1 GiB and 900 MiB: the count fell with the limit, and
// compare may not call that the runtime's regression (before, "REGRESSED" at -12.6%). Under the same
// limit, or where the job ended elsewhere, it still judges.
func TestCompareDoesNotJudgeAJobThatEndedAtDifferentCgroupLimits(t *testing.T) {
	run := func(limit uint64, made uint64) *result.Run {
		s := result.JobResult{Strategy: result.Shared, SizeBytes: 1 << 20, Outcome: result.OutcomeCrashed, Signal: "SIGKILL", AllocationsOK: made}
		return &result.Run{Environment: &result.Environment{MemoryCgroup: &result.CgroupInfo{LimitBytes: limit}}, Jobs: []result.JobResult{s}}
	}
	const gib, base, fewer = 1 << 30, 1000, 870 // -13%: beyond the 10% tolerance
	for _, tc := range []struct {
		name     string
		newLimit uint64
		ended    result.Limit
		want     string
	}{
		{"different limits, ended at the cgroup's", 900 << 20, result.LimitCgroupMemory, ChangeInconclusive},
		{"the same limit", gib, result.LimitCgroupMemory, ChangeRegressed},
		{"different limits, ended at the device", 900 << 20, result.LimitDeviceMemory, ChangeRegressed},
	} {
		ended := func(int) result.Limit { return tc.ended } // as the judge found it
		c := CompareJudged(run(gib, base), run(tc.newLimit, fewer), Tolerance, ended, ended)
		if got := c.Rows[0].Change; got != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got, c.Rows[0].Why, tc.want)
		}
		if tc.want == ChangeInconclusive && (c.Regressed || !strings.Contains(c.Rows[0].Why, units.Bytes(gib)+" -> "+units.Bytes(tc.newLimit))) {
			t.Errorf("%s: regressed %v, why %q does not name both limits", tc.name, c.Regressed, c.Rows[0].Why)
		}
	}
}
