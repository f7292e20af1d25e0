package main

// End-to-end tests of `clmemprobe largest`: the real binary on PoCL, which enforces the maximum allocation
// it reports, and on the fault-injection runtime through the real ICD loader modelling a driver whose fill
// takes its element count modulo 2^32 (FAULTCL_FILL=modulo), as the H200's was measured to.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/judge"
)

// largestOf runs largest --format json and decodes it.
func largestOf(t *testing.T, env []string, args ...string) *result.Largest {
	t.Helper()
	res := runTool(t, env, append([]string{"largest", "--format", "json", "-q"}, args...)...)
	if res.code != 0 {
		t.Fatalf("largest %v: exit %d: %s", args, res.code, res.stderr)
	}
	var l result.Largest
	if err := json.Unmarshal([]byte(res.stdout), &l); err != nil || l.Kind != result.LargestKind || len(l.Devices) == 0 {
		t.Fatalf("largest's JSON: %v: %s", err, res.stdout)
	}
	// The headlines are the judge's of the devices' figures (its words: report/findings' tests and report's
	// golden largest files); the tests hold the figures.
	if want := judge.Largest(&l).Verdict(); !slices.Equal(l.Verdict, want) {
		t.Fatalf("largest's verdict %q, want the judge's %q", l.Verdict, want)
	}
	return &l
}

// PoCL refuses a buffer over its reported maximum with -61: the largest verified is within 1% of it, a try
// above it is refused with -61, and the headline says the maximum is enforced.
func TestLargestOnPoCLFindsItsEnforcedMaximum(t *testing.T) {
	// PoCL's device memory is the host's, and its maximum allocation a share of it (8 GiB of 21.5 GiB on a
	// 24 GiB machine): POCL_MEMORY_LIMIT=1 (GiB) makes a device of 1 GiB with a maximum of 256 MiB, which
	// the search finds in 5 s where the machine-sized one took a minute.
	env := append(PoCLEnv(t), "POCL_MEMORY_LIMIT=1")
	// The search tries sizes above the maximum only where the host can spare them. A machine short of
	// memory is no fault of the code.
	if avail, need := memAvailable(t), maxAllocOf(t, env)+poclReserve+512<<20; avail < need {
		t.Skipf("needs %d MiB of available memory to try PoCL's maximum allocation and more; has %d MiB", need>>20, avail>>20)
	}
	l := largestOf(t, env, "--devices", "0", "--patterns", "128")
	d := l.Devices[0]
	if d.LargestVerifiedBytes > d.MaxAllocBytes || float64(d.LargestVerifiedBytes) < 0.99*float64(d.MaxAllocBytes) {
		t.Errorf("largest verified %d, reported maximum %d: want within 1%% below it (bound %d by %s; tries %s)", d.LargestVerifiedBytes, d.MaxAllocBytes,
			d.BoundBytes, d.BoundBy, triesText(d.Tries))
	}
	refused := false
	for _, tr := range d.Tries {
		refused = refused || (tr.SizeBytes > d.MaxAllocBytes && tr.Outcome == result.TryRefused && tr.Code == -61)
	}
	if !refused {
		t.Errorf("no try above the maximum refused with -61: the runtime enforces its maximum: %+v", d.Tries)
	}
}

// triesText is a search's tries, one clause each, for a failure's message: what ended each and when.
func triesText(tries []result.LargestTry) string {
	var out []string
	for _, tr := range tries {
		out = append(out, fmt.Sprintf("%d MiB %s (code %d, %s, %.1f s, %s)", tr.SizeBytes>>20, tr.Outcome, tr.Code, tr.Stage, tr.Seconds, tr.Detail))
	}
	return strings.Join(out, "; ")
}

// On faultcl's modulo fill with 20 GiB of device memory, a 1-byte fill of 2 GiB (2^31 elements) hangs and
// one of 4 GiB reports success with nothing written; with 128 bytes every size up to the device's memory
// verifies, 4x the maximum faultcl reports (a quarter of its memory), which it does not enforce.
func TestLargestNamesTheElementCountBug(t *testing.T) {
	const mem = 20 << 30
	env := FaultEnv(t, "FAULTCL_MODEL=lazy", "FAULTCL_FILL=modulo", "FAULTCL_DEVICES=1", "FAULTCL_DEVICE_MEM=21474836480")
	l := largestOf(t, env, "--patterns", "1,128")
	d := l.Devices[0]
	outcome := map[[2]uint64]result.TryOutcome{}
	for _, tr := range d.Tries {
		outcome[[2]uint64{tr.SizeBytes, uint64(tr.PatternBytes)}] = tr.Outcome
	}
	if outcome[[2]uint64{2 << 30, 1}] != result.TryHung || outcome[[2]uint64{4 << 30, 1}] != result.TryWrong {
		t.Errorf("1-byte fills of 2 and 4 GiB: %s and %s, want hung and wrong", outcome[[2]uint64{2 << 30, 1}], outcome[[2]uint64{4 << 30, 1}])
	}
	if d.LargestVerifiedBytes != mem {
		t.Errorf("largest verified %d, want the device's %d", d.LargestVerifiedBytes, uint64(mem))
	}
	if d.LargestVerifiedBytes != 4*d.MaxAllocBytes {
		t.Errorf("largest verified %d, maximum allocation %d: want 4x, a maximum not enforced", d.LargestVerifiedBytes, d.MaxAllocBytes)
	}
}

// run --touch fill proves placement: on faultcl's modulo fill, a 16 GiB buffer is filled with a pattern
// that keeps the count under 2^31 (16 bytes) and reads back right; on a runtime whose fills write nothing
// (FAULTCL_FILL=none), the job is wrong after 0 buffers, never placed ones, and the run exits 5.
func TestTouchFillProvesPlacement(t *testing.T) {
	lazy := []string{"FAULTCL_MODEL=lazy", "FAULTCL_DEVICES=1", "FAULTCL_DEVICE_MEM=34359738368"}
	r, res, _ := runOut(t, FaultEnv(t, append(lazy, "FAULTCL_FILL=modulo")...), "--touch", "fill", "--size", "16GiB", "--strategies", "shared", "--max-allocs", "1", "--host-reserve", "0", "-q")
	if s := r.Jobs[0]; s.Outcome != result.OutcomeCompleted || s.AllocationsOK != 1 {
		t.Errorf("16 GiB on the modulo fill: %s after %d (%s), want the one buffer placed and proven: %s", s.Outcome, s.AllocationsOK, s.Reason, res.stderr)
	}
	r, res, _ = runOut(t, FaultEnv(t, append(lazy, "FAULTCL_FILL=none")...), "--touch", "fill", "--strategies", "shared", "--max-allocs", "100", "-q")
	s := r.Jobs[0]
	if res.code != exitWorkerFault || s.Outcome != result.OutcomeWrong || s.AllocationsOK != 0 || s.Limit != result.LimitRuntime {
		t.Errorf("fills that write nothing: exit %d, %s after %d, limit %s", res.code, s.Outcome, s.AllocationsOK, s.Limit)
	}
	if want := "the runtime reported the fill of buffer #0 (1 MiB, a 4-byte pattern: 262144 elements) done, and its byte at offset 1044480 reads back 0x00, not the fill's 0xa5"; s.Reason != want {
		t.Errorf("reason %q, want %q", s.Reason, want)
	}
}

// TestLargestMaxBytesSearchesAboveTheReportedMemory: --max-bytes is the top of the search even above the
// device's reported memory, where a runtime that does not enforce it is found. faultcl's one device reports
// 256 MiB and places up to 1 GiB (FAULTCL_OVERCOMMIT): every try up to 1 GiB verifies, and since nothing
// larger failed the headline says the largest is at least that, not that it is the largest. Before, the
// search stopped at 256 MiB and called it the largest buffer that works.
func TestLargestMaxBytesSearchesAboveTheReportedMemory(t *testing.T) {
	const reported, top = 256 << 20, 1 << 30
	env := FaultEnv(t, "FAULTCL_DEVICES=1", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", reported), "FAULTCL_OVERCOMMIT=1")
	l := largestOf(t, env, "--patterns", "128", "--max-bytes", "1GiB")
	d := l.Devices[0]
	if d.GlobalMemBytes != reported || d.BoundBy != result.BoundMaxBytes || d.BoundBytes != top || d.LargestVerifiedBytes != top {
		t.Fatalf("reported %d, bound %d by %q, largest %d; want every size up to --max-bytes (%d) tried and verified", d.GlobalMemBytes, d.BoundBytes, d.BoundBy, d.LargestVerifiedBytes, top)
	}
	for _, tr := range d.Tries {
		if tr.Outcome != result.TryVerified {
			t.Errorf("%d MiB %s; want verified", tr.SizeBytes>>20, tr.Outcome)
		}
	}

}

// TestLargestWaitsForASlowCreate: a runtime that takes 5.5 s in every clCreateBuffer (faultcl's
// FAULTCL_SLOW_US), as rusticl took up to 9 s while other work ran, is slow, not hung: after the first try
// measured the create, the next try's hang limit covers it, and both tries verify. Before, the second try
// (128 MiB, whose fill takes milliseconds) was "hung" at the 5 s floor.
func TestLargestWaitsForASlowCreate(t *testing.T) {
	const slow = 5.5
	env := FaultEnv(t, "FAULTCL_DEVICES=1", fmt.Sprintf("FAULTCL_SLOW_US=%d", int(slow*1e6)))
	d := largestOf(t, env, "--patterns", "128", "--max-bytes", "128MiB").Devices[0]
	if len(d.Tries) != 2 || d.LargestVerifiedBytes != 128<<20 {
		t.Fatalf("%d tries, largest %d; want 64 and 128 MiB, both verified: %+v", len(d.Tries), d.LargestVerifiedBytes, d.Tries)
	}
	for _, tr := range d.Tries {
		if tr.Outcome != result.TryVerified || tr.CreateSeconds < slow {
			t.Errorf("%d MiB: %s (%s), create %.1f s; want verified after a create of at least %.1f s", tr.SizeBytes>>20, tr.Outcome, tr.Detail, tr.CreateSeconds, slow)
		}
	}
}

// TestLargestNamesWhatOthersHeld: another process holds 256 MiB of faultcl's 1 GiB device (FAULTCL_HELD),
// as holdmem held 20 GiB of the H100: the search finds what the others left (within its 1% below 768 MiB),
// records the device's use before the first try, and the headline says that the device alone may take
// more. Before, it said only "the largest buffer that works on device 0 is 768 MiB". Without the other
// process, the device held nothing before, and the headline says nothing of it.
func TestLargestNamesWhatOthersHeld(t *testing.T) {
	const mem, held = 1 << 30, 256 << 20
	for _, h := range []uint64{held, 0} {
		env := FaultEnv(t, "FAULTCL_DEVICES=1", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", mem), fmt.Sprintf("FAULTCL_HELD=%d", h))
		l := largestOf(t, env, "--patterns", "128")
		d := l.Devices[0]
		room := float64(mem - h)
		if v := float64(d.LargestVerifiedBytes); v > room || v < 0.99*room {
			t.Errorf("held %d: largest %d, want within 1%% below the %0.f the other process left", h, d.LargestVerifiedBytes, room)
		}
		if u := d.DeviceUsedAtStartBytes; u == nil || *u != h {
			t.Errorf("held %d: device use before the first try %v, want %d", h, u, h)
		}

	}
}
