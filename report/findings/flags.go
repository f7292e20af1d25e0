package findings

import (
	"fmt"
	"math"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
)

// rejectedCodes are the codes with which a runtime refuses a buffer's flags or host pointer at create
// (OpenCL 3.0, clCreateBuffer): CL_INVALID_VALUE for flags it does not take, CL_INVALID_HOST_PTR.
var rejectedCodes = map[int32]bool{-30: true, -37: true}

// flagsRejected is the limit of a job whose very first buffer the runtime refused with a code that says
// the flags are wrong, under flags other than the default: no memory was involved.
func flagsRejected(s *result.StrategyResult, ev map[string]float64) (limitFinding, bool) {
	f := s.FirstFailure
	if f == nil || f.Index != 0 || f.Stage != result.StageCreate || !rejectedCodes[f.Code] || s.Flags == "" {
		return limitFinding{}, false
	}
	ev["code"] = float64(f.Code)
	return limitFinding{result.LimitFlags, ev, fmt.Sprintf("the runtime refused the first buffer with %s at create: it does not take flags %s%s, and no memory was involved (flags)",
		codeText(s), s.Flags, vendorNote(s.Flags))}, true
}

// vendorNote names the documented vendor flags among recorded flags, with their vendor: ", whose
// 0x800000 is Intel's CL_MEM_ALLOW_UNRESTRICTED_SIZE_INTEL".
func vendorNote(recorded string) string {
	flags, err := result.JobFlags(recorded)
	if err != nil {
		return ""
	}
	var names []string
	for _, v := range flags.Vendor() {
		names = append(names, fmt.Sprintf("%#x is %s's %s", uint64(v.Value), v.Vendor, v.C))
	}
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// flagEffects compares each job run with other flags against the same job with the default read-write
// flags: the host memory each buffer took (less, for use-host-ptr, the block the tool allocated as the
// buffer's storage, which any program using the flag allocates too), and how far the job got.
func flagEffects(r *result.Run) []result.Finding {
	type key struct {
		st      result.Strategy
		size    uint64
		variant string
	}
	base := map[key]*result.StrategyResult{}
	for i := range r.Strategies {
		if s := &r.Strategies[i]; s.Flags == "" {
			base[key{s.Strategy, s.SizeBytes, s.Variant}] = s
		}
	}
	var out []result.Finding
	for i := range r.Strategies {
		s := &r.Strategies[i]
		if s.Flags == "" {
			continue
		}
		b := base[key{s.Strategy, s.SizeBytes, s.Variant}]
		sentence, ev, ok := flagEffect(s, b)
		if !ok {
			continue
		}
		if s.Variant != "" {
			sentence = "With " + variantLabel(r, s.Variant) + ", " + sentence
		}
		if len(r.Sizes()) > 1 {
			sentence = units.Size(s.SizeBytes) + " buffers: " + sentence
		}
		out = append(out, result.Finding{Kind: result.FindingFlags, Strategies: []result.Strategy{s.Strategy}, Variant: s.Variant, Flags: s.Flags,
			Sizes: []uint64{s.SizeBytes}, Sentence: capitalize(sentence) + ".", Evidence: ev})
	}
	return out
}

// flagEffect is the sentence about one job with flags against its read-write job b (nil where the run has
// none): what a buffer cost the host, and how far it got. ok is false where nothing can be said.
func flagEffect(s, b *result.StrategyResult) (string, map[string]float64, bool) {
	flags, err := result.JobFlags(s.Flags)
	if err != nil || (s.Fit != nil && !s.Fit.OK) || s.AllocationsOK == 0 {
		return "", nil, false
	}
	ev := map[string]float64{"host_bytes_per_buffer": s.HostBytesPerBuffer}
	sentence := fmt.Sprintf("flags %s: %s cost %s of host RSS per buffer", s.Flags, s.Strategy, units.SignedBytes(s.HostBytesPerBuffer))
	if flags.HostPtr() == result.HostPtrUse {
		block := float64(pageRounded(s.SizeBytes))
		runtime := s.HostBytesPerBuffer - block
		ev["tool_block_bytes"], ev["runtime_host_bytes_per_buffer"] = block, runtime
		sentence += fmt.Sprintf(": %s of it is the buffer's own host memory (the block the tool allocates, as a program would), and the runtime adds %s",
			units.Bytes(uint64(block)), units.SignedBytes(runtime))
	}
	if b != nil && (b.Fit == nil || b.Fit.OK) && b.AllocationsOK > 0 {
		ev["read_write_host_bytes_per_buffer"] = b.HostBytesPerBuffer
		sentence += fmt.Sprintf(" (read-write: %s)", units.SignedBytes(b.HostBytesPerBuffer))
		change := float64(s.AllocationsOK)/float64(b.AllocationsOK) - 1
		if math.Abs(change) > variantMoved || s.Outcome != b.Outcome {
			ev["read_write_allocations_ok"], ev["allocations_ok"] = float64(b.AllocationsOK), float64(s.AllocationsOK)
			sentence += fmt.Sprintf("; it %s at #%d where read-write %s at #%d (%+.1f%%)", endVerb(s), s.AllocationsOK, endVerb(b), b.AllocationsOK, 100*change)
		}
	}
	return sentence, ev, true
}

// pageRounded is a host block's size: the tool maps whole pages. Pages are taken as 4 KiB, the size on
// every machine the tool runs on but a few; a larger page shows as runtime cost.
func pageRounded(size uint64) uint64 {
	const page = 4096
	return (size + page - 1) / page * page
}
