package worker

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/clmemprobe/clmemprobe/kernels"
	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// A batch ends after this many buffers or this long, whichever comes first: long enough to take the wait
// off each buffer, short enough that progress and the host guard see the device's state often.
const (
	batchBuffers = 64
	batchTime    = 20 * time.Millisecond
)

// firstForcedSample is the first buffer count at which the loop stops for a sample whatever the clock says
// (see nextForcedSample).
const firstForcedSample = 2

// nextForcedSample is the forced sample after the one at at: the counts grow by half each time (2, 3, 4, 6,
// 9, 13, 19, 28, 42, ...), so that a loop of 40 buffers that ends within a sampling interval, or whose
// interval samples a loaded machine thins out, still gets the result.FitMinSamples a fit needs, spread over
// it.
func nextForcedSample(at uint64) uint64 { return at + max(1, at/2) }

// forcedSampleFrom is the first forced sample at or after buffer from.
func forcedSampleFrom(from uint64) uint64 {
	at := uint64(firstForcedSample)
	for at < from {
		at = nextForcedSample(at)
	}
	return at
}

// enqueueReporters are runtimes seen to report an allocation failure at the enqueue of the command that
// needs the memory, not later at a wait. Their batches go without an event per command, which costs a loop
// more than all else the tool does: a wait that fails all the same has its batch done again one buffer at a
// time, as where events say nothing.
var enqueueReporters = []struct {
	vendor result.Vendor
	why    string
}{
	{result.VendorNVIDIA, "batches without an event per command: NVIDIA's OpenCL reports an allocation failure at the enqueue " +
		"of the command that needs the memory (seen on H200, driver 580, docs/examples/nvidia-h200-x2), and an event per " +
		"fill cost its loop 14% there (docs/performance.md)"},
}

// eventsNeeded says whether a batch needs an event per command on the platform of this name, and if not,
// why.
func eventsNeeded(platform string) (bool, string) {
	v := result.VendorOf(result.Platform{Name: platform})
	for _, r := range enqueueReporters {
		if r.vendor == v {
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
	host   cl.HostPtr  // the buffer's host memory (use-host-ptr), given back if an unwind releases it
	events [2]cl.Event // migrate, touch; 0 where not enqueued
}

// A settlement is what waiting for the device found, for a batch or for the loop so far.
type settlement int

const (
	// confirmed: every command completed (or the loop ended with an answer that needs no replay).
	confirmed settlement = iota
	// failed: a command failed; the answer names its buffer.
	failed
	// unattributed: a wait failed and no command says it did, so no buffer can be named: the batch's
	// buffers were released, and the loop runs again from replayFrom with a wait after each.
	unattributed
)

// loop is the allocation loop. It keeps no per-buffer state beyond the current batch (buffers are never
// released, as in the user's loop; the process exit frees them) and stores in the shared cell, after each
// buffer (or each batch) the device confirmed, how many buffers succeeded.
type loop struct {
	size, count uint64
	flags       uint64 // cl_mem_flags of every buffer
	host        *hostBlocks
	touch       result.Touch // the spec's, as the parent sent it: kept beside the loop's other fields, read per buffer
	migrate     bool
	targets     []target
	tally       *tally
	guard       *hostGuard
	sample      func(index uint64) // a sample with the loop stopped at index buffers

	batched    bool
	events     bool   // an event per command, to name the failed one
	why        string // why batches go without events
	batch      []pending
	batchStart time.Time
	note       string // why attribution fell back to per-buffer
	replayFrom uint64
	// migrating is the list of one buffer a migration names: it lives here, with the loop, so that passing
	// it allocates nothing.
	migrating [1]cl.Mem
	// pattern is what a fill writes (kernels.FillPattern): the first buffer's last page is read back against it.
	pattern []byte
}

func newLoop(spec *wire.StrategySpec, targets []target, platform string, t *tally, g *hostGuard, sample func(uint64)) *loop {
	flags := spec.Flags
	if flags == 0 {
		flags = result.DefaultFlags
	}
	l := &loop{size: spec.Size, count: spec.Count, flags: uint64(flags), host: newHostBlocks(flags, spec.Size), touch: spec.Touch, migrate: spec.Strategy == result.MigrateFirst,
		targets: targets, tally: t, guard: g, sample: sample, batch: make([]pending, 0, batchBuffers), pattern: kernels.FillPattern(spec.Size)}
	l.batched = targets[0].queue != nil && !spec.PerBuffer
	if l.batched {
		t.cell.SetConfirmed(0) // buffers are counted made before their batch is confirmed
		l.events, l.why = eventsNeeded(platform)
	}
	return l
}

// run runs the loop to its answer, on this goroutine's thread alone: in a worker, the process's first
// thread, where the binary's init holds the main goroutine (the runtime's calls are faster there).
func (l *loop) run() *wire.StrategyAnswer {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	from := uint64(0)
	for {
		s, ans := l.pass(from)
		if s == unattributed { // a batch is to be done again, one buffer at a time
			from = l.replayFrom
			continue
		}
		if l.batched {
			ans.Attribution, ans.AttributionNote = wire.AttributionBatched, l.why
		} else {
			ans.Attribution, ans.AttributionNote = wire.AttributionPerBuffer, l.note
		}
		return ans
	}
}

// pass runs the loop from buffer from to its answer, or to a batch that must be made again (unattributed).
func (l *loop) pass(from uint64) (settlement, *wire.StrategyAnswer) {
	n := uint64(len(l.targets))
	next := from % n // the target of buffer i: i mod n, kept without a division per buffer
	forceAt := forcedSampleFrom(from)
	for i := from; i < l.count; i++ {
		if i == forceAt {
			// The device has done every command before a forced sample, so its memory matches the count.
			if s, ans := l.settle(); s != confirmed {
				return s, ans
			}
			l.sample(i)
			forceAt = nextForcedSample(forceAt)
		}
		t := &l.targets[next]
		maps, known := t.mapsNext(l.size)
		if reading, stop := l.guard.stopBeforeMapping(i, l.tally.finished(), maps, known); stop {
			if s, ans := l.settle(); s != confirmed {
				return s, ans
			}
			return confirmed, &wire.StrategyAnswer{Outcome: result.OutcomeStopped, StopCause: result.StopHostGuard, AllocationsOK: i,
				Reason: l.guard.stopReason(reading), Guard: reading.by}
		}
		if next++; next == n {
			next = 0
		}
		if s, ans := l.buffer(i, t); s != confirmed || ans != nil {
			return s, ans
		}
		if known && maps > 0 {
			l.guard.restartCost(l.tally.finished(), i+1) // the new pool buffer is a lump, not a cost per buffer
		}
	}
	if s, ans := l.settle(); s != confirmed {
		return s, ans
	}
	l.tally.cell.SetStage(wire.StageDone)
	return confirmed, &wire.StrategyAnswer{Outcome: result.OutcomeCompleted, AllocationsOK: l.count}
}

// withEvents says whether the commands enqueued now take an event.
func (l *loop) withEvents() bool { return l.batched && l.events }

// buffer makes buffer i on t and enqueues its commands. An answer ends the loop.
func (l *loop) buffer(i uint64, t *target) (settlement, *wire.StrategyAnswer) {
	cell := l.tally.cell
	cell.SetStage(wire.StageCreate)
	var m cl.Mem
	var host cl.HostPtr
	var err error
	if l.host != nil {
		if host, err = l.host.next(); err != nil {
			return l.stopForHost(i, err)
		}
	}
	if t.props != nil {
		m, err = t.buffers.CreateBufferWithProperties(t.props, l.flags, l.size, host)
		if err != nil && i == 0 && (errors.Is(err, cl.InvalidProperty) || errors.Is(err, cl.InvalidValue)) {
			return confirmed, &wire.StrategyAnswer{Outcome: result.OutcomeUnsupported, Reason: "the runtime rejected CL_MEM_DEVICE_HANDLE_LIST_KHR: " + err.Error()}
		}
	} else {
		m, err = t.buffers.CreateBuffer(l.flags, l.size, host)
	}
	if err != nil {
		l.host.giveBack(host)
		return l.fail(i, result.StageCreate, err, t)
	}
	p := pending{i: i, t: t, m: m, host: host}
	if l.migrate {
		cell.SetStage(wire.StageMigrate)
		l.migrating[0] = m
		if p.events[0], err = t.queue.Migrate(l.migrating[:], nil, l.withEvents()); err != nil {
			return l.fail(i, result.StageMigrate, err, t)
		}
	}
	if l.touch != result.TouchNone {
		cell.SetStage(wire.StageTouch)
		if p.events[1], err = l.touchBuffer(p); err != nil {
			if p.events[0] != 0 {
				l.batch = append(l.batch, p) // its migration is settled with the batch
			}
			return l.fail(i, result.StageTouch, err, t)
		}
		if i == 0 && l.touch == result.TouchFill && l.flags&uint64(result.MemHostWriteOnly|result.MemHostNoAccess) == 0 {
			if s, ans := l.proveFill(p); s != confirmed || ans != nil {
				return s, ans
			}
		}
	}
	return l.done(p)
}

// proveFill waits for the first buffer's fill and reads its last page back: a runtime that reports a fill
// done that it did not write (one driver miscounts fills of 2^31 elements or more) has placed nothing, and
// the job says so instead of counting buffers. An error of the wait or the read is the buffer's failure.
// Buffers the host may not read (host-write-only, host-no-access) cannot be proven so, and are not read.
func (l *loop) proveFill(p pending) (settlement, *wire.StrategyAnswer) {
	cell := l.tally.cell
	cell.SetStage(wire.StageFinish)
	if err := p.t.queue.Finish(); err != nil {
		l.releaseEvents(p)
		return l.fail(p.i, result.StageFinish, err, p.t)
	}
	page := make([]byte, min(uint64(4096), l.size))
	off := l.size - uint64(len(page))
	if _, err := p.t.queue.Read(p.m, off, page, nil, false); err != nil {
		l.releaseEvents(p)
		return l.fail(p.i, result.StageFinish, err, p.t)
	}
	n := uint64(len(l.pattern))
	for j, b := range page {
		if o := off + uint64(j); b != l.pattern[o%n] {
			l.releaseEvents(p)
			return confirmed, &wire.StrategyAnswer{Outcome: result.OutcomeWrong, Reason: fmt.Sprintf(
				"the runtime reported the fill of buffer #0 (%s, a %d-byte pattern: %d elements) done, and its byte at offset %d reads back %#02x, not the fill's %#02x",
				units.Size(l.size), n, l.size/n, o, b, l.pattern[o%n])}
		}
	}
	cell.SetStage(wire.StageTouch)
	return confirmed, nil
}

// releaseEvents releases the events of a buffer that ends the loop outside a batch.
func (l *loop) releaseEvents(p pending) {
	for _, ev := range p.events {
		if ev != 0 {
			p.t.queue.ReleaseEvent(ev)
		}
	}
}

// touchBuffer writes every byte of p's buffer: a fill, or the touch kernel, which takes the buffer and its
// index.
func (l *loop) touchBuffer(p pending) (cl.Event, error) {
	t := p.t
	if l.touch == result.TouchFill {
		return t.queue.Fill(p.m, l.size, l.withEvents())
	}
	if err := t.args.SetMem(0, p.m); err != nil {
		return 0, err
	}
	if err := t.args.SetUint32(1, uint32(p.i)); err != nil {
		return 0, err
	}
	return t.queue.RunKernel(t.kernel, l.size, l.withEvents())
}

// done counts buffer p: made and finished at once without a queue, both after a wait in per-buffer mode;
// otherwise made at once and finished with its batch (which it settles when full or old enough).
func (l *loop) done(p pending) (settlement, *wire.StrategyAnswer) {
	cell, i, t := l.tally.cell, p.i, p.t
	switch {
	case t.queue == nil:
		cell.SetCount(i + 1) // and so finished
	case !l.batched:
		// Waiting after each buffer is what makes the index exact on runtimes that allocate at first use and
		// report the failure only when the command runs.
		cell.SetStage(wire.StageFinish)
		if err := t.queue.Finish(); err != nil {
			return l.fail(i, result.StageFinish, err, t)
		}
		cell.SetCount(i + 1)
		l.tally.finish(i + 1)
	default:
		if len(l.batch) == 0 {
			l.batchStart = time.Now()
		}
		l.batch = append(l.batch, p)
		// The count is of buffers made and enqueued, so that a crash in a later call is pinned as exactly as
		// with a wait after each; a failure the device reports for the batch still ends the loop at the
		// failed command's buffer.
		cell.SetCount(i + 1)
		if len(l.batch) == batchBuffers || time.Since(l.batchStart) >= batchTime {
			return l.settle()
		}
	}
	return confirmed, nil
}

// fail ends the loop at buffer i, unless a buffer before it in the batch already failed on the device: that
// one comes first, as it would with a wait after every buffer.
func (l *loop) fail(i uint64, stage result.Stage, err error, t *target) (settlement, *wire.StrategyAnswer) {
	if s, ans := l.settle(); s != confirmed {
		return s, ans
	}
	return failed, l.failure(i, stage, err, t)
}

// failure is the answer of a loop that failed at buffer i.
func (l *loop) failure(i uint64, stage result.Stage, err error, t *target) *wire.StrategyAnswer {
	ff := failureOf(err, stage)
	ff.Index, ff.Device, ff.BytesBefore = i, t.device, i*l.size
	return &wire.StrategyAnswer{Outcome: result.OutcomeFailed, AllocationsOK: i, FirstFailure: ff}
}

// settle waits for the device once for the whole batch and, where the wait failed, asks every command's
// status. A command that failed ends the loop (failed) at its buffer, with stage finish (the wait is where
// it surfaced), as a wait after every buffer would have. A wait that failed without any command saying it
// did names no buffer (unattributed): the batch's buffers are released and the loop runs again from the
// batch's first buffer with a wait after each (replayFrom; the answer's note records it). Otherwise every
// buffer of the batch is done (confirmed).
func (l *loop) settle() (settlement, *wire.StrategyAnswer) {
	if len(l.batch) == 0 {
		return confirmed, nil
	}
	l.tally.cell.SetStage(wire.StageFinish)
	waitErr := l.finishAll()
	// Every command's event is asked only when a wait failed: a wait that succeeded says, as a wait after
	// every buffer would, that every command did.
	var ans *wire.StrategyAnswer
	if waitErr != nil {
		ans = l.firstFailed()
	}
	for _, p := range l.batch {
		for _, ev := range p.events {
			p.t.queue.ReleaseEvent(ev)
		}
	}
	first, last := l.batch[0].i, l.batch[len(l.batch)-1].i
	switch {
	case ans != nil:
		l.batch = l.batch[:0]
		return failed, ans
	case waitErr != nil:
		l.unwind()
		l.replayFrom = first
		l.note = fmt.Sprintf("the runtime reported %v at clFinish without a failed command in the batch of buffers #%d-#%d; "+
			"they were released and made again with a wait after each", waitErr, first, last)
		return unattributed, nil
	}
	l.tally.finish(last + 1)
	l.batch = l.batch[:0]
	l.guard.settled(last + 1)
	return confirmed, nil
}

// finishAll waits for every queue and returns the first wait's error.
func (l *loop) finishAll() error {
	var waitErr error
	for k := range l.targets {
		if q := l.targets[k].queue; q != nil {
			if err := q.Finish(); err != nil && waitErr == nil {
				waitErr = err
			}
		}
	}
	return waitErr
}

// firstFailed is the answer for the batch's first command whose event says it failed, nil when none does.
func (l *loop) firstFailed() *wire.StrategyAnswer {
	for _, p := range l.batch {
		for _, ev := range p.events {
			if ev == 0 {
				continue
			}
			if status, err := p.t.queue.CommandStatus(ev); err == nil && status < 0 {
				return l.failure(p.i, result.StageFinish, &cl.CallError{Call: "clFinish", Status: cl.Status(status)}, p.t)
			}
		}
	}
	return nil
}

// unwind releases the batch's buffers, last first, waits for the queues again, and turns batching off.
func (l *loop) unwind() {
	for k := len(l.batch) - 1; k >= 0; k-- {
		_ = l.batch[k].t.buffers.ReleaseMem(l.batch[k].m)
		l.host.giveBack(l.batch[k].host)
	}
	_ = l.finishAll()
	l.batch = l.batch[:0]
	l.batched = false
}

// stopForHost ends the loop before buffer i when the tool could not map the host memory the buffer's flags
// need: that is the tool's own allocation failing, not the runtime's, so it is a stop with its reason
// (after the batch is settled, so that a runtime failure before it still comes first).
func (l *loop) stopForHost(i uint64, err error) (settlement, *wire.StrategyAnswer) {
	if s, ans := l.settle(); s != confirmed {
		return s, ans
	}
	return failed, &wire.StrategyAnswer{Outcome: result.OutcomeStopped, StopCause: result.StopHostMapping, AllocationsOK: i,
		Reason: fmt.Sprintf("the tool could not map the host memory of buffer #%d (%s): %v", i, result.MemFlags(l.flags), err)}
}
