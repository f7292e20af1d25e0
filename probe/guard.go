package probe

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
)

// guardInterval is how often the host guard reads system available memory, whatever the sampling interval.
const guardInterval = 5 * time.Millisecond

// hostGuard stops a loop before system available memory falls below the reserve. It reads MemAvailable on
// its own cadence and, before each buffer, predicts where the next buffer leaves available memory at the
// measured cost per buffer; when that comes within reach of the reserve it reads again at once, and stops
// the loop if one more buffer would cross it. The cost starts at the buffer size (as if every buffer landed
// in host memory) until the readings say otherwise.
type hostGuard struct {
	root    sample.Root
	reserve uint64

	mu        sync.Mutex
	avail, at uint64  // the last reading and the buffers done when it was taken
	cost      float64 // bytes of available memory one buffer takes, measured
	baseAvail uint64  // the reading the current cost window started from
	baseAt    uint64
	baseTime  time.Time

	// quietBelow is the first buffer index at which the last reading no longer says "far from the reserve":
	// below it stopBefore returns at once, with one atomic load (a plain load on amd64 and arm64) instead
	// of the mutex, which in a loop of 1 KiB creates was the tool's largest cost per buffer after the call
	// itself. Every reading moves it, so the decision is the one the reading would give.
	quietBelow atomic.Uint64
}

func newHostGuard(root sample.Root, reserve, size uint64) *hostGuard {
	g := &hostGuard{root: root, reserve: reserve, cost: float64(size)}
	if mi, err := root.Meminfo(); err == nil {
		g.avail, g.baseAvail = mi.Available, mi.Available
	}
	g.baseTime = time.Now()
	g.mu.Lock()
	g.setQuietBelow()
	g.mu.Unlock()
	return g
}

// watch reads available memory every guardInterval until stop closes; done says how many buffers are done.
func (g *hostGuard) watch(stop <-chan struct{}, done func() uint64) {
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
			g.read(done())
		}
	}
}

// read takes a reading with at buffers done and updates the cost once enough buffers and time have passed
// for the difference to mean something. ok is false when the system's memory cannot be read.
func (g *hostGuard) read(at uint64) (avail uint64, ok bool) {
	mi, err := g.root.Meminfo()
	if err != nil {
		return 0, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.avail, g.at = mi.Available, at
	if at >= g.baseAt+8 && time.Since(g.baseTime) >= 4*guardInterval {
		drop := float64(g.baseAvail) - float64(mi.Available)
		g.cost = max(0, drop/float64(at-g.baseAt))
		g.baseAvail, g.baseAt, g.baseTime = mi.Available, at, time.Now()
	}
	g.setQuietBelow()
	return mi.Available, true
}

// farMargin is how far above the reserve a prediction must be, beyond four buffers' cost, for stopBefore to
// skip a fresh reading.
const farMargin = 16 << 20

// setQuietBelow moves quietBelow to the first buffer whose predicted available memory (the last reading
// less the cost of the buffers made since) comes within four buffers and farMargin of the reserve. The
// caller holds mu.
func (g *hostGuard) setQuietBelow() {
	if g.reserve == 0 {
		g.quietBelow.Store(math.MaxUint64)
		return
	}
	headroom := float64(g.avail) - 4*g.cost - farMargin - float64(g.reserve)
	switch {
	case headroom <= 0:
		g.quietBelow.Store(0)
	case g.cost <= 0:
		g.quietBelow.Store(math.MaxUint64)
	default:
		// Buffer at+n is quiet while n*cost < headroom, that is for n below ceil(headroom/cost); the float
		// is capped well inside uint64.
		g.quietBelow.Store(g.at + uint64(min(math.Ceil(headroom/g.cost), 1<<62)))
	}
}

// stopBefore reports whether buffer i must not be made, and the available memory it judged from. done is
// how many buffers the device has finished: buffers made but still in flight (a batch) take their memory
// later, so they count as taken.
func (g *hostGuard) stopBefore(i, done uint64) (uint64, bool) {
	// Far from the reserve: nothing to do. Within a few buffers of it (or farMargin): read now.
	if i < g.quietBelow.Load() {
		return 0, false
	}
	g.mu.Lock()
	cost := g.cost
	g.mu.Unlock()
	fresh, ok := g.read(done)
	inFlight := float64(i - min(i, done))
	return fresh, ok && float64(fresh)-(inFlight+1)*cost < float64(g.reserve)
}
