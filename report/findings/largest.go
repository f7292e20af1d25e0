package findings

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// JudgedLargest is a `largest` search with its verdict, one headline per device. JudgeLargest is the one
// function that makes one; every renderer of a search takes one.
type JudgedLargest struct {
	largest *result.Largest // a copy of the search with the verdict stored, as largest --format json writes it
	verdict []string
}

// JudgeLargest states the headline of each device's search (LargestVerdict) in a copy of l; it leaves l
// as it is.
func JudgeLargest(l *result.Largest) JudgedLargest {
	if l == nil {
		l = &result.Largest{}
	}
	verdict := largestVerdicts(l)
	return JudgedLargest{largest: result.WithJudgement(l, result.Judgement{Verdict: verdict}), verdict: verdict}
}

// Largest is the judged search.
func (j JudgedLargest) Largest() *result.Largest { return j.largest }

// Verdict is the headlines, one per device.
func (j JudgedLargest) Verdict() []string { return j.verdict }

// MarshalJSON writes the judged search as largest --format json does.
func (j JudgedLargest) MarshalJSON() ([]byte, error) { return json.Marshal(j.largest) }

// largestVerdicts are the headlines of a `largest` result, one per device.
func largestVerdicts(l *result.Largest) []string {
	var out []string
	for i := range l.Devices {
		out = append(out, LargestVerdict(&l.Devices[i]))
	}
	return out
}

// elementLimit is 2^31: the fill element count a signed 32-bit count can hold.
const elementLimit = 1 << 31

// LargestVerdict says what one device's search found: the largest buffer that works against the maximum
// allocation the runtime reports (enforced or not), and the fills that went wrong below sizes another
// pattern filled, by their element counts.
func LargestVerdict(d *result.LargestDevice) string {
	who := fmt.Sprintf("device %d (%s)", d.Index, d.Name)
	v := d.LargestVerifiedBytes
	if d.Interrupted {
		return interruptedVerdict(d, who)
	}
	if v == 0 {
		why := "no try was made"
		if d.BoundBytes < 1<<20 {
			why = fmt.Sprintf("no try was made: the most it could try is %s%s", units.Bytes(d.BoundBytes), boundWhy(d))
		}
		if len(d.Tries) > 0 {
			t := d.Tries[0]
			why = fmt.Sprintf("the first try (%s) %s%s", units.Size(t.SizeBytes), t.Outcome, tryCodeText(t))
		}
		return fmt.Sprintf("No buffer was verified on %s: %s.", who, why)
	}
	s := fmt.Sprintf("The largest buffer that works on %s is %s (created, filled and read back with a %d-byte pattern)", who, units.Size(v), bestPattern(d))
	if !failedAbove(d, v) {
		// Nothing larger failed: the search stopped at its bound, and the device's largest is not known.
		// (A smaller fill of another pattern may have gone wrong: the element-count sentence says so.)
		s = fmt.Sprintf("The largest buffer the search verified on %s is %s (created, filled and read back with a %d-byte pattern), and no larger size was tried, so the largest that works there is at least that", who, units.Size(v), bestPattern(d))
	}
	switch refused := refusedAbove(d); {
	case d.MaxAllocBytes > 0 && float64(v) > 1.01*float64(d.MaxAllocBytes):
		s += fmt.Sprintf(", %.1fx the maximum allocation it reports (%s): the runtime does not enforce its maximum", float64(v)/float64(d.MaxAllocBytes), units.Bytes(d.MaxAllocBytes))
	case refused != nil && float64(v) >= 0.99*float64(d.MaxAllocBytes):
		s += fmt.Sprintf(", the maximum allocation it reports (%s); above it %s returned %d (%s): the runtime enforces its maximum",
			units.Bytes(d.MaxAllocBytes), refused.Call, refused.Code, result.CodeName(refused.Code))
	case d.MaxAllocBytes > 0:
		s += fmt.Sprintf(", %.0f%% of the maximum allocation it reports (%s)", 100*float64(v)/float64(d.MaxAllocBytes), units.Bytes(d.MaxAllocBytes))
	}
	switch {
	case v == d.BoundBytes:
		s += fmt.Sprintf("; that is the most the search tried (%s%s)", units.Bytes(d.BoundBytes), boundWhy(d))
	case v > d.BoundBytes: // an address-space bound falls as a later worker maps more besides its buffer
		s += fmt.Sprintf("; the search could try no larger (its bound fell to %s%s)", units.Bytes(d.BoundBytes), boundWhy(d))
	case d.BoundBy == result.BoundAddressSpace:
		// A try near an address-space bound may fail for the limit (a worker's malloc arenas differ by 64 MiB).
		s += fmt.Sprintf("; the most the search could try was %s%s, and a failure near it may be the limit's", units.Bytes(d.BoundBytes), boundWhy(d))
	}
	if u := d.DeviceUsedAtStartBytes; u != nil && d.GlobalMemBytes > 0 && float64(*u) >= sharedDevice*float64(d.GlobalMemBytes) &&
		float64(v+*u) >= fullFraction*float64(d.GlobalMemBytes) {
		// The search ran in what others left, and went as far as that: the device alone may take a larger
		// buffer. (Where the largest and the memory in use fall well short of the device, something else
		// ended it, and this is not said.)
		s += fmt.Sprintf("; before the first try the device already held %s of its %s (other processes', or what the runtime keeps), so alone it may take a larger buffer",
			units.Bytes(*u), units.Bytes(d.GlobalMemBytes))
	}
	if k := firstKilledAbove(d, v); k != nil {
		s += fmt.Sprintf("; at %s the kernel's OOM killer ended the try: ", units.Size(k.SizeBytes))
		if d.CgroupLimitBytes > 0 {
			s += fmt.Sprintf("the host memory the tool may use ran out (its memory cgroup's limit of %s), not the device's", units.Bytes(d.CgroupLimitBytes))
		} else {
			s += "the host's memory ran out, not the device's"
		}
	}
	if bug := elementCountBug(d); bug != "" {
		s += "; " + bug
	}
	return s + "."
}

// failedAbove says whether a try larger than v ended, any way but verified or interrupted.
func failedAbove(d *result.LargestDevice, v uint64) bool {
	for _, t := range d.Tries {
		if t.SizeBytes > v && t.Outcome.Settled() && t.Outcome != result.TryVerified {
			return true
		}
	}
	return false
}

// firstKilledAbove is the smallest try above v, of any pattern, when the OOM killer ended it; nil when the
// smallest try above v ended any other way.
func firstKilledAbove(d *result.LargestDevice, v uint64) *result.LargestTry {
	var first *result.LargestTry
	for i, t := range d.Tries {
		if t.SizeBytes > v && t.Outcome.Settled() && t.Outcome != result.TryVerified && (first == nil || t.SizeBytes < first.SizeBytes) {
			first = &d.Tries[i]
		}
	}
	if first == nil || first.Outcome != result.TryOOMKilled {
		return nil
	}
	return first
}

// boundWhy says what set the most a search tried, after its size.
func boundWhy(d *result.LargestDevice) string {
	switch d.BoundBy {
	case result.BoundCgroup:
		return fmt.Sprintf(": what the memory cgroup's limit of %s leaves above its reserve; the device's memory is the host's", units.Bytes(d.CgroupLimitBytes))
	case result.BoundHost:
		return ": what the host's available memory leaves above the host reserve; the device's memory is the host's"
	case result.BoundAddressSpace:
		return fmt.Sprintf(": what the address-space limit (ulimit -v) of %s leaves above the %s a worker maps besides its buffer and one more malloc arena of 64 MiB; the device's memory is the host's, mapped in the worker, so the limit bounds the search, not the device",
			units.Bytes(d.AddressSpaceLimitBytes), units.Bytes(d.WorkerMappedBytes))
	case result.BoundMaxBytes:
		return ": --max-bytes"
	case result.BoundDevice:
		return ": the device's global memory"
	}
	return ""
}

// interruptedVerdict says how far an interrupted search got: the largest size verified before the
// interrupt is a lower bound, not the device's largest, and nothing is said of the maximum allocation.
func interruptedVerdict(d *result.LargestDevice, who string) string {
	made, largest := 0, uint64(0)
	for _, t := range d.Tries {
		if t.Outcome.Settled() {
			made++
		}
		if t.Outcome == result.TryVerified {
			largest = max(largest, t.SizeBytes)
		}
	}
	tries := "tries"
	if made == 1 {
		tries = "try"
	}
	s := fmt.Sprintf("The search on %s was interrupted (Ctrl-C) after %d complete %s", who, made, tries)
	if largest == 0 {
		return s + ", before any buffer was verified."
	}
	return s + fmt.Sprintf(": %s was verified before it, a lower bound, not the device's largest.", units.Size(largest))
}

func tryCodeText(t result.LargestTry) string {
	if t.Code == 0 {
		return ""
	}
	return fmt.Sprintf(" with %d (%s) at %s", t.Code, result.CodeName(t.Code), t.Call)
}

// bestPattern is the pattern size that verified the largest buffer.
func bestPattern(d *result.LargestDevice) int {
	best, at := 0, uint64(0)
	for _, p := range d.Patterns {
		if p.LargestVerifiedBytes > at {
			best, at = p.PatternBytes, p.LargestVerifiedBytes
		}
	}
	return best
}

// refusedAbove is the first try above the maximum allocation that the runtime refused at create.
func refusedAbove(d *result.LargestDevice) *result.LargestTry {
	for i, t := range d.Tries {
		if d.MaxAllocBytes > 0 && t.SizeBytes > d.MaxAllocBytes && t.Outcome == result.TryRefused && t.Code == -61 {
			return &d.Tries[i]
		}
	}
	return nil
}

// inFill says a hung try hung in its fill or the wait for it, not in its create: a slow create is no fill
// bug. A try recorded before the stage was (no stage) is taken as the fill's.
func inFill(t result.LargestTry) bool {
	return t.Stage == "" || t.Stage == result.StageTouch || t.Stage == result.StageFinish
}

// elementCountBug names fills that hung or wrote only part at sizes another pattern filled right: memory
// was there, the fill was wrong. Where every such fill had 2^31 elements or more and every verified one
// fewer, the count is said to be the cause.
func elementCountBug(d *result.LargestDevice) string {
	v := d.LargestVerifiedBytes
	var parts []string
	minBad, maxGood := uint64(0), uint64(0)
	for _, p := range d.Patterns {
		var hung, wrong []uint64
		for _, t := range d.Tries {
			if t.PatternBytes != p.PatternBytes {
				continue
			}
			n := t.SizeBytes / uint64(p.PatternBytes)
			switch {
			case t.Outcome == result.TryVerified:
				maxGood = max(maxGood, n)
			case t.SizeBytes <= v && (t.Outcome == result.TryHung && inFill(t) || t.Outcome == result.TryWrong):
				if minBad == 0 || n < minBad {
					minBad = n
				}
				if t.Outcome == result.TryHung {
					hung = append(hung, t.SizeBytes)
				} else {
					wrong = append(wrong, t.SizeBytes)
				}
			}
		}
		if len(hung)+len(wrong) == 0 {
			continue
		}
		var what []string
		if len(hung) > 0 {
			what = append(what, "hung at "+listFirst(hung))
		}
		if len(wrong) > 0 {
			what = append(what, "reported success with the end unfilled at "+listFirst(wrong))
		}
		parts = append(parts, fmt.Sprintf("with a %d-byte pattern the fill %s", p.PatternBytes, strings.Join(what, "; it ")))
	}
	if len(parts) == 0 {
		return ""
	}
	cause := "fills that another pattern size placed went wrong"
	if minBad >= elementLimit && maxGood < elementLimit {
		cause = "fills of 2^31 elements or more (size / pattern size) hang or write only part"
	}
	return cause + " (" + strings.Join(parts, "; ") + "): a driver bug to report"
}

// listFirst lists up to three sizes, smallest first, and how many more.
func listFirst(sizes []uint64) string {
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	var words []string
	for _, s := range sizes[:min(3, len(sizes))] {
		words = append(words, units.Size(s))
	}
	if len(sizes) > 3 {
		return fmt.Sprintf("%s and %d more sizes", strings.Join(words, ", "), len(sizes)-3)
	}
	if n := len(words); n > 1 {
		return strings.Join(words[:n-1], ", ") + " and " + words[n-1]
	}
	return strings.Join(words, ", ")
}
