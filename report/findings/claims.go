package findings

import (
	"fmt"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A claim is made only where its conditions hold on the evidence its finding carries. Each kind of claim
// (result.ClaimKind) lists what its sentence needs; the deriver checks them as it adds a finding (add) and
// as it classifies a limit (classify), and where one fails the finding says what cannot be told instead.
// The sites that write a claim's sentence check the same conditions first (unmet), so the fallback is a
// safety net, not the usual path; TestEveryClaimHoldsOnItsEvidence holds every finding of generated runs
// to them, and TestSentencesCarryTheirClaims holds every sentence that asserts one to carry it.

// condition is one thing a claim needs of its evidence: what it is, as a noun phrase for the sentence that
// says it is missing ("it needs ..."), and the check.
type condition struct {
	needs string
	holds func(ev map[string]float64) bool
}

// claimConditions are the conditions of each kind of claim.
var claimConditions = map[result.ClaimKind][]condition{
	result.ClaimFurther: {
		{"jobs that placed their buffers alike (both placed, or both known to have placed none)", placedAlikeIn},
	},
	result.ClaimUseLayout: {
		{"both layouts known to have placed their buffers alike", placedKnownAlike},
	},
	result.ClaimSpare: {
		{"a reading of the system's available memory above a few buffers", func(ev map[string]float64) bool {
			avail, ok := ev["host_available_bytes"]
			return ok && !hostLow(uint64(avail), uint64(ev["size_bytes"]))
		}},
		{"where a memory cgroup's limit applied, a reading of its use below that limit by more than a few buffers and a tenth of it", cgroupRoom},
	},
	result.ClaimHostRanOut: {
		{"a low reading of the system's available memory, or the kernel's OOM line naming the process", hostReadLow},
	},
	result.ClaimOutside: {
		{"a machine-wide counter falling faster than the RSS grew, by more than the threshold", func(ev map[string]float64) bool {
			out, ok := ev["outside_rss_bytes_per_buffer"]
			threshold, known := ev["outside_threshold_bytes"]
			return ok && known && out >= threshold
		}},
		{"the run's own memory cgroup, where it has one, growing by that much more than its RSS", func(ev map[string]float64) bool {
			cg, own := ev["cgroup_bytes_per_buffer"]
			return !own || ev["outside_rss_bytes_per_buffer"] <= cg-ev["host_bytes_per_buffer"]+1
		}},
	},
	result.ClaimNeverPlaced: {
		{"the memory the buffers live in growing by less than a twentieth of a buffer per buffer, its noise included", func(ev map[string]float64) bool {
			grew, ok := ev["growth_per_buffer_fraction"]
			return ok && grew < cheapFraction
		}},
	},
	result.ClaimExactCount: {
		{"the device's confirmation of every buffer the job made (no batch in flight when it ended)", func(ev map[string]float64) bool {
			confirmed, ranged := ev["confirmed_ok"]
			return !ranged || confirmed >= ev["allocations_ok"]
		}},
	},
}

// claimWhat is what each kind of claim asserts, for the sentence that says it cannot be told.
var claimWhat = map[result.ClaimKind]string{
	result.ClaimFurther:     "which job went further",
	result.ClaimUseLayout:   "which layout to use",
	result.ClaimSpare:       "whether memory was to spare",
	result.ClaimHostRanOut:  "whether host memory ran out",
	result.ClaimOutside:     "whether memory was held outside the process",
	result.ClaimNeverPlaced: "whether the runtime placed the buffers",
	result.ClaimExactCount:  "the exact buffer it ended at",
}

// unmet is the first condition of a claim of kind that fails on ev, if one does.
func unmet(kind result.ClaimKind, ev map[string]float64) (condition, bool) {
	for _, c := range claimConditions[kind] {
		if !c.holds(ev) {
			return c, true
		}
	}
	return condition{}, false
}

// checkClaims is f where every claim it makes holds on its evidence, or, for the first that does not, a
// finding that says what cannot be told and why, with the same subjects and evidence.
func checkClaims(f result.Finding) result.Finding {
	for _, kind := range f.Claims {
		c, failed := unmet(kind, f.Evidence)
		if !failed {
			continue
		}
		who := names(f.Strategies)
		if who == "" {
			who = "the run"
		}
		return result.Finding{Kind: result.FindingUnmeasured, Strategies: f.Strategies, Variant: f.Variant, Flags: f.Flags, Sizes: f.Sizes,
			Evidence: f.Evidence, Sentence: fmt.Sprintf("For %s, %s cannot be told: it needs %s, and the evidence does not show it", who, claimWhat[kind], c.needs)}
	}
	return f
}

// checkLimit is lf where every claim it makes holds on its evidence, or, for the first that does not, the
// unknown limit with what cannot be told and why.
func checkLimit(lf limitFinding) limitFinding {
	for _, kind := range lf.claims {
		if c, failed := unmet(kind, lf.evidence); failed {
			return limitFinding{limit: result.LimitUnknown, evidence: lf.evidence, body: fmt.Sprintf("%s cannot be told: it needs %s, and the evidence does not show it (unknown)", claimWhat[kind], c.needs)}

		}
	}
	return lf
}

// placedKey is the evidence key of a job's placement: 1 placed, 0 none; absent where unknown.
func placedKey(st result.Strategy) string {
	return strings.ReplaceAll(string(st), "-", "_") + "_placed"
}

// putPlacement records how job st placed its buffers in ev (nothing where unknown).
func putPlacement(ev map[string]float64, st result.Strategy, p placement) {
	switch p {
	case placedAll:
		ev[placedKey(st)] = 1
	case placedNone:
		ev[placedKey(st)] = 0
	}
}

// placedApartIn says the evidence holds one job that placed its buffers and another that placed none.
func placedApartIn(ev map[string]float64) bool {
	seen := map[float64]bool{}
	for k, v := range ev {
		if strings.HasSuffix(k, "_placed") {
			seen[v] = true
		}
	}
	return seen[0] && seen[1]
}

// placedAlikeIn says the evidence's placements may be held against each other (placedAlike): no job that
// placed its buffers beside one that placed none, and a job that placed none only beside others known to
// have placed none, two at least (a comparison's evidence holds both of its jobs' placements where known).
func placedAlikeIn(ev map[string]float64) bool {
	n, none := 0, 0
	for k, v := range ev {
		if strings.HasSuffix(k, "_placed") {
			n++
			if v == 0 {
				none++
			}
		}
	}
	return none == 0 || (none == n && n >= 2)
}

// placedKnownAlike says the evidence holds the placement of two jobs or more, every one the same.
func placedKnownAlike(ev map[string]float64) bool {
	n := 0
	for k := range ev {
		if strings.HasSuffix(k, "_placed") {
			n++
		}
	}
	return n >= 2 && !placedApartIn(ev)
}

// cgroupRoom says a memory cgroup with a limit was read below it by more than four buffers and a tenth of
// the limit; true where no cgroup limit applied.
func cgroupRoom(ev map[string]float64) bool {
	limit, ok := ev["cgroup_limit_bytes"]
	if !ok || limit <= 0 {
		return true
	}
	used, read := ev["cgroup_used_bytes"]
	return read && limit-used > max(4*ev["size_bytes"], limit/10)
}

// hostReadLow says the system's available memory read low for a buffer of the evidence's size (or under a
// tenth of RAM for a process killed by SIGKILL), or the kernel's log named the process in an OOM kill.
func hostReadLow(ev map[string]float64) bool {
	if _, ok := ev["kernel_oom_pid"]; ok {
		return true
	}
	avail, ok := ev["host_available_bytes"]
	if !ok {
		return false
	}
	if hostLow(uint64(avail), uint64(ev["size_bytes"])) {
		return true
	}
	ram := ev["host_ram_bytes"]
	return ev["killed_sigkill"] == 1 && ram > 0 && avail < hostLowFraction*ram
}
