package report

import (
	"fmt"
	"io"
	"math"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
)

// Comparison verdicts of one strategy between a baseline and a new run.
const (
	ChangeEqual     = "equal"
	ChangeImproved  = "improved"
	ChangeRegressed = "regressed"
	ChangeMissing   = "missing" // in the baseline, not in the new run: counts as a regression
	ChangeAdded     = "added"   // only in the new run
	// ChangeInconclusive: the new run completed a smaller budget than the baseline's threshold, so it
	// cannot say whether the threshold moved. Not a regression; the row says why.
	ChangeInconclusive = "inconclusive"
)

// Comparison is the result of `compare`: one row per strategy and size.
type Comparison struct {
	// Incomparable says why the two runs cannot be compared (other devices, another touch mode); empty when
	// they can. A driver version may differ: that is what compare is for.
	Incomparable string          `json:"incomparable,omitempty"`
	Tolerance    float64         `json:"tolerance"`
	Regressed    bool            `json:"regressed"`
	Rows         []ComparisonRow `json:"rows"`
}

// ComparisonRow compares one strategy at one size.
type ComparisonRow struct {
	Strategy        result.Strategy `json:"strategy"`
	Variant         string          `json:"variant,omitempty"`
	SizeBytes       uint64          `json:"size_bytes"`
	BaseOutcome     result.Outcome  `json:"base_outcome,omitempty"`
	NewOutcome      result.Outcome  `json:"new_outcome,omitempty"`
	BaseAllocations uint64          `json:"base_allocations_ok"`
	NewAllocations  uint64          `json:"new_allocations_ok"`
	BaseBytes       uint64          `json:"base_bytes_ok"`
	NewBytes        uint64          `json:"new_bytes_ok"`
	BaseHostPerBuf  float64         `json:"base_host_bytes_per_buffer"`
	NewHostPerBuf   float64         `json:"new_host_bytes_per_buffer"`
	ThresholdChange float64         `json:"threshold_change"` // new/base - 1 of buffers reached
	Change          string          `json:"change"`
	Why             string          `json:"why,omitempty"`
}

// outcomeRank orders outcomes from healthy to broken: a move to a higher rank is a regression.
var outcomeRank = map[result.Outcome]int{result.OutcomeCompleted: 0, result.OutcomeFailed: 1, result.OutcomeStopped: 1, result.OutcomeUnsupported: 1, result.OutcomeHung: 2, result.OutcomeCrashed: 2}

// Compare matches strategies by name and buffer size. A strategy regressed when it reached fewer buffers
// than the baseline by more than the tolerance, when its outcome got worse (completed or failed to crashed
// or hung), or when its host cost per buffer grew by more than the tolerance and by more than 1% of the
// buffer size (smaller drifts are sampling noise).
func Compare(base, next *result.Run, tolerance float64) *Comparison {
	c := &Comparison{Tolerance: tolerance, Rows: []ComparisonRow{}}
	if a, b := result.DeviceModel(base.Devices), result.DeviceModel(next.Devices); a != b {
		c.Incomparable = fmt.Sprintf("the base ran on %s and the new run on %s", a, b)
	} else if base.Config.Touch != next.Config.Touch {
		c.Incomparable = fmt.Sprintf("the base ran with touch %s and the new run with touch %s", base.Config.Touch, next.Config.Touch)
	}
	key := func(s *result.StrategyResult) string {
		return fmt.Sprintf("%s/%d/%s", s.Strategy, s.SizeBytes, s.Variant)
	}
	nextBy := map[string]*result.StrategyResult{}
	for i := range next.Strategies {
		nextBy[key(&next.Strategies[i])] = &next.Strategies[i]
	}
	seen := map[string]bool{}
	for i := range base.Strategies {
		b := &base.Strategies[i]
		seen[key(b)] = true
		row := ComparisonRow{Strategy: b.Strategy, Variant: b.Variant, SizeBytes: b.SizeBytes, BaseOutcome: b.Outcome, BaseAllocations: b.AllocationsOK,
			BaseBytes: b.BytesOK, BaseHostPerBuf: b.HostBytesPerBuffer}
		n := nextBy[key(b)]
		if n == nil {
			row.Change, row.Why = ChangeMissing, "not in the new run"
			c.Regressed = true
			c.Rows = append(c.Rows, row)
			continue
		}
		row.NewOutcome, row.NewAllocations, row.NewBytes, row.NewHostPerBuf = n.Outcome, n.AllocationsOK, n.BytesOK, n.HostBytesPerBuffer
		row.Change, row.Why = judge(b, n, tolerance, &row)
		if row.Change == ChangeRegressed {
			c.Regressed = true
		}
		c.Rows = append(c.Rows, row)
	}
	for i := range next.Strategies {
		n := &next.Strategies[i]
		if !seen[key(n)] {
			c.Rows = append(c.Rows, ComparisonRow{Strategy: n.Strategy, Variant: n.Variant, SizeBytes: n.SizeBytes, NewOutcome: n.Outcome,
				NewAllocations: n.AllocationsOK, NewBytes: n.BytesOK, NewHostPerBuf: n.HostBytesPerBuffer, Change: ChangeAdded})
		}
	}
	return c
}

func judge(b, n *result.StrategyResult, tol float64, row *ComparisonRow) (string, string) {
	if b.AllocationsOK > 0 {
		row.ThresholdChange = float64(n.AllocationsOK)/float64(b.AllocationsOK) - 1
	} else if n.AllocationsOK > 0 {
		row.ThresholdChange = math.Inf(1)
	}
	if outcomeRank[n.Outcome] > outcomeRank[b.Outcome] && outcomeRank[n.Outcome] >= 2 {
		return ChangeRegressed, fmt.Sprintf("outcome %s -> %s", b.Outcome, n.Outcome)
	}
	if n.Outcome == result.OutcomeCompleted && n.AllocationsOK < b.AllocationsOK {
		return ChangeInconclusive, fmt.Sprintf("the new run stopped at its budget of %d buffers, below the baseline's %d", n.AllocationsOK, b.AllocationsOK)
	}
	if row.ThresholdChange < -tol {
		return ChangeRegressed, fmt.Sprintf("%d -> %d buffers (%+.1f%%)", b.AllocationsOK, n.AllocationsOK, 100*row.ThresholdChange)
	}
	grow := n.HostBytesPerBuffer - b.HostBytesPerBuffer
	if grow > 0.01*float64(b.SizeBytes) && grow > tol*math.Abs(b.HostBytesPerBuffer) {
		return ChangeRegressed, fmt.Sprintf("host cost per buffer %s -> %s", units.SignedBytes(b.HostBytesPerBuffer), units.SignedBytes(n.HostBytesPerBuffer))
	}
	if row.ThresholdChange > tol || (outcomeRank[n.Outcome] < outcomeRank[b.Outcome]) {
		return ChangeImproved, fmt.Sprintf("%d -> %d buffers, %s -> %s", b.AllocationsOK, n.AllocationsOK, b.Outcome, n.Outcome)
	}
	return ChangeEqual, ""
}

// writeComparison renders a comparison as a table.
func writeComparison(w io.Writer, c *Comparison, opts Options) error {
	t := terminal(opts).table(w)
	t.Header("Strategy", "Size", "Base", "New", "Buffers base -> new", "Change", "Host/buffer base -> new", "Verdict")
	for _, r := range c.Rows {
		change := "-"
		if r.BaseAllocations > 0 && r.NewOutcome != "" {
			change = fmt.Sprintf("%+.1f%%", 100*r.ThresholdChange)
		}
		verdict := r.Change
		if r.Why != "" {
			verdict += ": " + r.Why
		}
		// A side the row does not have (missing, added) shows "-", not zeros.
		side := func(outcome result.Outcome, f string) string {
			if outcome == "" {
				return "-"
			}
			return f
		}
		buffers := side(r.BaseOutcome, fmt.Sprint(r.BaseAllocations)) + " -> " + side(r.NewOutcome, fmt.Sprint(r.NewAllocations))
		host := side(r.BaseOutcome, units.SignedBytes(r.BaseHostPerBuf)) + " -> " + side(r.NewOutcome, units.SignedBytes(r.NewHostPerBuf))
		name := string(r.Strategy)
		if r.Variant != "" {
			name += " (" + plain(r.Variant) + ")"
		}
		if err := t.Append([]string{name, units.Size(r.SizeBytes), OrDash(string(r.BaseOutcome)), OrDash(string(r.NewOutcome)),
			buffers, change, host, verdict}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if c.Regressed {
		_, err := fmt.Fprintf(w, "REGRESSED beyond the tolerance of %.0f%%\n", 100*c.Tolerance)
		return err
	}
	_, err := fmt.Fprintf(w, "no regression beyond the tolerance of %.0f%%\n", 100*c.Tolerance)
	return err
}
