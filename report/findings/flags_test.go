package findings

import (
	"slices"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// rejected is a job whose first buffer the runtime refused with code under flags.
func rejected(st result.Strategy, flags string, code int32, name string) result.JobResult {
	s := job(st, result.OutcomeFailed, 0, 0, 1)
	s.Flags = flags
	s.FirstFailure = &result.FirstFailure{Index: 0, Stage: result.StageCreate, Code: code, Name: name, Call: "clCreateBuffer"}
	return s
}

// A flag set the runtime refuses is classified as the flags, and leads the verdict of a sweep whose read-write
// jobs completed; a refusal under read-write itself is no flags limit.
func TestRejectedFlagsLeadTheSweep(t *testing.T) {
	devs := []result.Device{{Index: 0, Name: "d", GlobalMemBytes: 8 << 30}, {Index: 1, Name: "d", GlobalMemBytes: 8 << 30}}
	r := &result.Run{Config: result.Config{Touch: result.TouchFill, MaxAllocs: 100, FlagSets: []string{"read-write", "0x800000"}}, Devices: devs,
		Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, 100, 0, 1), rejected(result.Shared, "0x800000", -30, "CL_INVALID_VALUE")}}
	j := Judge(r)
	if l := j.Limit(&j.Run().Jobs[1]); l.Limit != result.LimitFlags {
		t.Errorf("limit %q, want flags", l.Limit)
	}
	h := j.Findings()[0]
	if h.About != result.FindingFailure || h.Flags != "0x800000" || !slices.Equal(h.Strategies, []result.Strategy{result.Shared}) {
		t.Errorf("headline %+v: want shared's failure under the refused set", h)
	}
	// The vendor's name of the flag is prose with no figure: the headline's sentence says it, the golden
	// file's words.
	goldenLines(t, "flags-refused", []string{h.Sentence})
	plain := &result.Run{Config: result.Config{Touch: result.TouchFill, MaxAllocs: 100}, Devices: devs,
		Jobs: []result.JobResult{rejected(result.Shared, "", -30, "CL_INVALID_VALUE")}}
	if l := limitOf(t, Judge(plain), result.Shared, 0); l.Limit == result.LimitFlags {
		t.Errorf("read-write refused at #0 was called a flags limit: %+v", l)
	}
}

// use-host-ptr's host cost is split into the tool's block (the buffer's size, in whole pages) and what the
// runtime adds, and compared with read-write's.
func TestUseHostPtrCostNamesTheBlock(t *testing.T) {
	const size = 3*4096 + 100 // not a whole page: the block is four pages
	rw, use := job(result.Shared, result.OutcomeCompleted, 100, 0), job(result.Shared, result.OutcomeCompleted, 100, 0)
	rw.SizeBytes, use.SizeBytes, use.Flags = size, size, "use-host-ptr"
	rw.HostBytesPerBuffer, use.HostBytesPerBuffer = 300, 4*4096+500
	r := &result.Run{Jobs: []result.JobResult{rw, use}}
	e, ok := newFlagEffect(&r.Jobs[1], &r.Jobs[0])
	f := flagFinding(r, []flagEffect{e})
	sentence, ev := f.Sentence, f.Evidence
	if !ok || ev["tool_block_bytes"] != 4*4096 || ev["runtime_host_bytes_per_buffer"] != 500 {
		t.Fatalf("%q %v: want a block of 4 pages and 500 bytes from the runtime", sentence, ev)
	}
	if ev["read_write_host_bytes_per_buffer"] != 300 {
		t.Errorf("evidence %v: want read-write's 300 bytes per buffer beside it", ev)
	}
	// The sentence of a flags finding states its evidence (the block, what the runtime adds, read-write's):
	// the golden file's words.
	goldenLines(t, "flags-use-host-ptr", []string{sentence})
}

// The strategies of one flag set whose reach the flags did not move share one finding, with the range of
// their figures; a strategy whose reach moved keeps its own.
func TestFlagSetStrategiesShareOneFinding(t *testing.T) {
	var r result.Run
	for _, st := range []result.Strategy{result.Shared, result.PerDevice, result.MigrateFirst} {
		rw, alloc := job(st, result.OutcomeCompleted, 100, 0), job(st, result.OutcomeCompleted, 100, 0)
		rw.HostBytesPerBuffer, alloc.HostBytesPerBuffer, alloc.Flags = 600, 4000, "alloc-host-ptr"
		if st == result.PerDevice {
			alloc.HostBytesPerBuffer = 4300
		}
		if st == result.MigrateFirst {
			alloc.Outcome, alloc.AllocationsOK = result.OutcomeFailed, 50
		}
		r.Jobs = append(r.Jobs, rw, alloc)
	}
	fs := flagEffects(&r)
	if len(fs) != 2 {
		t.Fatalf("%d findings, want 2 (one for the unmoved pair, one for the moved job): %v", len(fs), fs)
	}
	moved, pair := fs[0], fs[1]
	if len(moved.Strategies) != 1 || moved.Strategies[0] != result.MigrateFirst || moved.Evidence["allocations_ok"] != 50 {
		t.Errorf("the moved job's finding: %+v", moved)
	}
	if len(pair.Strategies) != 2 || pair.Evidence["host_bytes_per_buffer_min"] != 4000 || pair.Evidence["host_bytes_per_buffer_max"] != 4300 {
		t.Errorf("the pair's finding: %+v", pair)
	}
	// Costs far apart (a buffer's size against a few hundred bytes) are two findings, not one range.
	r.Jobs[3].HostBytesPerBuffer = 1 << 20
	if fs := flagEffects(&r); len(fs) != 3 {
		t.Errorf("%d findings for costs 4000 B and 1 MiB under one set, want them apart (3 in all)", len(fs))
	}
}

// A flag set's host cost per buffer is said under one label, once: in its flag set's finding against
// read-write, not again in the group's cost finding (which keeps the rest of what a buffer cost).
func TestAFlagSetsHostCostIsSaidOnce(t *testing.T) {
	fit := &result.Fit{Samples: 50, Spanned: 100, OK: true}
	sys := float64(mib)
	var r result.Run
	for _, flags := range []string{"", "use-host-ptr"} {
		j := job(result.Shared, result.OutcomeCompleted, 100, 0)
		j.Flags, j.Fit, j.SystemBytesPerBuffer = flags, fit, &sys
		j.HostBytesPerBuffer = 700
		if flags != "" {
			j.HostBytesPerBuffer = mib + 1900
		}
		r.Jobs = append(r.Jobs, j)
	}
	fs := Judge(&r).Findings()
	host := r.Jobs[1].HostBytesPerBuffer
	var carry []result.FindingKind
	for _, f := range fs {
		if v, ok := f.Evidence["host_bytes_per_buffer"]; ok && v == host {
			carry = append(carry, f.Kind)
		}
	}
	if !slices.Equal(carry, []result.FindingKind{result.FindingFlags}) {
		t.Errorf("use-host-ptr's host cost %v is carried by %v, want the flags finding only:\n%s", host, carry, sentences(fs))
	}
	var cost []result.Finding
	for _, f := range findingsOf(fs, result.FindingCost, result.Shared) {
		if f.Flags == "use-host-ptr" {
			cost = append(cost, f)
		}
	}
	if len(cost) != 1 {
		t.Fatalf("%d cost findings of use-host-ptr, want 1:\n%s", len(cost), sentences(fs))
	}
	wantEvidence(t, cost[0], map[string]float64{"system_bytes_per_buffer": sys})
}
