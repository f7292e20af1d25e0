package findings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
)

// rejectedCodes are the codes with which a runtime refuses a buffer's flags or host pointer at create
// (OpenCL 3.0, clCreateBuffer): CL_INVALID_VALUE for flags it does not take, CL_INVALID_HOST_PTR.
var rejectedCodes = map[int32]bool{-30: true, -37: true}

// flagsRejected is the limit of a job whose very first buffer the runtime refused with a code that says
// the flags are wrong, under flags other than the default: no memory was involved.
func flagsRejected(v *limitInput, ev map[string]float64) (limitFinding, bool) {
	f := v.failure
	if f == nil || f.index != 0 || f.stage != result.StageCreate || !rejectedCodes[f.code] || v.flags == "" {
		return limitFinding{}, false
	}
	ev["code"] = float64(f.code)
	return limitFinding{result.LimitFlags, ev, fmt.Sprintf("the runtime refused the first buffer with %s at create: it does not take flags %s%s, and no memory was involved (flags)",
			codeText(f.name, f.code, v.reason), v.flags, vendorNote(v.flags)), nil},
		true
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
// buffer's storage, which any program using the flag allocates too), and how far the job got. The
// strategies of one flag set whose reach the flags did not move, and whose costs are within the comparisons' tolerance of
// each other, share one finding, their figures given as a range: the flag set is the fact, and the
// strategies' small differences are not news.
func flagEffects(r *result.Run) []result.Finding {
	byKey, keys := jobsByKey(r)
	readWrite := result.FlagsName("")
	type setKey struct {
		flags, variant string
		size           uint64
	}
	var order []setKey
	sets := map[setKey][]flagEffect{}
	var out []result.Finding
	for i := range r.Jobs {
		s := &r.Jobs[i]
		if keys[i].Flags == readWrite {
			continue
		}
		e, ok := newFlagEffect(s, byKey[keys[i].WithFlags("")])
		if !ok {
			continue
		}
		if e.moved != "" { // a flag set that moved this job's reach is said job by job
			out = append(out, flagFinding(r, []flagEffect{e}))
			continue
		}
		k := setKey{s.Flags, s.Variant, s.SizeBytes}
		if _, seen := sets[k]; !seen {
			order = append(order, k)
		}
		sets[k] = append(sets[k], e)
	}
	for _, k := range order {
		// Strategies whose costs under the set differ by more than the tolerance are told apart: a range
		// from 313 B to 1.01 MiB would say nothing of either.
		for rest := sets[k]; len(rest) > 0; {
			var near, far []flagEffect
			for _, e := range rest {
				if !comparison.Moved(e.host, rest[0].host, comparison.Tolerance) {
					near = append(near, e)
				} else {
					far = append(far, e)
				}
			}
			out = append(out, flagFinding(r, near))
			rest = far
		}
	}
	return out
}

// flagEffect is one job with flags against its read-write job: what a buffer cost the host, and how far
// it got.
type flagEffect struct {
	s                *result.JobResult
	host, runtime    float64 // host RSS per buffer; less the tool's own block (use-host-ptr)
	block            float64 // the block the tool allocates per buffer for use-host-ptr; 0 otherwise
	readWrite        float64 // the read-write job's host RSS per buffer, where hasReadWrite
	hasReadWrite     bool
	moved            string // "; it failed at #N where read-write ...", where the flags moved the reach
	movedOK, movedRW uint64
}

// newFlagEffect measures job s against its read-write job b (nil where the run has none). ok is false
// where nothing can be said.
func newFlagEffect(s, b *result.JobResult) (flagEffect, bool) {
	flags, err := result.JobFlags(s.Flags)
	if err != nil || (s.Fit != nil && !s.Fit.OK) || s.AllocationsOK == 0 {
		return flagEffect{}, false
	}
	e := flagEffect{s: s, host: s.HostBytesPerBuffer}
	if flags.HostPtr() == result.HostPtrUse {
		e.block = float64(pageRounded(s.SizeBytes))
		e.runtime = s.HostBytesPerBuffer - e.block
	}
	if b != nil && (b.Fit == nil || b.Fit.OK) && b.AllocationsOK > 0 {
		e.readWrite, e.hasReadWrite = b.HostBytesPerBuffer, true
		change := float64(s.AllocationsOK)/float64(b.AllocationsOK) - 1
		if countMoved(s.AllocationsOK, b.AllocationsOK) || s.Outcome != b.Outcome {
			e.movedOK, e.movedRW = s.AllocationsOK, b.AllocationsOK
			e.moved = fmt.Sprintf("; it %s at #%d where read-write %s at #%d (%+.1f%%)", endVerb(s), s.AllocationsOK, endVerb(b), b.AllocationsOK, 100*change)
		}
	}
	return e, true
}

// flagFinding is the finding of one flag set's jobs (one job where its reach moved): their host cost per
// buffer, a range where the strategies differ, against read-write's. Its evidence is the first job's
// figures, and the range's ends where there are several.
func flagFinding(r *result.Run, es []flagEffect) result.Finding {
	s := es[0].s
	who := make([]result.Strategy, len(es))
	for i, e := range es {
		who[i] = e.s.Strategy
	}
	pick := func(f func(flagEffect) float64) []float64 {
		out := make([]float64, len(es))
		for i, e := range es {
			out[i] = f(e)
		}
		return out
	}
	hosts := pick(func(e flagEffect) float64 { return e.host })
	ev := map[string]float64{"host_bytes_per_buffer": es[0].host}
	addRange(ev, "host_bytes_per_buffer", hosts)
	sentence := fmt.Sprintf("flags %s: %s cost %s of host RSS per buffer", s.Flags, names(who), byteRange(hosts))
	if es[0].block > 0 {
		runtimes := pick(func(e flagEffect) float64 { return e.runtime })
		ev["tool_block_bytes"], ev["runtime_host_bytes_per_buffer"] = es[0].block, es[0].runtime
		addRange(ev, "runtime_host_bytes_per_buffer", runtimes)
		sentence += fmt.Sprintf(": %s of it is the buffer's own host memory (the block the tool allocates, as a program would), and the runtime adds %s",
			units.Bytes(uint64(es[0].block)), byteRange(runtimes))
	}
	var rws []float64
	for _, e := range es {
		if e.hasReadWrite {
			rws = append(rws, e.readWrite)
		}
	}
	if len(rws) > 0 {
		ev["read_write_host_bytes_per_buffer"] = rws[0]
		addRange(ev, "read_write_host_bytes_per_buffer", rws)
		sentence += fmt.Sprintf(" (read-write: %s)", byteRange(rws))
	}
	if e := es[0]; e.moved != "" {
		ev["read_write_allocations_ok"], ev["allocations_ok"] = float64(e.movedRW), float64(e.movedOK)
		sentence += e.moved
	}
	if s.Variant != "" {
		sentence = "With " + variantLabel(r, s.Variant) + ", " + sentence
	}
	if len(r.Sizes()) > 1 {
		sentence = units.Size(s.SizeBytes) + " buffers: " + sentence
	}
	return result.Finding{Kind: result.FindingFlags, Strategies: who, Variant: s.Variant, Flags: s.Flags,
		Sizes: []uint64{s.SizeBytes}, Sentence: capitalize(sentence) + ".", Evidence: ev}
}

// byteRange is figures as one size where they print alike, else "least to most".
func byteRange(vs []float64) string {
	lo, hi := slices.Min(vs), slices.Max(vs)
	if a, b := units.SignedBytes(lo), units.SignedBytes(hi); a != b {
		return a + " to " + b
	}
	return units.SignedBytes(lo)
}

// addRange records the ends of a range of figures under key_min and key_max, where there are several.
func addRange(ev map[string]float64, key string, vs []float64) {
	if len(vs) > 1 {
		ev[key+"_min"], ev[key+"_max"] = slices.Min(vs), slices.Max(vs)
	}
}

// pageRounded is a host block's size: the tool maps whole pages. Pages are taken as 4 KiB, the size on
// every machine the tool runs on but a few; a larger page shows as runtime cost.
func pageRounded(size uint64) uint64 {
	const page = 4096
	return (size + page - 1) / page * page
}
