package probe

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/report/result"
)

// Attribution modes: how a failure that a runtime reports after the call that caused it is pinned to its
// buffer.
const (
	// AttributionBatched enqueues each buffer's commands with an event and waits for the device once per
	// batch; a failed batch names its first failed command by the events' status.
	AttributionBatched = "batched"
	// AttributionPerBuffer waits for the device after every buffer.
	AttributionPerBuffer = "per-buffer"
)

// A batch ends after this many buffers or this long, whichever comes first: long enough to take the wait
// off each buffer, short enough that progress and the host guard see the device's state often.
const (
	batchBuffers = 64
	batchTime    = 20 * time.Millisecond
)

// enqueueReporters are runtimes seen to report an allocation failure at the enqueue of the command that
// needs the memory, not later at a wait. Their batches go without an event per command, which costs a loop
// more than all else the tool does: a wait that fails all the same has its batch done again one buffer at a
// time, as where events say nothing.
var enqueueReporters = []struct{ platform, why string }{
	{"NVIDIA CUDA", "batches without an event per command: NVIDIA's OpenCL reports an allocation failure at the enqueue " +
		"of the command that needs the memory (seen on H200, driver 580, docs/examples/nvidia-h200-x2), and an event per " +
		"fill cost its loop 14% there (docs/performance.md)"},
}

// eventsNeeded says whether a batch needs an event per command on this platform, and if not, why.
func eventsNeeded(platform string) (bool, string) {
	for _, r := range enqueueReporters {
		if strings.Contains(platform, r.platform) {
			return false, r.why
		}
	}
	return true, ""
}

// pending is one buffer of the batch: its commands' events, in the order they were enqueued.
type pending struct {
	i      uint64
	t      *target
	m      cl.Mem
	events [2]cl.Event // migrate, touch; 0 where not enqueued
}

// loopState is the allocation loop's state: the batch not yet confirmed by the device.
type loopState struct {
	w          *worker
	batched    bool
	events     bool // an event per command, to name the failed one
	batch      []pending
	batchStart time.Time
	note       string // why attribution fell back to per-buffer
	// replayFrom is set when a failed batch could not be attributed: the loop runs again from there, one
	// wait per buffer.
	replayFrom uint64
}

// loop is the allocation loop. It keeps no per-buffer state beyond the current batch (buffers are never
// released, as in the user's loop; the process exit frees them) and stores in the shared cell, after each
// buffer (or each batch) the device confirmed, how many buffers succeeded.
func (w *worker) loop() *strategyAnswer {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	needQueue := w.targets[0].queue != nil
	st := &loopState{w: w, batched: needQueue && !w.spec.PerBuffer, batch: make([]pending, 0, batchBuffers)}
	var why string
	if st.batched {
		st.events, why = eventsNeeded(w.targets[0].ctx.Devices[0].Platform.Name)
	}
	from := uint64(0)
	for {
		ans := st.run(from)
		if ans == nil { // a batch is to be done again, one buffer at a time
			from = st.replayFrom
			continue
		}
		if st.batched {
			ans.Attribution, ans.AttributionNote = AttributionBatched, why
		} else {
			ans.Attribution, ans.AttributionNote = AttributionPerBuffer, st.note
		}
		return ans
	}
}

// run runs the loop from buffer from. It returns nil when a batch must be done again (replayFrom).
func (st *loopState) run(from uint64) *strategyAnswer {
	w := st.w
	size, count, touch := w.spec.Size, w.spec.Count, w.spec.Touch
	migrate := w.spec.Strategy == result.MigrateFirst
	n := uint64(len(w.targets))
	next := from % n // the target of buffer i: i mod n, kept without a division per buffer
	// Samples at buffer counts growing by half each time (2, 3, 4, 6, 9, 13, 19, 28, 42, ...), whatever the
	// clock says: a loop of 40 buffers that ends within a sampling interval, or whose interval samples a
	// loaded machine thins out, still gets the result.FitMinSamples a fit needs, spread over it.
	forceAt := uint64(2)
	for forceAt < from {
		forceAt += max(1, forceAt/2)
	}
	for i := from; i < count; i++ {
		if i == forceAt {
			// The device has done every command before a forced sample, so its memory matches the count.
			if ans, done := st.settle(); done {
				return ans
			}
			w.takeSample(i)
			forceAt += max(1, forceAt/2)
		}
		if reading, stop := w.guard.stopBefore(i, w.doneCount()); stop {
			if ans, done := st.settle(); done {
				return ans
			}
			return &strategyAnswer{Outcome: result.OutcomeStopped, AllocationsOK: i, Reason: w.guard.stopReason(reading), Guard: reading.by}
		}
		t := &w.targets[next]
		if next++; next == n {
			next = 0
		}
		w.cell.SetStage(cellCreate)
		var m cl.Mem
		var err error
		if t.props != nil {
			m, err = t.ctx.CreateBufferWithProperties(t.props, cl.MEM_READ_WRITE, size)
			if err != nil && i == 0 && (errors.Is(err, cl.InvalidProperty) || errors.Is(err, cl.InvalidValue)) {
				return &strategyAnswer{Outcome: result.OutcomeUnsupported, Reason: "the runtime rejected CL_MEM_DEVICE_HANDLE_LIST_KHR: " + err.Error()}
			}
		} else {
			m, err = t.ctx.CreateBuffer(cl.MEM_READ_WRITE, size)
		}
		if err != nil {
			return st.fail(i, result.StageCreate, err, t)
		}
		p := pending{i: i, t: t, m: m}
		if migrate {
			w.cell.SetStage(cellMigrate)
			if p.events[0], err = t.queue.MigrateBuffer(m, st.batched && st.events); err != nil {
				return st.fail(i, result.StageMigrate, err, t)
			}
		}
		if touch != result.TouchNone {
			w.cell.SetStage(cellTouch)
			if touch == result.TouchFill {
				p.events[1], err = t.queue.FillBuffer(m, size, st.batched && st.events)
			} else {
				p.events[1], err = t.queue.RunKernelOn(t.kernel, m, uint32(i), size, st.batched && st.events)
			}
			if err != nil {
				if p.events[0] != 0 {
					st.batch = append(st.batch, p) // its migration is settled with the batch
				}
				return st.fail(i, result.StageTouch, err, t)
			}
		}
		switch {
		case t.queue == nil:
			w.cell.SetCount(i + 1) // and so doneCount
		case !st.batched:
			// Waiting after each buffer is what makes the index exact on runtimes that allocate at first
			// use and report the failure only when the command runs.
			w.cell.SetStage(cellFinish)
			if err := t.queue.Finish(); err != nil {
				return st.fail(i, result.StageFinish, err, t)
			}
			w.cell.SetCount(i + 1)
			w.done.Store(i + 1)
		default:
			if len(st.batch) == 0 {
				st.batchStart = time.Now()
			}
			st.batch = append(st.batch, p)
			// The count is of buffers made and enqueued, so that a crash in a later call is pinned as
			// exactly as with a wait after each; a failure the device reports for the batch still ends
			// the loop at the failed command's buffer.
			w.cell.SetCount(i + 1)
			if len(st.batch) == batchBuffers || time.Since(st.batchStart) >= batchTime {
				if ans, done := st.settle(); done {
					return ans
				}
			}
		}
	}
	if ans, done := st.settle(); done {
		return ans
	}
	w.cell.SetStage(cellDone)
	return &strategyAnswer{Outcome: result.OutcomeCompleted, AllocationsOK: count}
}

// fail ends the loop at buffer i, unless a buffer before it in the batch already failed on the device: that
// one comes first, as it would with a wait after every buffer.
func (st *loopState) fail(i uint64, stage result.Stage, err error, t *target) *strategyAnswer {
	if ans, done := st.settle(); done {
		return ans
	}
	ff := failureOf(err, stage)
	ff.Index, ff.Device, ff.BytesBefore = i, t.device, i*st.w.spec.Size
	return &strategyAnswer{Outcome: result.OutcomeFailed, AllocationsOK: i, FirstFailure: ff}
}

// settle waits for the device once for the whole batch and, where the wait failed, checks every command's
// status. It returns
// done when the loop must end: with the failure of the batch's first failed command, at its buffer and with
// stage finish (the wait is where it surfaced), as a wait after every buffer would have; or with nil when
// the wait failed without any command saying it failed, so that no buffer can be named: then the batch's
// buffers are released and the loop runs again from the batch's first buffer with a wait after each
// (replayFrom; the result records it).
func (st *loopState) settle() (*strategyAnswer, bool) {
	if len(st.batch) == 0 {
		return nil, false
	}
	w := st.w
	w.cell.SetStage(cellFinish)
	var waitErr error
	for k := range w.targets {
		if q := w.targets[k].queue; q != nil {
			if err := q.Finish(); err != nil && waitErr == nil {
				waitErr = err
			}
		}
	}
	// Every command's event is asked only when a wait failed: a wait that succeeded says, as a wait after
	// every buffer would, that every command did.
	var failed *strategyAnswer
	if waitErr != nil {
	search:
		for _, p := range st.batch {
			for _, ev := range p.events {
				if ev == 0 {
					continue
				}
				if status, err := p.t.queue.CommandStatus(ev); err == nil && status < 0 {
					ff := failureOf(&cl.CallError{Call: "clFinish", Status: cl.Status(status)}, result.StageFinish)
					ff.Index, ff.Device, ff.BytesBefore = p.i, p.t.device, p.i*w.spec.Size
					failed = &strategyAnswer{Outcome: result.OutcomeFailed, AllocationsOK: p.i, FirstFailure: ff}
					break search
				}
			}
		}
	}
	for _, p := range st.batch {
		for _, ev := range p.events {
			p.t.queue.ReleaseCommand(ev)
		}
	}
	first, last := st.batch[0].i, st.batch[len(st.batch)-1].i
	switch {
	case failed != nil:
		st.batch = st.batch[:0]
		return failed, true
	case waitErr != nil:
		for k := len(st.batch) - 1; k >= 0; k-- {
			_ = st.batch[k].t.ctx.ReleaseMem(st.batch[k].m)
		}
		for k := range w.targets {
			if q := w.targets[k].queue; q != nil {
				_ = q.Finish()
			}
		}
		st.batch = st.batch[:0]
		st.batched = false
		st.replayFrom = first
		st.note = fmt.Sprintf("the runtime reported %v at clFinish without a failed command in the batch of buffers #%d-#%d; "+
			"they were released and made again with a wait after each", waitErr, first, last)
		return nil, true
	}
	w.done.Store(last + 1)
	st.batch = st.batch[:0]
	return nil, false
}
