package comparison

import (
	"fmt"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// Comparison verdicts of one strategy between a baseline and a new run.
const (
	ChangeEqual     = "equal"
	ChangeImproved  = "improved"
	ChangeRegressed = "regressed"
	ChangeMissing   = "missing" // in the baseline, not in the new run: counts as a regression
	ChangeAdded     = "added"   // only in the new run
	// ChangeInconclusive: the new run completed a smaller budget than the baseline's threshold, so it
	// cannot say whether the threshold moved (OnlyBounded). Not a regression; the row says why.
	ChangeInconclusive = "inconclusive"
	// ChangeNotComparable: the two runs asked different things of one strategy (another variant, flag set
	// or size, and not the base's): the base's job and the new one are put side by side, not judged, and it
	// is no regression.
	ChangeNotComparable = "not-comparable"
)

// Comparison is the result of `compare`: one row per strategy and size.
type Comparison struct {
	// Incomparable says why the two runs cannot be compared (other devices, another touch mode); empty when
	// they can, and then there are no rows. A driver version may differ: that is what compare is for.
	Incomparable string          `json:"incomparable,omitempty"`
	Tolerance    float64         `json:"tolerance"`
	Regressed    bool            `json:"regressed"`
	Rows         []ComparisonRow `json:"rows"`
}

// ComparisonRow compares one strategy at one size.
type ComparisonRow struct {
	Strategy        result.Strategy `json:"strategy"`
	Variant         string          `json:"variant,omitempty"` // as a job records it: empty for the default
	Flags           string          `json:"flags,omitempty"`   // the buffers' flags, as a job records them: empty for read-write
	SizeBytes       uint64          `json:"size_bytes"`
	BaseOutcome     result.Outcome  `json:"base_outcome,omitempty"`
	NewOutcome      result.Outcome  `json:"new_outcome,omitempty"`
	BaseAllocations uint64          `json:"base_allocations_ok"`
	NewAllocations  uint64          `json:"new_allocations_ok"`
	// BaseConfirmed and NewConfirmed are, for a job whose worker died with a batch in flight, the buffers
	// the device confirmed: its end lies between that and the allocations made (result.JobResult.MadeRange).
	BaseConfirmed   *uint64 `json:"base_confirmed_ok,omitempty"`
	NewConfirmed    *uint64 `json:"new_confirmed_ok,omitempty"`
	BaseBytes       uint64  `json:"base_bytes_ok"`
	NewBytes        uint64  `json:"new_bytes_ok"`
	BaseHostPerBuf  float64 `json:"base_host_bytes_per_buffer"`
	NewHostPerBuf   float64 `json:"new_host_bytes_per_buffer"`
	ThresholdChange float64 `json:"threshold_change"` // new/base - 1 of buffers reached
	Change          string  `json:"change"`
	Why             string  `json:"why,omitempty"`
}

// Compare matches the jobs of two runs by their keys. A job regressed when it reached fewer buffers than
// the baseline by more than the tolerance (Below), when its outcome got worse (Worse: completed or failed
// to crashed or hung), or when its host cost per buffer grew by more than the tolerance and the noise
// (CostGrew).
func Compare(base, next *result.Run, tolerance float64) *Comparison {
	return CompareJudged(base, next, tolerance, nil, nil)
}

// EndedAt is the limit that ended each job of a run, by the job's index in the run, as the judge found it;
// nil where the runs were not judged.
type EndedAt func(job int) result.Limit

// CompareJudged is Compare with what ended each job: a job that ended at its memory cgroup's limit in
// either run is not judged where the runs had different limits, as its count moved with the limit.
func CompareJudged(base, next *result.Run, tolerance float64, baseEnded, nextEnded EndedAt) *Comparison {
	c := &Comparison{Tolerance: tolerance, Rows: []ComparisonRow{}}
	if c.Incomparable = incomparable(RunKey(base), RunKey(next)); c.Incomparable != "" {
		return c
	}
	baseKeys, nextKeys := Keys(base), Keys(next)
	nextBy := make(map[Key]int, len(nextKeys))
	for i, k := range nextKeys {
		nextBy[k] = i
	}
	seen := map[Key]bool{}
	limits := cgroupsApart(base, next)
	for i, k := range baseKeys {
		b := &base.Jobs[i]
		seen[k] = true
		row := ComparisonRow{Strategy: b.Strategy, Variant: k.JobVariant(), Flags: b.Flags, SizeBytes: b.SizeBytes, BaseOutcome: b.Outcome, BaseAllocations: b.AllocationsOK,
			BaseBytes: b.BytesOK, BaseHostPerBuf: b.HostBytesPerBuffer, BaseConfirmed: confirmed(b)}
		if j, ok := nextBy[k]; ok {
			n := &next.Jobs[j]
			row.NewOutcome, row.NewAllocations, row.NewBytes, row.NewHostPerBuf = n.Outcome, n.AllocationsOK, n.BytesOK, n.HostBytesPerBuffer
			row.NewConfirmed = confirmed(n)
			row.ThresholdChange = Change(float64(n.AllocationsOK), float64(b.AllocationsOK))
			apart := ""
			if limits != "" && (atCgroupLimit(baseEnded, i) || atCgroupLimit(nextEnded, j)) {
				apart = limits
			}
			row.Change, row.Why = judge(b, n, tolerance, apart)
		} else if next.Partial {
			// The new run was interrupted before this job: nothing was measured to hold against the baseline.
			row.Change, row.Why = ChangeInconclusive, "not run: the new run was interrupted before it"
		} else {
			row.Change, row.Why = ChangeMissing, "not in the new run"
		}
		c.Rows = append(c.Rows, row)
	}
	for i, k := range nextKeys {
		if n := &next.Jobs[i]; !seen[k] && !pairAsked(c, base, next, k, n) {
			c.Rows = append(c.Rows, ComparisonRow{Strategy: n.Strategy, Variant: k.JobVariant(), Flags: n.Flags, SizeBytes: n.SizeBytes, NewOutcome: n.Outcome,
				NewAllocations: n.AllocationsOK, NewBytes: n.BytesOK, NewHostPerBuf: n.HostBytesPerBuffer, Change: ChangeAdded})
		}
	}
	for _, row := range c.Rows {
		c.Regressed = c.Regressed || row.Change == ChangeRegressed || row.Change == ChangeMissing
	}
	return c
}

// pairAsked puts a job only the new run has beside the base's job of the same strategy that the new run
// lacks, where the new run asked it differently: under another variant, flag set or size, none of which
// is the base's. That row is not comparable (the runs asked different things), and no regression. It
// reports whether it paired n.
func pairAsked(c *Comparison, base, next *result.Run, k Key, n *result.JobResult) bool {
	asked := func(r *result.Run, s *result.JobResult) string {
		return fmt.Sprintf("%s, flags %s, %s buffers", variantText(r, s.Variant), result.FlagsName(s.Flags), units.Size(s.SizeBytes))
	}
	for i := range c.Rows {
		row := &c.Rows[i]
		if row.Change != ChangeMissing || row.Strategy != k.Strategy {
			continue
		}
		b := jobOf(base, row)
		if b == nil || hasGroup(next, b) {
			continue
		}
		row.NewOutcome, row.NewAllocations, row.NewBytes, row.NewHostPerBuf = n.Outcome, n.AllocationsOK, n.BytesOK, n.HostBytesPerBuffer
		row.ThresholdChange = Change(float64(n.AllocationsOK), float64(b.AllocationsOK))
		row.Change = ChangeNotComparable
		row.Why = "asked differently: the base ran it under " + asked(base, b) + ", the new run under " + asked(next, n)
		return true
	}
	return false
}

// jobOf is the base run's job of a row.
func jobOf(r *result.Run, row *ComparisonRow) *result.JobResult {
	for i := range r.Jobs {
		s := &r.Jobs[i]
		if s.Strategy == row.Strategy && s.SizeBytes == row.SizeBytes && s.Flags == row.Flags && result.VariantName(s.Variant) == result.VariantName(row.Variant) {
			return s
		}
	}
	return nil
}

// hasGroup reports whether run r has any job under b's variant, flags and size: then a job of b's
// strategy missing there is missing, not asked differently.
func hasGroup(r *result.Run, b *result.JobResult) bool {
	for i := range r.Jobs {
		s := &r.Jobs[i]
		if s.SizeBytes == b.SizeBytes && result.FlagsName(s.Flags) == result.FlagsName(b.Flags) && result.VariantName(s.Variant) == result.VariantName(b.Variant) {
			return true
		}
	}
	return false
}

// variantText names a job's variant with its settings: "the default settings", "variant pool-off
// (X_POOL=0)".
func variantText(r *result.Run, v string) string {
	if result.VariantName(v) == result.DefaultVariant {
		return "the default settings"
	}
	for _, cv := range r.Config.Variants {
		if cv.Name == v {
			return fmt.Sprintf("variant %s (%s)", v, strings.Join(result.Assignments(cv.Settings), " "))
		}
	}
	return "variant " + v
}

// incomparable says why runs of these keys are not compared, or "".
func incomparable(base, next Key) string {
	switch {
	case base.Devices != next.Devices:
		return fmt.Sprintf("the base ran on %s and the new run on %s", base.Devices, next.Devices)
	case base.Touch != next.Touch:
		return fmt.Sprintf("the base ran with touch %s and the new run with touch %s", base.Touch, next.Touch)
	case base.Flags != next.Flags:
		return fmt.Sprintf("the base ran with %s and the new run with %s", base.Flags, next.Flags)
	}
	return ""
}

// confirmed is job s's confirmed buffers where its end is a range (a batch in flight when its worker
// died), else nil.
func confirmed(s *result.JobResult) *uint64 {
	if lo, hi := s.MadeRange(); lo < hi {
		return &lo
	}
	return nil
}

// Made is a row side's buffers as a count: "1031", or "967-1031" where only the first were confirmed.
func Made(n uint64, confirmed *uint64) string {
	if confirmed != nil {
		return render.Span(*confirmed, n, "-")
	}
	return fmt.Sprint(n)
}

// ChangeRange is a row's change in buffers as the ranges allow: "-12.6%", or "-6.8% to -12.6%" where a
// side is a range.
func (r ComparisonRow) ChangeRange() string {
	bLo, nLo := r.BaseAllocations, r.NewAllocations
	if r.BaseConfirmed != nil {
		bLo = *r.BaseConfirmed
	}
	if r.NewConfirmed != nil {
		nLo = *r.NewConfirmed
	}
	least, most := Change(float64(nLo), float64(r.BaseAllocations)), Change(float64(r.NewAllocations), float64(max(bLo, 1)))
	if least == most || r.BaseConfirmed == nil && r.NewConfirmed == nil {
		return fmt.Sprintf("%+.1f%%", 100*r.ThresholdChange)
	}
	return fmt.Sprintf("%+.1f%% to %+.1f%%", 100*least, 100*most)
}

// judge is one job's verdict and why. Where a side's end is a range (a batch in flight when its worker
// died), a change is said only where it holds across the ranges: the new run's most below the base's
// least, or its least above the base's most; else it cannot be told.
//
// limits is how the runs' memory cgroup limits differ ("1 GiB -> 900 MiB") where the job ended at its
// cgroup's limit in either run, else "": such a job moved with that limit, and the runtime cannot be
// judged by it.
func judge(b, n *result.JobResult, tol float64, limits string) (string, string) {
	got, ref := float64(n.AllocationsOK), float64(b.AllocationsOK)
	bLo, bHi := b.MadeRange()
	nLo, nHi := n.MadeRange()
	ranged := bLo < bHi || nLo < nHi
	counts := Made(b.AllocationsOK, confirmed(b)) + " -> " + Made(n.AllocationsOK, confirmed(n)) + " buffers"
	switch {
	case b.GuardStopped() || n.GuardStopped():
		// The host guard's reserve, not the runtime, ended one of them: no threshold to hold against the other.
		return ChangeInconclusive, guardWhy(b, n)
	case b.Interrupted() || n.Interrupted():
		// Ctrl-C ended one of them before any limit: neither regressed nor improved.
		which := "the new run"
		if b.Interrupted() {
			which = "the baseline"
		}
		return ChangeInconclusive, which + " was interrupted before any limit"
	case limits != "":
		return ChangeInconclusive, fmt.Sprintf("%s: it ended at its memory cgroup's limit, and the runs had different limits (%s), so the change is the limit's, not the runtime's; compare runs under the same limit", counts, limits)
	case Worse(n.Outcome, b.Outcome):
		return ChangeRegressed, fmt.Sprintf("outcome %s -> %s", b.Outcome, n.Outcome)
	case OnlyBounded(n) && n.AllocationsOK < b.AllocationsOK:
		return ChangeInconclusive, fmt.Sprintf("the new run stopped at its budget of %d buffers, below the baseline's %d", n.AllocationsOK, b.AllocationsOK)
	case ranged && Below(float64(nHi), float64(bLo), tol):
		return ChangeRegressed, fmt.Sprintf("%s (%+.1f%% at the least)", counts, 100*Change(float64(nHi), float64(bLo)))
	case ranged && Above(float64(nLo), float64(bHi), tol):
		return ChangeImproved, fmt.Sprintf("%s, %s -> %s", counts, b.Outcome, n.Outcome)
	case ranged && (Below(float64(nLo), float64(bHi), tol) || Above(float64(nHi), float64(bLo), tol)):
		return ChangeInconclusive, fmt.Sprintf("%s: a batch was in flight when a worker died, and within it the change may be under the tolerance (--attribution per-buffer pins the buffers)", counts)
	case Below(got, ref, tol):
		return ChangeRegressed, fmt.Sprintf("%d -> %d buffers (%+.1f%%)", b.AllocationsOK, n.AllocationsOK, 100*Change(got, ref))
	case CostGrew(n.HostBytesPerBuffer, b.HostBytesPerBuffer, tol, b.SizeBytes):
		return ChangeRegressed, fmt.Sprintf("host cost per buffer %s -> %s", units.SignedBytes(b.HostBytesPerBuffer), units.SignedBytes(n.HostBytesPerBuffer))
	case Above(got, ref, tol) || Better(n.Outcome, b.Outcome):
		return ChangeImproved, fmt.Sprintf("%d -> %d buffers, %s -> %s", b.AllocationsOK, n.AllocationsOK, b.Outcome, n.Outcome)
	}
	return ChangeEqual, ""
}

// atCgroupLimit says whether job i ended at its memory cgroup's limit, as ended judged it.
func atCgroupLimit(ended EndedAt, i int) bool {
	return ended != nil && ended(i) == result.LimitCgroupMemory
}

// cgroupsApart is how two runs' memory cgroup limits differ, "1 GiB -> 900 MiB" ("none" for a run outside
// one), or "" where they are the same or a run did not record its environment.
func cgroupsApart(base, next *result.Run) string {
	if base.Environment == nil || next.Environment == nil {
		return ""
	}
	limit := func(e *result.Environment) string {
		if e.MemoryCgroup == nil || e.MemoryCgroup.LimitBytes == 0 {
			return "none"
		}
		return units.Bytes(e.MemoryCgroup.LimitBytes)
	}
	if b, n := limit(base.Environment), limit(next.Environment); b != n {
		return b + " -> " + n
	}
	return ""
}

// guardWhy says which run's job the host guard stopped, and at how many buffers.
func guardWhy(b, n *result.JobResult) string {
	which, s := "the new run", n
	if b.GuardStopped() {
		which, s = "the baseline", b
	}
	return fmt.Sprintf("the host guard stopped %s at %d buffers, before any runtime limit", which, s.AllocationsOK)
}
