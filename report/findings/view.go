package findings

import (
	"math"
	"strconv"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Thresholds the findings judge by. They are ratios of what was measured, never vendor names.
const (
	fullFraction    = 0.90                  // a device at or above this fraction of its global memory is full
	farFraction     = 0.50                  // below this it is far from full
	overcommitted   = 1.05                  // given more than this fraction of its memory, the runtime does not enforce it
	hostLowFraction = 0.10                  // with an OOM kill (SIGKILL), system available memory below this fraction of RAM at the last sample had run out
	mapFraction     = 0.90                  // of vm.max_map_count
	addressFraction = 0.90                  // of the address-space limit
	cheapFraction   = result.PlacedFraction // a cost per buffer under what means placed is no cost
	contextRatio    = 2.0                   // per-device reaching this many times the buffers of a shared context
	sameCount       = 0.02                  // counts within this fraction of each other are the same count
)

// view is one strategy with what the findings derive from it: the limit classifier's input (the fit, the
// failing device and how full it was, by measurement where there is one), and the job and run it is of, for
// the findings that are about runs (costs, sweeps, comparisons).
type view struct {
	*limitInput
	s   *result.JobResult
	run *result.Run
	// limit is what ended the strategy, once the limits of its size are classified.
	limit limitFinding

	hostUnified bool // every device's memory is host memory
}

// newView is job s of run r with what the findings derive from it.
func newView(r *result.Run, s *result.JobResult) *view {
	v := &view{limitInput: jobInput(r, s), s: s, run: r, hostUnified: hostUnified(r)}
	v.placement = placementOf(r, s)
	return v
}

// deviceCost sums the fitted device memory per buffer over the devices, and says whether there is any.
func (v *view) deviceCost() (float64, bool) {
	if !v.fit.OK {
		return 0, false
	}
	return deviceCostOf(v.s)
}

// deviceIndex names a device for evidence keys.
func deviceIndex(d int) string { return strconv.Itoa(d) }

func pct(f float64) float64 { return math.Round(1000*f) / 10 }
