package probe

import (
	"context"
	"sync"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/trace"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
)

// The GPU memory child's limits: loading NVML and initialising it (nvmlInit takes seconds on a driver
// without persistence mode), and a reading that stops coming (an NVML call stuck in the driver).
const (
	gpuSetup = 30 * time.Second
	gpuHang  = 10 * time.Second
	// gpuFirstWord bounds how long a trace whose program ended before the child's first word waits for it:
	// without NVML the child says so in 10-20 ms, and that is why the trace has no device figures.
	gpuFirstWord = time.Second
)

// gpuChild is trace's GPU memory child (`clmemprobe __child gpu-memory`) seen from the parent: its newest
// reading, or why there is none. It is a trace.GPUSource.
type gpuChild struct {
	mu        sync.Mutex
	latest    *wire.GPUReading
	why       string
	ready     chan struct{} // closed at the first reading, or when the child has ended
	readyOnce sync.Once
	cancel    context.CancelFunc
	done      chan struct{}
}

var _ trace.GPUSource = (*gpuChild)(nil)

// newGPUChild is the child's place, not started yet: trace starts it once the program has started and
// been made the OOM killer's first choice. The program is not held for the child's first word: a trace
// learns its devices as the program makes contexts, which takes a GPU runtime longer than NVML's start
// (20-30 ms on an H100 with persistence mode), and the readings' process lists tell the program's device
// memory from what others held before it. Waiting held every traced program back by that start
// (docs/performance.md#what-a-trace-costs-to-start); started before the program, its start took the CPU
// from the tool as it wrote the program's oom_score_adj, and a shell read 0 there.
func newGPUChild() *gpuChild {
	return &gpuChild{ready: make(chan struct{}), done: make(chan struct{})}
}

// start starts the child, once, reading every interval, in the session's process groups.
func (g *gpuChild) start(ctx context.Context, interval time.Duration, groups *supervise.Groups) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cancel != nil {
		return
	}
	cctx, cancel := context.WithCancel(ctx)
	g.cancel = cancel
	go func() {
		defer close(g.done)
		e, err := supervise.Run(cctx, supervise.Child{
			Spec:   wire.Spec{Kind: wire.KindGPUMemory, GPUMemory: &wire.GPUMemorySpec{Interval: interval}},
			Limits: supervise.Limits{Setup: gpuSetup, Hang: gpuHang}, Groups: groups, OnEvent: g.event})
		g.end(e, err)
	}()
}

// firstWord waits up to bound for the child's first reading or its answer, where neither has come.
func (g *gpuChild) firstWord(bound time.Duration) {
	select {
	case <-g.ready:
	case <-time.After(bound):
	}
}

// event keeps the newest reading.
func (g *gpuChild) event(ev wire.Event) {
	if ev.T != wire.EventGPU || ev.GPU == nil {
		return
	}
	g.mu.Lock()
	g.latest = ev.GPU
	g.mu.Unlock()
	g.readyOnce.Do(func() { close(g.ready) })
}

// end records why the child gives no more readings: its answer (NVML absent, in its own words), or how it
// ended.
func (g *gpuChild) end(e *supervise.Ending, err error) {
	why := "NVML: the GPU memory child did not start"
	if err != nil {
		why += ": " + err.Error()
	} else if a, err := supervise.Answer[wire.GPUMemoryAnswer](e); err != nil {
		why = "NVML: the GPU memory child " + supervise.How(err)
	} else if a.Unavailable != "" {
		why = a.Unavailable
	} else {
		// The child answers only to say why it stopped; an answer without the why still ends its readings.
		why = "NVML: the GPU memory child stopped without saying why"
	}
	g.mu.Lock()
	g.latest, g.why = nil, why
	g.mu.Unlock()
	g.readyOnce.Do(func() { close(g.ready) })
}

// Latest is the newest reading, nil before the first and after the child ended.
func (g *gpuChild) Latest() *wire.GPUReading {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.latest
}

// Unavailable is why the child gives no readings, once it has ended.
func (g *gpuChild) Unavailable() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.why
}

// stop ends the child with its group, as the trace ends, and waits for it (nothing where it never started).
func (g *gpuChild) stop() {
	g.mu.Lock()
	cancel := g.cancel
	g.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-g.done
}
