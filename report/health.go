package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
)

// writeHealthText is check's one line: the verdict, each job's threshold against the expected one, and the time.
func writeHealthText(w io.Writer, h *comparison.Health, _ Options) error {
	var parts []string
	for _, j := range h.Jobs {
		name := fmt.Sprintf("%s %s", j.Strategy, units.Size(j.SizeBytes))
		if j.Variant != result.DefaultVariant {
			name += " " + plain(j.Variant)
		}
		if j.Healthy {
			parts = append(parts, fmt.Sprintf("%s %d (expected %d)", name, j.AllocationsOK, j.ExpectedAllocs))
		} else {
			parts = append(parts, fmt.Sprintf("%s: %s", name, plain(j.Why)))
		}
	}
	verdict := "healthy"
	if !h.Healthy {
		verdict = "BELOW EXPECTATION"
	}
	notes := ""
	for _, n := range h.Notes {
		notes += "; " + plain(n)
	}
	_, err := fmt.Fprintf(w, "clmemprobe check: %s: %s; %.1f s of %.0f s%s\n", verdict, strings.Join(parts, ", "), h.Seconds, h.Budget, notes)
	return err
}
