package worker

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// fakeMeminfo is a fixture root whose /proc/meminfo says avail bytes are available; set rewrites it.
func fakeMeminfo(t *testing.T, avail uint64) (sample.Root, func(uint64)) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	set := func(a uint64) {
		text := fmt.Sprintf("MemTotal: %d kB\nMemAvailable: %d kB\nCommitted_AS: 0 kB\n", 64<<20, a>>10)
		if err := os.WriteFile(filepath.Join(dir, "proc", "meminfo"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set(avail)
	return sample.Under(dir), set
}

// farFromReserve is the rule stopBefore's quick answer must keep: buffer i needs no fresh reading while
// the last reading, less the cost of the buffers made since, stays four buffers and farMargin above the
// reserve.
func farFromReserve(avail, at, i uint64, cost float64, reserve uint64) bool {
	predicted := float64(avail) - float64(i-min(i, at))*cost
	return predicted-4*cost-farMargin > float64(reserve)
}

// noCgroup is a guard without a memory cgroup.
var noCgroup *sample.Cgroup

func TestGuardQuietBoundMatchesThePrediction(t *testing.T) {
	root, _ := fakeMeminfo(t, 8<<30)
	for _, c := range []struct {
		name          string
		avail, at     uint64
		cost          float64
		reserve       uint64
		from, through uint64
	}{
		{name: "1 MiB buffers, far", avail: 8 << 30, at: 100, cost: 1 << 20, reserve: 1 << 30, from: 0, through: 8000},
		{name: "cost not a divisor of the headroom", avail: 5<<30 + 12345, at: 7, cost: 3<<20 + 17, reserve: 1 << 30, from: 0, through: 2000},
		{name: "headroom an exact multiple of the cost", avail: 1<<30 + farMargin + 4<<20 + 10<<20, at: 0, cost: 1 << 20, reserve: 1 << 30, from: 0, through: 40},
		{name: "already within reach", avail: 1<<30 + farMargin, at: 50, cost: 1 << 20, reserve: 1 << 30, from: 0, through: 100},
		{name: "buffers that cost nothing", avail: 8 << 30, at: 3, cost: 0, reserve: 1 << 30, from: 0, through: 1 << 20},
		{name: "small cost, large count", avail: 20 << 30, at: 1e6, cost: 1.5, reserve: 1 << 30, from: 1e6, through: 1e6 + 5000},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newHostGuard(root, c.reserve, 1<<20, noCgroup, 0)
			g.mu.Lock()
			g.last.room, g.at, g.cost = float64(c.avail)-float64(c.reserve), c.at, c.cost
			g.setQuietBelow()
			g.mu.Unlock()
			q := g.quietBelow.Load()
			for i := c.from; i <= c.through; i++ {
				if want := farFromReserve(c.avail, c.at, i, c.cost, c.reserve); (i < q) != want {
					t.Fatalf("buffer %d: quiet %v (bound %d), the prediction says far %v", i, i < q, q, want)
				}
			}
		})
	}
}

func TestGuardWithoutReserveNeverStops(t *testing.T) {
	root, _ := fakeMeminfo(t, 0)
	g := newHostGuard(root, 0, 1<<20, noCgroup, 0)
	if _, stop := g.stopBefore(math.MaxUint64-1, 0); stop {
		t.Fatal("a zero reserve stopped the loop")
	}
}

// TestGuardStopsBeforeTheReserve: with buffers that each take 1 MiB of available memory, the guard lets
// the loop go on while one more buffer (and those still in flight) stays above the reserve, and stops it
// at the buffer that would cross it.
func TestGuardStopsBeforeTheReserve(t *testing.T) {
	const mib = 1 << 20
	reserve := uint64(512 * mib)
	start := reserve + 100*mib
	root, set := fakeMeminfo(t, start)
	g := newHostGuard(root, reserve, mib, noCgroup, 0)
	for i := uint64(0); ; i++ {
		set(start - i*mib) // buffers 0..i-1 took their memory
		_, stop := g.stopBefore(i, i)
		if crosses := start-i*mib-mib < reserve; stop != crosses {
			t.Fatalf("buffer %d: stop %v, but one more buffer crosses the reserve: %v", i, stop, crosses)
		}
		if stop {
			if i != 100 {
				t.Fatalf("stopped at buffer %d, want 100 (the reserve is 100 MiB below available memory)", i)
			}
			return
		}
	}
}

// TestGuardStopReasonAddsUp: with 10 buffers made and not yet settled, the guard stops where free memory
// less those and the next crosses the reserve, while one buffer alone would not: the reason counts all 11
// at their cost, so that its figures add up. It said "less one more buffer" before, and a user read
// "116.25 MiB free ... below its reserve 64 MiB".
func TestGuardStopReasonAddsUp(t *testing.T) {
	const mib = 1 << 20
	reserve := uint64(64 * mib)
	free := reserve + 5*mib // room for 5 buffers: one more fits, eleven do not
	root, _ := fakeMeminfo(t, free)
	g := newHostGuard(root, reserve, mib, noCgroup, 0)
	g.quietBelow.Store(0)
	r, stop := g.stopBefore(10, 0)
	if !stop {
		t.Fatal("no stop with 11 buffers counted against the room of 5")
	}
	want := fmt.Sprintf("system available memory %s, less 11 more buffers (10 made and not yet settled, and the next) at %s each (the guard's cost per buffer), would fall below the reserve %s",
		units.Bytes(free), units.Bytes(mib), units.Bytes(reserve))
	if reason := g.stopReason(r); reason != "host guard: "+want {
		t.Errorf("reason %q; want %q", reason, want)
	}
}

// TestGuardStopsBeforeTheCgroupLimit: in a memory cgroup of 4 GiB (a Slurm job's, in the fixture) whose
// working set grows by 1 MiB per buffer from 3 GiB, with 60 GiB of system memory available, the guard
// stops the loop at the cgroup's reserve (a sixteenth of the limit, 256 MiB, below the 1 GiB host reserve):
// at the buffer that would leave less than that free, and says it was the cgroup.
func TestGuardStopsBeforeTheCgroupLimit(t *testing.T) {
	const mib = 1 << 20
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "sample", "testdata", "cgroup-v2"))); err != nil {
		t.Fatal(err)
	}
	root := sample.Under(dir)
	meminfo := fmt.Sprintf("MemTotal: %d kB\nMemAvailable: %d kB\n", 64<<20, 60<<20)
	if err := os.WriteFile(filepath.Join(dir, "proc", "meminfo"), []byte(meminfo), 0o644); err != nil {
		t.Fatal(err)
	}
	step := filepath.Join(dir, "sys", "fs", "cgroup", "job_42", "step_0")
	setWorkingSet := func(b uint64) {
		if err := os.WriteFile(filepath.Join(step, "memory.current"), []byte(fmt.Sprintln(b)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(step, "memory.stat"), []byte("inactive_file 0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setWorkingSet(3 << 30)
	cg, why := sample.FindCgroup(root)
	if cg == nil {
		t.Fatal(why)
	}
	const limit, hostReserve = 4 << 30, 1 << 30
	wantReserve := uint64(limit / 16)
	if got := wire.CgroupReserve(hostReserve, limit); got != wantReserve {
		t.Fatalf("cgroup reserve %d, want %d", got, wantReserve)
	}
	g := newHostGuard(root, hostReserve, mib, cg, 0)
	for i := uint64(0); ; i++ {
		setWorkingSet(3<<30 + i*mib)
		r, stop := g.stopBefore(i, i)
		free := uint64(limit) - (3<<30 + i*mib)
		if crosses := free-mib < wantReserve; stop != crosses {
			t.Fatalf("buffer %d: stop %v, but one more buffer leaves less than the cgroup's reserve free: %v", i, stop, crosses)
		}
		if stop {
			if want := uint64(limit-3<<30-wantReserve) / mib; i != want || r.by != result.GuardCgroup {
				t.Fatalf("stopped at buffer %d by %q, want %d by the cgroup", i, r.by, want)
			}
			if reason := g.stopReason(r); reason != "host guard: the memory cgroup /job_42/step_0 has 256 MiB free (its limit 4 GiB less its working set), "+
				"and one more buffer at 1 MiB each (the guard's cost per buffer) would take it below its reserve 256 MiB" {
				t.Errorf("the reason does not name the cgroup and its limit: %s", reason)
			}
			return
		}
	}
}

// In a batched loop the device takes a buffer's memory before the buffer counts as finished, so only a
// reading with nothing in flight measures the guard's cost. Here every buffer takes 1.5 MiB (not the
// 1 MiB the guard starts from) when the device runs its fill, 16 buffers behind the loop or when its batch
// settles, and buffers finish 64 at a time. The cost window's time passes only before the second batch's
// readings: a watch reading late in it (63 in flight, 47 of them run), the guard's own after it settles,
// and a watch reading just after that. A cost measured from the start to the late reading is 111 buffers'
// worth per 64 (the guard stops a batch early), and from there to a settled one 17 per 64 (it runs past the
// reserve, as it would at the 1 MiB it starts from). It must measure 1.5 MiB and stop with every buffer
// made still above the reserve once their fills have run, and not a batch and a buffer before.
func TestGuardCostFromBatches(t *testing.T) {
	const mib, batch, lag = 1 << 20, 64, 16
	const per, room = 3 * mib / 2, 300 * mib
	fits := uint64(room / per) // buffers that fit above the reserve
	reserve := uint64(1 << 30)
	start := reserve + room
	root, set := fakeMeminfo(t, start)
	g := newHostGuard(root, reserve, mib, noCgroup, 0)
	windowPassed := func() {
		g.mu.Lock()
		g.baseTime = g.baseTime.Add(-time.Second)
		g.mu.Unlock()
	}
	finished := uint64(0)
	run := func(made uint64) { set(start - max(finished, made-min(made, lag))*per) } // the fills the device has run
	for i := uint64(0); ; i++ {
		if _, stop := g.stopBefore(i, finished); stop {
			if i > fits || i < fits-batch-1 {
				t.Fatalf("stopped before buffer %d, with room for %d buffers: want between %d and %d", i, fits, fits-batch-1, fits)
			}
			return
		}
		made := i + 1
		run(made)
		switch {
		case made%batch == 0:
			finished = made
			run(made)
			if made == 2*batch {
				windowPassed()
			}
			g.settled(finished)
			if made == 2*batch {
				windowPassed()
				g.read(finished, true) // a watch reading just after the batch settled
				if g.cost != per {
					t.Fatalf("after two batches the guard's cost is %.0f bytes per buffer, want %d", g.cost, per)
				}
			}
		case made == 2*batch-1:
			windowPassed()
			g.read(finished, false) // a watch reading late in the batch
		}
		if i == fits {
			t.Fatalf("buffer %d takes available memory below the reserve once its fill runs, and the guard let it be made (cost %.0f bytes)", i, g.cost)
		}
	}
}

// The watch measures the cost only from a reading with no buffer made while it read: here the loop has
// finished all 64 buffers it made when the watch looks, and has made one more by the time it looks again,
// so the reading, whatever it says, leaves the cost at the size the guard started from.
func TestGuardWatchIgnoresAReadingTheLoopMovedDuring(t *testing.T) {
	const mib = 1 << 20
	start := uint64(8 << 30)
	root, set := fakeMeminfo(t, start)
	g := newHostGuard(root, 1<<30, mib, noCgroup, 0)
	g.window = 0
	set(start - 100*mib) // 64 buffers and the one being made took more than 64 MiB
	stop := make(chan struct{})
	calls := 0
	progress := func() (uint64, uint64) {
		if calls++; calls == 1 {
			return 64, 64
		}
		if calls == 2 {
			close(stop)
		}
		return 64, 65
	}
	g.watch(stop, progress)
	if g.cost != mib || g.baseAt != 0 {
		t.Errorf("cost %.0f bytes per buffer from a window ending at %d; want the starting %d, no window ended", g.cost, g.baseAt, mib)
	}
}

// In a loop without a queue every buffer is finished as it is made, and the count moves while the watch
// reads (hundreds of creates in one reading): the reading measures the cost when the buffers made during
// it are few beside the window, and not when they are many. Here every buffer takes 4 MiB against the
// 1 MiB the guard starts from.
func TestGuardWatchMeasuresALoopThatMovesWhileItReads(t *testing.T) {
	const mib, per, at = 1 << 20, 4 << 20, 1000
	for _, c := range []struct {
		name     string
		during   uint64 // buffers made while the watch reads
		measured bool
	}{
		{"a few made during the reading", at / spreadShare / 2, true},
		{"too many made during the reading", at/spreadShare + 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := uint64(64 << 30)
			root, set := fakeMeminfo(t, start)
			g := newHostGuard(root, 1<<30, mib, noCgroup, 0)
			g.window = 0
			set(start - at*per)
			stop := make(chan struct{})
			calls := 0
			g.watch(stop, func() (uint64, uint64) {
				if calls++; calls == 1 {
					return at, at
				}
				if calls == 2 {
					close(stop)
				}
				return at + c.during, at + c.during
			})
			if measured := g.cost == per; measured != c.measured || (!measured && g.cost != mib) {
				t.Errorf("cost %.0f bytes per buffer; want it measured (%d) %v, else the starting %d", g.cost, per, c.measured, mib)
			}
		})
	}
}

// TestGuardKeepsWithinTheAddressSpaceLimit: under an address-space limit the worker inherited (ulimit -v
// of 2 GiB), a runtime that maps 2 MiB of address space per 1 MiB buffer, from 1 GiB, with the machine's
// memory far from its reserve: the guard measures that cost (it starts from the buffer's size) and stops
// at the first buffer that would leave less than addressReserve of the limit free, by the address space,
// with a reason whose figures add up. Before, only memory was kept, and such a worker ran into the limit
// (PoCL aborts there: a crash with SIGABRT).
func TestGuardKeepsWithinTheAddressSpaceLimit(t *testing.T) {
	const mib, per, base, limit = 1 << 20, 2 << 20, 1 << 30, 2 << 30
	root, _ := fakeMeminfo(t, 60<<30)
	setStatus(t, root, base)
	g := newHostGuard(root, 1<<30, mib, noCgroup, limit)
	g.window = 0
	for i := uint64(0); ; i++ {
		vms := uint64(base + i*per) // buffers 0..i-1 are mapped
		setStatus(t, root, vms)
		g.read(i, true) // the watch's reading, between buffers
		r, stop := g.stopBefore(i, i)
		if crosses := limit-vms-per < addressReserve; stop != crosses {
			t.Fatalf("buffer %d: stop %v, but one more buffer leaves less than %d of the limit free: %v", i, stop, addressReserve, crosses)
		}
		if !stop {
			continue
		}
		if want := uint64(limit-base-addressReserve) / per; i != want || r.by != result.GuardAddressSpace {
			t.Fatalf("stopped at buffer %d by %q, want %d by the address space", i, r.by, want)
		}
		want := fmt.Sprintf("the worker maps %s of its address-space limit %s (ulimit -v), and one more buffer at %s each (the guard's cost per buffer) would leave less than %s of it free",
			units.Bytes(vms), units.Bytes(limit), units.Bytes(per), units.Bytes(addressReserve))
		if reason := g.stopReason(r); reason != "host guard: "+want {
			t.Errorf("reason %q; want %q", reason, want)
		}
		return
	}
}

// TestGuardCountsAPoolBufferWhole: under an address-space limit that leaves 200 MiB above the reserve, with
// the guard's measured cost at 300 MiB a buffer: a buffer of unknown mapping is stopped, a pool's
// sub-buffer (which maps nothing) goes on, a pool buffer of 256 MiB is stopped before it is made, and the
// reason names the pool buffer, not a cost per buffer.
func TestGuardCountsAPoolBufferWhole(t *testing.T) {
	const mib, base, limit = 1 << 20, 1 << 30, 1<<30 + addressReserve + 200<<20
	root, _ := fakeMeminfo(t, 60<<30)
	setStatus(t, root, base)
	g := newHostGuard(root, 1<<30, mib, noCgroup, limit)
	g.mu.Lock()
	g.asCost = 300 * mib // as if a window had measured a pool buffer's jump
	g.setQuietBelow()
	g.mu.Unlock()
	if _, stop := g.stopBeforeMapping(5, 5, 0, false); !stop {
		t.Error("a buffer of unknown mapping at a measured 300 MiB went on with 200 MiB of room")
	}
	if _, stop := g.stopBeforeMapping(5, 5, 0, true); stop {
		t.Error("a sub-buffer that maps nothing was stopped at a measured cost over the room")
	}
	r, stop := g.stopBeforeMapping(6, 6, 256*mib, true)
	if !stop || r.by != result.GuardAddressSpace {
		t.Fatalf("a pool buffer of 256 MiB with 200 MiB of room: stop %v by %q", stop, r.by)
	}
	if reason := g.stopReason(r); reason != "host guard: the worker maps 1 GiB of its address-space limit 1.26 GiB (ulimit -v), "+
		"and the pool buffer of 256 MiB that the next sub-buffer needs would leave less than 64 MiB of it free" {
		t.Errorf("reason %q does not name the pool buffer", reason)
	}
}

// TestGuardKeepsTheAddressCostThroughAFlatWindow: a runtime that maps each 2 MiB buffer's size, but
// nothing for a stretch of 40 buffers that ends 4 MiB short of what the guard keeps free (as one that maps
// in chunks does between two): the windows over the stretch measure nothing (the last ends at buffer 136),
// and the guard must not take the buffers after it as free. Before, the cost fell to 0 and the guard let
// buffer 140 take the worker's address space 2 MiB into the room it keeps (addressReserve).
func TestGuardKeepsTheAddressCostThroughAFlatWindow(t *testing.T) {
	const per, base, limit = 2 << 20, 1 << 30, 1<<30 + addressReserve + 200<<20
	root, _ := fakeMeminfo(t, 60<<30)
	g := newHostGuard(root, 1<<30, per, noCgroup, limit)
	g.window = 0
	vms := func(i uint64) uint64 { // buffers 0..i-1 mapped; 98..137 map nothing
		flat := min(max(i, 98), 138) - 98
		return base + (i-flat)*per
	}
	for i := uint64(0); ; i++ {
		setStatus(t, root, vms(i))
		g.read(i, true)
		if _, stop := g.stopBefore(i, i); stop {
			if vms(i+1) <= limit-addressReserve {
				t.Fatalf("stopped at buffer %d with room for it (%d of %d)", i, vms(i+1), limit)
			}
			return
		}
		if vms(i+1) > limit-addressReserve {
			t.Fatalf("buffer %d took the address space to %d, into the %d kept free of the limit %d", i, vms(i+1), addressReserve, limit)
		}
	}
}

// setStatus writes the fixture's /proc/self/status with VmSize of b bytes.
func setStatus(t *testing.T, root sample.Root, b uint64) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root.Proc, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root.Proc, "self", "status"), []byte(fmt.Sprintf("VmSize: %d kB\n", b>>10)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGuardKeepsAnInheritedAddressSpaceLimitOnly: a limit a variant set is the variant's question and not
// kept; a variant that raises the soft limit to the hard one, or none, leaves the worker's own limit (this
// test process's: 0 where it has none) to keep.
func TestGuardKeepsAnInheritedAddressSpaceLimitOnly(t *testing.T) {
	own := addressSpace()
	if own >= userSpace {
		own = 0
	}
	for _, c := range []struct {
		limits map[string]uint64
		want   uint64
	}{
		{nil, own},
		{map[string]uint64{"RLIMIT_NOFILE": 512}, own},
		{map[string]uint64{"RLIMIT_AS": result.HardLimit}, own},
		{map[string]uint64{"RLIMIT_AS": 1 << 30}, 0},
	} {
		if got := guardedAddressSpace(c.limits); got != c.want {
			t.Errorf("limits %v: keeps %d, want %d", c.limits, got, c.want)
		}
	}
}

// A new pool buffer that takes its whole size at once is a lump, not a cost per buffer: after restartCost
// the guard measures the sub-buffers that follow (nothing each, here), where a window over the lump gave
// 228 MiB a buffer and, with a batch of buffers in flight, stopped a 2 GiB pool in a 4 GiB cgroup after 25
// buffers on rusticl.
func TestGuardLeavesAPoolBufferOutOfTheCost(t *testing.T) {
	const mib, pool, batch = 1 << 20, 2 << 30, 8
	reserve := uint64(256 * mib)
	start := reserve + pool + 1<<30 // room for the pool and 1 GiB more
	root, set := fakeMeminfo(t, start)
	g := newHostGuard(root, reserve, mib, noCgroup, 0)
	set(start - pool) // buffer 0 made the pool buffer, whole
	g.restartCost(0, 1)
	finished := uint64(0)
	for i := uint64(1); i < 2000; i++ {
		if r, stop := g.stopBefore(i, finished); stop {
			t.Fatalf("stopped before sub-buffer %d at a cost of %.0f bytes per buffer, with %.0f of room and every sub-buffer taking nothing", i, r.cost, r.room)
		}
		if (i+1)%batch == 0 { // a batch settles
			finished = i + 1
			g.mu.Lock()
			g.baseTime = g.baseTime.Add(-time.Second) // the window's time has passed
			g.mu.Unlock()
			g.settled(finished)
		}
	}
	if g.cost != 0 {
		t.Errorf("cost %.0f bytes per buffer after 2000 sub-buffers that took nothing, want 0", g.cost)
	}
}
