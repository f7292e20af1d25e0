package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// enforcing is a runtime that refuses any buffer above its maximum allocation, as PoCL does.
func enforcing(maxAlloc uint64) func(uint64, int) (result.LargestTry, bool) {
	return func(size uint64, p int) (result.LargestTry, bool) {
		if size > maxAlloc {
			return result.LargestTry{SizeBytes: size, PatternBytes: p, Outcome: result.TryRefused, Code: -61}, true
		}
		return result.LargestTry{SizeBytes: size, PatternBytes: p, Outcome: result.TryVerified}, true
	}
}

// moduloFill is the fill the H200's driver was measured to do: the element count taken modulo 2^32 as a
// signed 32-bit number, hanging where that is negative and writing only that many elements otherwise; the
// device's memory ends at capacity.
func moduloFill(capacity uint64) func(uint64, int) (result.LargestTry, bool) {
	return func(size uint64, p int) (result.LargestTry, bool) {
		t := result.LargestTry{SizeBytes: size, PatternBytes: p}
		n := size / uint64(p)
		switch c := int32(uint32(n)); {
		case size > capacity:
			t.Outcome, t.Code = result.TryFailed, -4
		case c < 0:
			t.Outcome = result.TryHung
		case uint64(c) != n:
			t.Outcome = result.TryWrong
		default:
			t.Outcome = result.TryVerified
		}
		return t, true
	}
}

// fixed is a bound no try moves.
func fixed(b uint64) func() uint64 { return func() uint64 { return b } }

// TestSearchKeepsUnderABoundATryLowers: under an address-space limit the first try tells how much the
// worker maps besides its buffer, which lowers the bound; no try after it goes above the new bound, and the
// largest is found within 1% below it. Before, the bound was fixed before the first try, and every doubling
// above the room crashed its worker.
func TestSearchKeepsUnderABoundATryLowers(t *testing.T) {
	const room = 900 * mib // what the limit leaves once the first try reported its worker's mapping
	bound := uint64(21 << 30)
	v, tries := searchLargest(func() uint64 { return bound }, 128, func(size uint64, p int) (result.LargestTry, bool) {
		bound = room
		if size > room {
			return result.LargestTry{SizeBytes: size, PatternBytes: p, Outcome: result.TryCrashed}, true
		}
		return result.LargestTry{SizeBytes: size, PatternBytes: p, Outcome: result.TryVerified}, true
	})
	for _, tr := range tries {
		if tr.SizeBytes > room {
			t.Errorf("a try of %d MiB, above the bound of %d MiB the first try set", tr.SizeBytes>>20, uint64(room)>>20)
		}
	}
	if v != room {
		t.Errorf("largest %d MiB after %d tries; want the bound, %d MiB", v>>20, len(tries), uint64(room)>>20)
	}
}

func TestSearchFindsAnEnforcedMaximum(t *testing.T) {
	const maxAlloc = 1 << 30
	v, tries := searchLargest(fixed(3<<30+512*mib), 128, enforcing(maxAlloc))
	if v > maxAlloc || float64(v) < 0.99*maxAlloc {
		t.Errorf("largest verified %d, want within 1%% below %d", v, maxAlloc)
	}
	refusedAbove := false
	for _, tr := range tries {
		refusedAbove = refusedAbove || (tr.SizeBytes > maxAlloc && tr.Outcome == result.TryRefused && tr.Code == -61)
		if tr.SizeBytes%mib != 0 {
			t.Errorf("a try of %d bytes: not whole MiB", tr.SizeBytes)
		}
	}
	if !refusedAbove || len(tries) > 30 {
		t.Errorf("%d tries, a refusal above the maximum: %v", len(tries), refusedAbove)
	}
}

func TestSearchUnderTheModuloFill(t *testing.T) {
	const capacity = 139 << 30
	for _, c := range []struct {
		pattern      int
		below        uint64 // the first size whose element count reaches 2^31
		wantHungAt   uint64 // a doubling step that hangs
		wantWrongAt  uint64 // one that writes only part
		wantVerified bool   // whether the capacity itself verifies
	}{
		{1, 2 << 30, 2 << 30, 4 << 30, false},
		{4, 8 << 30, 8 << 30, 16 << 30, false},
		{128, 256 << 30, 0, 0, true},
	} {
		v, tries := searchLargest(fixed(capacity), c.pattern, moduloFill(capacity))
		outcome := map[uint64]result.TryOutcome{}
		for _, tr := range tries {
			outcome[tr.SizeBytes] = tr.Outcome
		}
		if c.wantVerified {
			if v != capacity {
				t.Errorf("pattern %d: largest %d, want the capacity %d", c.pattern, v, uint64(capacity))
			}
			continue
		}
		if v >= c.below || float64(v) < 0.99*float64(c.below) {
			t.Errorf("pattern %d: largest verified %d, want within 1%% below %d", c.pattern, v, c.below)
		}
		if outcome[c.wantHungAt] != result.TryHung || outcome[c.wantWrongAt] != result.TryWrong {
			t.Errorf("pattern %d: %d %s, %d %s; want hung and wrong", c.pattern, c.wantHungAt, outcome[c.wantHungAt], c.wantWrongAt, outcome[c.wantWrongAt])
		}
	}
}

// TestSearchStopsAtAnInterrupt: the try in flight at Ctrl-C is kept, marked interrupted, and no size after
// it is tried; an interrupt before a try starts leaves it out. Before, every size after the interrupt was
// "tried" and recorded as crashed.
func TestSearchStopsAtAnInterrupt(t *testing.T) {
	for _, c := range []struct {
		name      string
		at        int  // the try (0-based) the interrupt reaches
		inFlight  bool // in flight (kept, interrupted), or before it starts (not made)
		wantTries int
	}{
		{"during the third doubling", 2, true, 3},
		{"before the third doubling", 2, false, 2},
		{"during the bisection", 7, true, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			verify := enforcing(300 * mib)
			v, tries := searchLargest(fixed(2<<30), 4, func(size uint64, p int) (result.LargestTry, bool) {
				defer func() { n++ }()
				switch {
				case n == c.at && c.inFlight:
					return result.LargestTry{SizeBytes: size, PatternBytes: p, Outcome: result.TryInterrupted}, true
				case n >= c.at:
					return result.LargestTry{}, false
				}
				return verify(size, p)
			})
			if len(tries) != c.wantTries || n != c.at+1 {
				t.Fatalf("%d tries recorded after %d calls; want %d recorded, and no call after the interrupt", len(tries), n, c.wantTries)
			}
			if last := tries[len(tries)-1]; c.inFlight && last.Outcome != result.TryInterrupted {
				t.Errorf("the last try is %s, want the interrupted one", last.Outcome)
			}
			for _, tr := range tries[:c.at] {
				if tr.Outcome == result.TryVerified && tr.SizeBytes > v {
					t.Errorf("%d verified but the search says %d", tr.SizeBytes, v)
				}
			}
		})
	}
}

// TestTheBoundIsWhatTheCgroupLeaves: in a memory cgroup with a limit, a device whose memory is the host's is
// searched no further than the cgroup's free memory above its reserve (the fixture: a pod of 1 GiB with
// 640 MiB in its working set), not the machine's available memory; outside a cgroup, the machine's.
func TestTheBoundIsWhatTheCgroupLeaves(t *testing.T) {
	const reserve = 1 << 30
	hostDevice := result.Device{GlobalMemBytes: 64 << 30, HostUnified: true}
	available := func(tree string) uint64 {
		mi, err := sample.Under("internal/sample/testdata/" + tree).Meminfo()
		if err != nil {
			t.Fatal(err)
		}
		return mi.Available
	}
	const limit, usage, inactive = 1 << 30, 734003200, 62914560 // the fixture's pod1 limit, ctr usage and total_inactive_file
	for _, c := range []struct {
		tree string
		want uint64
		by   result.LargestBound
	}{
		{"cgroup-v1", limit - (usage - inactive) - wire.CgroupReserve(reserve, limit), result.BoundCgroup},
		{"cgroup-none", available("cgroup-none") - reserve, result.BoundHost},
	} {
		root := sample.Under("internal/sample/testdata/" + c.tree)
		bound, by := largestBound(hostDevice, LargestRequest{HostReserve: reserve}, root)
		if bound != c.want&^(mib-1) || by != c.by {
			t.Errorf("%s: bound %d by %s; want %d by %s", c.tree, bound, by, c.want&^(mib-1), c.by)
		}
	}
	// A device with memory of its own is bounded by it alone.
	if bound, by := largestBound(result.Device{GlobalMemBytes: 80 << 30}, LargestRequest{HostReserve: reserve}, sample.Under("internal/sample/testdata/cgroup-v1")); bound != 80<<30 || by != result.BoundDevice {
		t.Errorf("a device's own memory: %d by %s", bound, by)
	}
}

func TestHangLimitFollowsTheMeasuredBandwidth(t *testing.T) {
	tr := &tryer{}
	if tr.hangLimit(1<<30) != firstTryHang {
		t.Errorf("before any fill: %v", tr.hangLimit(1<<30))
	}
	tr.bandwidth = 1 << 30 // 1 GiB/s
	if got := tr.hangLimit(16 << 30); got.Seconds() != 64 {
		t.Errorf("16 GiB at 1 GiB/s: %v, want 64 s (four times the fill)", got)
	}
	if got := tr.hangLimit(1 << 20); got != minTryHang {
		t.Errorf("1 MiB: %v, want the floor", got)
	}
}

// The changes to a shared job over two devices on Intel's platform: the layouts first, the sizes over the
// same bytes, the host-pointer flags, Intel's documented flags, NEO's settings after their control arm.
func TestRemedyChangesOfASharedJobOnNEO(t *testing.T) {
	base := Plan{Devices: []int{0, 1}, Strategies: []result.Strategy{result.Shared}, Sizes: []uint64{1 << 20}, MaxAllocs: 1000}
	cs := RemedyChanges(base, result.Platform{Name: "Intel(R) OpenCL Graphics"})
	names := map[string]Plan{}
	var order []string
	for _, c := range cs {
		names[c.Name], order = c.Plan, append(order, c.Name)
	}
	if order[0] != "one context per device" || names["one context per device"].Strategies[0] != result.PerDevice {
		t.Errorf("first change %q", order[0])
	}
	if p := names["buffers 4x as large, the same bytes"]; p.Sizes[0] != 4<<20 || p.MaxAllocs != 250 || p.MaxBytes != 1000<<20 {
		t.Errorf("larger buffers: %+v", p)
	}
	control, pool := -1, -1
	for i, n := range order {
		switch {
		case n == "NEOReadDebugKeys=1 alone (the control arm of NEO's keys)":
			control = i
		case n == "settings ExperimentalSmallBufferPoolAllocator=0 NEOReadDebugKeys=1":
			pool = i
		}
	}
	if control < 0 || pool < control {
		t.Errorf("NEO's keys without a control arm first: %v", order)
	}
	if _, ok := names["CL_MEM_ALLOW_UNRESTRICTED_SIZE_INTEL (Intel's flag)"]; !ok {
		t.Errorf("no Intel flag among %v", order)
	}
	// The base plan is left as it was: each change has its own copy.
	if base.Strategies[0] != result.Shared || base.Sizes[0] != 1<<20 {
		t.Errorf("the base plan changed: %+v", base)
	}
	// On another vendor's platform neither Intel's flags nor NEO's keys are tried.
	for _, c := range RemedyChanges(base, result.Platform{Name: "NVIDIA CUDA"}) {
		if strings.Contains(c.Name, "INTEL") || strings.Contains(c.Name, "NEO") {
			t.Errorf("on NVIDIA: %q", c.Name)
		}
	}
}

// TestHangLimitCoversASlowCreate: a create that took 5.5 s at 64 MiB (rusticl took seconds to create what
// it filled in milliseconds) gives the next doubling four times the create scaled from that try, 44 s, not
// the 5 s floor; a create of 5.5 s seen at 64 GiB gives 79 GiB a limit set by its fill, not hours scaled
// from a small try's seconds per byte.
func TestHangLimitCoversASlowCreate(t *testing.T) {
	const bandwidth = 1e9 // bytes per second: 64 MiB fills in 67 ms
	small := &tryer{bandwidth: bandwidth, slowestCreate: 5.5, createdSeconds: 5.5, createdSize: 64 * mib}
	if got, want := small.hangLimit(128*mib), 44*time.Second; got != want {
		t.Errorf("after a 5.5 s create at 64 MiB, 128 MiB's hang limit is %s, want %s", got, want)
	}
	large := &tryer{bandwidth: bandwidth, slowestCreate: 5.5, createdSeconds: 5.5, createdSize: 64 << 30}
	fill := 4 * float64(79<<30) / bandwidth
	if got := large.hangLimit(79 << 30).Seconds(); got < fill || got > fill+1 {
		t.Errorf("after a 5.5 s create at 64 GiB, 79 GiB's hang limit is %.0f s, want its fill's %.0f s", got, fill)
	}
}
