package findings

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// withLedger gives the strategies of a random run a random resource ledger: descriptors against a limit of
// 1024 that may or may not have run out where the strategy ended, a memory cgroup near or far from its
// limit whose OOM killer may have ended the worker, devices that other processes may have shared, and a
// guard for stopped strategies.
func withLedger(rng *rand.Rand, r *result.Run) {
	for i := range r.Jobs {
		s := &r.Jobs[i]
		rs := &result.Resources{}
		if rng.IntN(2) == 0 {
			per := []float64{0, 0.5, 1, 2}[rng.IntN(4)]
			start := uint64(5 + rng.IntN(60))
			end := min(1024, start+uint64(per*float64(s.AllocationsOK))+uint64(rng.IntN(3)))
			rs.FDs = &result.Resource{AtStart: start, AtEnd: end, Limit: 1024, LimitSource: "ulimit -n"}
			if rng.IntN(4) > 0 {
				rs.FDs.PerBuffer = &per
			}
		}
		if rng.IntN(2) == 0 {
			limit := uint64(1+rng.IntN(4)) << 30
			rs.Cgroup = &result.Cgroup{Version: 1 + rng.IntN(2), Path: "/test", Memory: result.Resource{AtEnd: uint64(rng.Float64() * float64(limit)), Limit: limit}}
			rs.Cgroup.OOMKillsAtStart = uint64(rng.IntN(2))
			rs.Cgroup.OOMKillsAtEnd = rs.Cgroup.OOMKillsAtStart + uint64(rng.IntN(2))
		}
		for _, d := range r.Devices {
			if s.DeviceSampler.WhyNot() != "" { // the fixture says why none measured the devices
				break // the ledger's device figures come from the device sampler's first reading
			}
			led := result.DeviceLedger{Device: d.Index, UsedAtStartBytes: uint64(rng.Float64() * 0.7 * float64(d.GlobalMemBytes))}
			if rng.IntN(2) == 0 {
				led.ProcessesAtEnd = []result.DeviceProcess{{PID: 7, UsedBytes: led.UsedAtStartBytes}, {PID: 8, Own: true, UsedBytes: 1 << 20}}
			}
			rs.Devices = append(rs.Devices, led)
		}
		s.Resources = rs
		if s.Outcome == result.OutcomeStopped && rng.IntN(2) == 0 {
			s.Reason = "host guard: test"
			s.Guard = []result.Guard{result.GuardSystem, result.GuardCgroup}[rng.IntN(2)]
		}
		if s.Outcome == result.OutcomeCrashed && rng.IntN(2) == 0 {
			s.Signal = "SIGKILL"
		}
	}
}

// The rules the findings must keep, written out again here from the README's table rather than taken from
// the code: a limit of file-descriptors only where the descriptors were at their limit or their slope
// predicts the observed index; cgroup-memory only where the cgroup was near its limit, its OOM killer ended
// the worker, or the guard stopped at the cgroup's reserve; no advice to use a touch mode the run used; no
// "memory to spare" while the cgroup was at its limit; no "the device's capacity" where others held a
// twentieth of the device.
func TestLedgerFindingsAgreeWithTheRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	seen := map[result.Limit]int{}
	for n := 0; n < 20000; n++ {
		r := randomRun(rng)
		withLedger(rng, r)
		apply(r)
		all := strings.Join(r.Verdict, "\n")
		if r.Config.Touch != result.TouchNone && strings.Contains(all, "with --touch fill") {
			t.Fatalf("run %d (touch %s) is told to run with --touch fill:\n%s", n, r.Config.Touch, all)
		}
		for i := range r.Jobs {
			s := &r.Jobs[i]
			seen[s.Limit]++
			checkLedgerLimit(t, n, r, s)
		}
	}
	for _, l := range []result.Limit{result.LimitFileDescriptors, result.LimitCgroupMemory, result.LimitDeviceMemory} {
		if seen[l] == 0 {
			t.Errorf("no run was classified %s: the generator does not reach the case", l)
		}
	}
	t.Logf("limits classified: %v", seen)
}

func checkLedgerLimit(t *testing.T, n int, r *result.Run, s *result.JobResult) {
	t.Helper()
	rs := s.Resources
	switch s.Limit {
	case result.LimitFileDescriptors:
		fd := rs.FDs
		observed := float64(s.AllocationsOK)
		if s.FirstFailure != nil && s.Outcome == result.OutcomeFailed {
			observed = float64(s.FirstFailure.Index)
		}
		per := 0.0
		if fd.PerBuffer != nil {
			per = *fd.PerBuffer
		}
		atLimit := float64(fd.AtEnd) >= float64(fd.Limit)-max(0.02*float64(fd.Limit), 2*per)
		predicted := per >= 0.01 && math.Abs(float64(fd.Limit-fd.AtStart)/per-observed) <= max(0.05*observed, 8)
		if !atLimit && !predicted {
			t.Fatalf("run %d: %s is limited by descriptors, but %d of %d were open at the end and the slope %.2f predicts no end at #%.0f",
				n, s.Strategy, fd.AtEnd, fd.Limit, per, observed)
		}
	case result.LimitCgroupMemory:
		cg := rs.Cgroup
		near := cg != nil && cg.Memory.Limit > 0 && float64(cg.Memory.AtEnd) >= 0.9*float64(cg.Memory.Limit)
		killed := cg != nil && s.Signal == "SIGKILL" && cg.OOMKillsAtEnd > cg.OOMKillsAtStart
		guarded := s.Guard == result.GuardCgroup
		if !near && !killed && !guarded {
			t.Fatalf("run %d: %s is limited by its cgroup, which was at %d of %d with no OOM kill and no guard stop", n, s.Strategy, cg.Memory.AtEnd, cg.Memory.Limit)
		}
	}
	cg := rs.Cgroup
	if cg != nil && (float64(cg.Memory.AtEnd) >= 0.9*float64(cg.Memory.Limit) || cg.OOMKillsAtEnd > cg.OOMKillsAtStart) {
		for _, f := range r.Findings {
			if strings.Contains(f.Sentence, "memory to spare") && mentions(f, s) {
				t.Fatalf("run %d: %q of %s, whose cgroup was at its limit", n, f.Sentence, s.Strategy)
			}
		}
	}
	if ff := s.FirstFailure; ff != nil && s.Limit == result.LimitDeviceMemory {
		for _, d := range rs.Devices {
			others, known := d.OthersBytes()
			if !known {
				others = d.UsedAtStartBytes
			}
			if d.Device == ff.Device && float64(others) >= 0.05*float64(globalOf(r, d.Device)) && strings.Contains(r.Verdict[0], "device's capacity") && mentions(r.Findings[0], s) {
				t.Fatalf("run %d: %q, but others held %d of device %d", n, r.Verdict[0], others, d.Device)
			}
		}
	}
}

// mentions says whether a finding is about s.
func mentions(f result.Finding, s *result.JobResult) bool {
	for _, st := range f.Strategies {
		if st == s.Strategy && (len(f.Sizes) == 0 || f.Sizes[0] == s.SizeBytes) {
			return true
		}
	}
	return false
}

func globalOf(r *result.Run, dev int) uint64 {
	for _, d := range r.Devices {
		if d.Index == dev {
			return d.GlobalMemBytes
		}
	}
	return 0
}
