package worker

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// guardInterval is how often the host guard reads available memory, whatever the sampling interval.
const guardInterval = 5 * time.Millisecond

// The guard measures the cost per buffer over a window of at least costWindowBuffers buffers and
// costWindowTime: shorter ones would measure the readings' noise.
const (
	costWindowBuffers = 8
	costWindowTime    = 4 * guardInterval
)

// hostGuard stops a loop before available memory falls below its reserve: the system's MemAvailable below
// --host-reserve, and where the worker runs in a memory cgroup with a limit, the cgroup's free memory (its
// limit less its working set) below wire.CgroupReserve, so that a probe in a pod or a batch job stops before the
// cgroup's OOM killer acts. It reads both on its own cadence and works with the room above the tighter of
// the two. Before each buffer it predicts the room the next buffer leaves at the measured cost per buffer;
// when that comes within reach of zero it reads again at once, and stops the loop if one more buffer would
// cross it. The cost starts at the buffer size (as if every buffer landed in host memory) until the readings
// say otherwise, and only readings taken with nothing in flight measure it: in a batch, the device runs the
// commands of buffers not yet counted as finished, so a reading then has taken memory that the count of
// finished buffers does not show, and a cost measured from one came out anywhere from 0.77 to 1.96 times
// the true cost in a batched PoCL loop of 1 MiB fills; at 0.77 with 48 buffers in flight, the loop went
// 8 MiB past the reserve. A batched loop has nothing in flight just after a batch settles, so it takes a
// reading there (settled) when one is due.
//
// Where the worker inherited an address-space limit (ulimit -v, as HPC sites and Slurm set), the guard
// keeps a third room: the limit less the worker's address space (VmSize) and addressReserve. Its cost per
// buffer is measured apart, in the same windows: the room that binds may change between a window's ends
// (a GPU runtime's buffers map address space long before they take memory), and one cost of the tighter
// room would then measure the switch, not the buffers.
type hostGuard struct {
	root      sample.Root
	reserve   uint64
	cg        *sample.Cgroup // nil: no memory cgroup with a limit
	cgLimit   uint64
	cgReserve uint64
	asLimit   uint64 // the inherited address-space limit; 0: none to keep

	mu       sync.Mutex
	last     guardReading
	at       uint64  // the buffers done when last was taken
	cost     float64 // bytes of room one buffer takes, measured
	baseRoom float64 // the room the current cost window started from
	// asCost is the address space one buffer maps, as the last window measured it, never less than the
	// buffer's size (asFloor) it starts from: a window with no growth (a runtime that maps in chunks,
	// between two of them) must not make the next buffers free. (Not the most ever measured: a malloc arena
	// of 64 MiB inside a window of 16 buffers would count 4 MiB a buffer for the rest of the loop.)
	asCost, asFloor float64
	baseAS          float64 // the address-space room the current cost window started from (+Inf: none read)
	baseAt          uint64
	// baseSpread is how many buffers the loop made while the window's first reading was taken: the reading
	// stands somewhere between baseAt and baseAt+baseSpread.
	baseSpread uint64
	baseTime   time.Time
	window     time.Duration // costWindowTime; a test may shorten it

	// quietBelow is the first buffer index at which the last reading no longer says "far from the reserve":
	// below it stopBefore returns at once, with one atomic load (a plain load on amd64 and arm64) instead
	// of the mutex, which in a loop of 1 KiB creates was the tool's largest cost per buffer after the call
	// itself. Every reading moves it, so the decision is the one the reading would give.
	quietBelow atomic.Uint64
}

// guardReading is one reading: the system's available memory, the cgroup's free memory where there is a
// cgroup limit, and the room above the tighter reserve (negative: below it); where there is an
// address-space limit, the worker's address space and the room it leaves above addressReserve (else
// +Inf).
type guardReading struct {
	avail, cgFree uint64
	room          float64
	vms           uint64
	asRoom        float64
	by            result.Guard // which reserve is the tighter, or GuardAddressSpace at a stop for it
	// ahead is how many buffers the guard counted against the room at a stop: those made and not yet
	// settled, and the next; cost is what it counted each at.
	ahead, cost float64
	pool        bool // an address-space stop before a new pool buffer, whose size cost is
}

// addressReserve is the address space the guard keeps free under an inherited address-space limit: one
// more malloc arena (result.AddressSlack), which a thread of the runtime may map at any time.
const addressReserve = result.AddressSlack

// newHostGuard makes the guard of a loop of buffers of size bytes: the host reserve (0: no guard at all),
// the memory cgroup (nil: none) and the address-space limit the worker inherited (asLimit, 0: none, or
// one a variant set: that limit is the variant's question, not a margin to keep).
func newHostGuard(root sample.Root, reserve, size uint64, cg *sample.Cgroup, asLimit uint64) *hostGuard {
	g := &hostGuard{root: root, reserve: reserve, cost: float64(size), asCost: float64(size), asFloor: float64(size), baseAS: math.Inf(1),
		window: costWindowTime}
	if cg != nil && reserve > 0 {
		if limit := cg.Limit(); limit > 0 {
			g.cg, g.cgLimit, g.cgReserve = cg, limit, wire.CgroupReserve(reserve, limit)
		}
	}
	if reserve > 0 {
		g.asLimit = asLimit
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if r, ok := g.readLocked(); ok {
		g.last, g.baseRoom, g.baseAS = r, r.room, r.asRoom
	}
	g.baseTime = time.Now()
	g.setQuietBelow()
	return g
}

// watch reads available memory every guardInterval until stop closes. progress says how many buffers are
// finished and how many are made, read before and after each reading: the reading may measure the cost
// where nothing was in flight at either end (finished equal to made), and it stands somewhere between the
// two counts, since the loop goes on making buffers while the watch reads (hundreds, in a loop of creates
// without a queue, during one reading).
func (g *hostGuard) watch(stop <-chan struct{}, progress func() (finished, made uint64)) {
	if g.reserve == 0 { // no reserve to keep: the readings would decide nothing
		return
	}
	t := time.NewTicker(guardInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			finished, made := progress()
			g.mu.Lock()
			if r, ok := g.readLocked(); ok {
				f, m := progress()
				g.takeLocked(r, finished, m-min(m, made), finished == made && f == m)
			}
			g.mu.Unlock()
		}
	}
}

// settled takes a reading when the loop has nothing in flight and the cost is due to be measured again. A
// batched loop calls it after each batch: the only moments its count of finished buffers matches the
// memory taken.
func (g *hostGuard) settled(at uint64) {
	if g.reserve == 0 {
		return
	}
	g.mu.Lock()
	due := g.costDueLocked(at)
	g.mu.Unlock()
	if due {
		g.read(at, true)
	}
}

// costDueLocked says whether a reading at at buffers ends a cost window; the caller holds mu.
func (g *hostGuard) costDueLocked(at uint64) bool {
	return at >= g.baseAt+costWindowBuffers && time.Since(g.baseTime) >= g.window
}

// readLocked reads the system's and the cgroup's memory; the caller holds mu. ok is false when the
// system's memory cannot be read.
func (g *hostGuard) readLocked() (guardReading, bool) {
	mi, err := g.root.Meminfo()
	if err != nil {
		return guardReading{}, false
	}
	r := guardReading{avail: mi.Available, room: float64(mi.Available) - float64(g.reserve), by: result.GuardSystem, asRoom: math.Inf(1)}
	if g.asLimit > 0 {
		if m, err := g.root.SelfMemory(); err == nil {
			r.vms, r.asRoom = m.VMS, float64(g.asLimit)-float64(m.VMS)-addressReserve
		}
	}
	if g.cg != nil {
		if ws, err := g.cg.WorkingSet(); err == nil {
			r.cgFree = g.cgLimit - min(g.cgLimit, ws)
			if room := float64(r.cgFree) - float64(g.cgReserve); room < r.room {
				r.room, r.by = room, result.GuardCgroup
			}
		}
	}
	return r, true
}

// read takes a reading, on the loop's own thread, with at buffers finished; settled says none was in
// flight (see takeLocked). The count does not move while the loop itself reads.
func (g *hostGuard) read(at uint64, settled bool) (guardReading, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.readLocked()
	if ok {
		g.takeLocked(r, at, 0, settled)
	}
	return r, ok
}

// restartCost begins a new cost window from a fresh reading, with done buffers finished and made of them
// made: a lump one buffer took (a new pool buffer, which a runtime that allocates at create takes whole
// with its first sub-buffer) is no cost per buffer, and a window over it said 228 MiB a buffer where each
// sub-buffer after it took nothing (rusticl, a 2 GiB pool, in a 4 GiB cgroup: stopped at 25 buffers,
// where the loop with the guard off completed 2000). The cost measured so far stands until the new window
// measures one.
func (g *hostGuard) restartCost(done, made uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r, ok := g.readLocked()
	if !ok {
		return
	}
	g.last, g.at = r, done
	g.baseRoom, g.baseAS, g.baseAt, g.baseSpread, g.baseTime = r.room, r.asRoom, done, made-min(made, done), time.Now()
	g.setQuietBelow()
}

// spreadShare is how many times the buffers a window spans must exceed the uncertainty of its two ends'
// counts (their spreads) for the window to measure the cost: the error is then at most a sixteenth.
const spreadShare = 16

// takeLocked makes r the last reading, taken with at buffers finished and spread more made while it was
// taken. Where settled and enough buffers and time have passed for the difference to mean something, it
// measures the cost again. Settled is as near as the loop's counts can tell: a buffer counts as made once
// its commands are enqueued, so one that is being made (its host block written, its create under way) can
// have taken memory that no count shows, at most one buffer at each end of a window of at least
// costWindowBuffers. The caller holds mu.
func (g *hostGuard) takeLocked(r guardReading, at, spread uint64, settled bool) {
	g.last, g.at = r, at
	if settled && g.costDueLocked(at) && spreadShare*(spread+g.baseSpread) <= at-g.baseAt {
		g.cost = max(0, (g.baseRoom-r.room)/float64(at-g.baseAt))
		if !math.IsInf(r.asRoom, 1) && !math.IsInf(g.baseAS, 1) {
			g.asCost = max(g.asFloor, (g.baseAS-r.asRoom)/float64(at-g.baseAt))
		}
		g.baseRoom, g.baseAS, g.baseAt, g.baseSpread, g.baseTime = r.room, r.asRoom, at, spread, time.Now()
	}
	g.setQuietBelow()
}

// farMargin is how far above the reserve a prediction must be, beyond nearBuffers buffers' cost, for
// stopBefore to skip a fresh reading.
const (
	farMargin   = 16 << 20
	nearBuffers = 4
)

// setQuietBelow moves quietBelow to the first buffer whose predicted room (the last reading less the cost
// of the buffers made since) comes within nearBuffers buffers and farMargin of the reserve. The caller
// holds mu.
func (g *hostGuard) setQuietBelow() {
	if g.reserve == 0 {
		g.quietBelow.Store(math.MaxUint64)
		return
	}
	g.quietBelow.Store(min(g.quietFor(g.last.room, g.cost), g.quietFor(g.last.asRoom, g.asCost)))
}

// quietFor is the first buffer whose predicted room, from room at cost per buffer, comes within nearBuffers
// buffers and farMargin of its reserve. The caller holds mu.
func (g *hostGuard) quietFor(room, cost float64) uint64 {
	headroom := room - nearBuffers*cost - farMargin
	switch {
	case headroom <= 0:
		return 0
	case cost <= 0 || math.IsInf(headroom, 1):
		return math.MaxUint64
	}
	// Buffer at+n is quiet while n*cost < headroom, that is for n below ceil(headroom/cost); the float is
	// capped well inside uint64.
	return g.at + uint64(min(math.Ceil(headroom/cost), 1<<62))
}

// stopBefore reports whether buffer i must not be made, with the reading it judged from. done is how many
// buffers the device has finished: buffers made but still in flight (a batch) take their memory later, so
// they count as taken.
func (g *hostGuard) stopBefore(i, done uint64) (guardReading, bool) {
	return g.stopBeforeMapping(i, done, 0, false)
}

// stopBeforeMapping is stopBefore where the buffers say how much address space buffer i maps (maps, where
// known; else the buffers in flight and the next count at the guard's measured cost, as for memory: a
// runtime may map a buffer at its first use, PoCL at its fill): a pool's sub-buffer maps none, the pool
// buffer it needs first maps the whole pool at once. Growth in chunks larger than addressReserve, between
// two buffers, is not foreseen.
func (g *hostGuard) stopBeforeMapping(i, done, maps uint64, known bool) (guardReading, bool) {
	lump := known && maps > 0 && g.asLimit > 0
	// Far from the reserve: nothing to do. Within a few buffers of it (or farMargin), or before a lump of
	// address space: read now.
	if i < g.quietBelow.Load() && !lump {
		return guardReading{}, false
	}
	g.mu.Lock()
	cost, asCost := g.cost, g.asCost
	g.mu.Unlock()
	fresh, ok := g.read(done, i == done)
	fresh.ahead, fresh.cost = float64(i-min(i, done))+1, cost
	if !ok {
		return fresh, false
	}
	if fresh.room-fresh.ahead*cost < 0 {
		return fresh, true
	}
	asAhead := fresh.ahead
	if known { // the pool's own count: what the next buffer maps, its sub-buffers nothing
		asAhead, asCost = 1, float64(maps)
	}
	if fresh.asRoom-asAhead*asCost < 0 {
		fresh.by, fresh.ahead, fresh.cost, fresh.pool = result.GuardAddressSpace, asAhead, asCost, lump
		return fresh, true
	}
	return fresh, false
}

// stopReason says why the guard stopped the loop, in numbers.
// The figures add up: what is free, less the buffers it counted at their cost, is below the reserve.
func (g *hostGuard) stopReason(r guardReading) string {
	ahead := "one more buffer"
	if r.ahead > 1 {
		ahead = fmt.Sprintf("%.0f more buffers (%.0f made and not yet settled, and the next)", r.ahead, r.ahead-1)
	}
	ahead += fmt.Sprintf(" at %s each (the guard's cost per buffer)", units.Bytes(uint64(r.cost)))
	if r.pool {
		ahead = fmt.Sprintf("the pool buffer of %s that the next sub-buffer needs", units.Bytes(uint64(r.cost)))
	}
	switch r.by {
	case result.GuardAddressSpace:
		return fmt.Sprintf("host guard: the worker maps %s of its address-space limit %s (ulimit -v), and %s would leave less than %s of it free",
			units.Bytes(r.vms), units.Bytes(g.asLimit), ahead, units.Bytes(addressReserve))
	case result.GuardCgroup:
		return fmt.Sprintf("host guard: the memory cgroup %s has %s free (its limit %s less its working set), and %s would take it below its reserve %s",
			g.cg.Path, units.Bytes(r.cgFree), units.Bytes(g.cgLimit), ahead, units.Bytes(g.cgReserve))
	}
	return fmt.Sprintf("host guard: system available memory %s, less %s, would fall below the reserve %s",
		units.Bytes(r.avail), ahead, units.Bytes(g.reserve))
}
