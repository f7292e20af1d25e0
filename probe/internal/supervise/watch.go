package supervise

import (
	"fmt"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// Cause is why the parent stopped a child.
type Cause int

// The causes. The reason beside a cause says it in words, with the figures.
const (
	NotStopped  Cause = iota
	Interrupted       // the run was cancelled (Ctrl-C)
	TimedOut          // the job ran past its total time limit
	Hung              // set-up took too long, or the loop stopped moving
	Guard             // host memory drained past the backstop while the child was in a call
)

// causeNames are the causes as String writes them.
var causeNames = [...]string{NotStopped: "not stopped", Interrupted: "interrupted", TimedOut: "timed out", Hung: "hung", Guard: "guard"}

// String names the cause.
func (c Cause) String() string {
	if c < 0 || int(c) >= len(causeNames) {
		return fmt.Sprintf("cause %d", int(c))
	}
	return causeNames[c]
}

// Outcome is the outcome a job stopped for this cause has.
func (c Cause) Outcome() result.Outcome {
	switch c {
	case NotStopped:
		return ""
	case Hung:
		return result.OutcomeHung
	}
	return result.OutcomeStopped
}

// StopCause is the result's cause of a job stopped for this cause, "" for NotStopped.
func (c Cause) StopCause() result.StopCause {
	switch c {
	case Interrupted:
		return result.StopInterrupted
	case TimedOut:
		return result.StopTimedOut
	case Hung:
		return result.StopHung
	case Guard:
		return result.StopHostGuard
	}
	return ""
}

// interruptedReason is the reason of a child stopped by an interrupt.
const interruptedReason = "interrupted"

// tick is how often the watchdog reads the progress cell and the backstop's figures.
const tick = 50 * time.Millisecond

// watch is what the watchdog knows of one child: its limits, when it started, the count and stage it last
// read and when they last moved, when its set-up began, and when its result came.
type watch struct {
	c          *Child
	pid        int
	cell       wire.Cell
	start      time.Time
	count      uint64
	stage      wire.Stage
	lastMove   time.Time
	setupSince time.Time
	resultAt   time.Time
}

func newWatch(c *Child, pid int, cell wire.Cell, start time.Time) *watch {
	now := time.Now()
	return &watch{c: c, pid: pid, cell: cell, start: start, count: cell.Count(), stage: cell.Stage(), lastMove: now, setupSince: now}
}

// check is the child's look at one tick (the loop's group.check): it reads the cell, asks the watchdog,
// then, while no answer has come, the host-memory backstop, and tells OnTick. It ends the child when its time
// is up, set-up takes too long, the loop stops moving (a hang), host memory drains past the backstop, or the
// child lingers after its answer.
func (w *watch) check(now time.Time) (Cause, string, bool) {
	w.observe(now, w.cell.Count(), w.cell.Stage())
	cause, why, stop := w.verdict(now)
	if !stop && w.c.HostReserve > 0 && w.resultAt.IsZero() {
		if guard := w.c.backstop(); guard != "" {
			cause, why, stop = Guard, guard, true
		}
	}
	if w.c.OnTick != nil {
		w.c.OnTick(w.count, now.Sub(w.start))
	}
	return cause, why, stop
}

// observe takes the cell's count and stage read at now.
func (w *watch) observe(now time.Time, count uint64, stage wire.Stage) {
	if count == w.count && stage == w.stage {
		return
	}
	if stage != w.stage && stage == wire.StageSetup {
		w.setupSince = now
	}
	w.count, w.stage, w.lastMove = count, stage, now
}

// verdict says whether the child must be killed at now, and why: ok with NotStopped is a child that sent
// its result and does not leave.
func (w *watch) verdict(now time.Time) (Cause, string, bool) {
	l := w.c.Limits
	switch {
	case !w.resultAt.IsZero():
		// The job is over; a child that does not leave is not waited for.
		return NotStopped, "", now.Sub(w.resultAt) > exitGrace
	case l.Total > 0 && now.Sub(w.start) > l.Total:
		return TimedOut, fmt.Sprintf("timeout: the strategy ran longer than %s", l.Total), true
	case w.stage == wire.StageSetup && l.Setup > 0 && now.Sub(w.setupSince) > l.Setup:
		return Hung, fmt.Sprintf("set-up (loading the runtime, listing devices, creating contexts, building kernels) did not finish within %s (--setup-timeout)", l.Setup), true
	case w.stage != wire.StageSetup && w.stage != wire.StageDone && l.Hang > 0 && now.Sub(w.lastMove) > l.Hang:
		return Hung, fmt.Sprintf("watchdog: no progress for %s in stage %s", l.Hang, w.stage.Result()), true
	}
	return NotStopped, "", false
}

// backstop says why a child must be killed because memory drained while it was stuck in a call: system
// available memory, or the memory cgroup's free memory, below half its reserve.
func (c *Child) backstop() string {
	if mi, err := c.Root.Meminfo(); err == nil && mi.Available < c.HostReserve/2 {
		return fmt.Sprintf("host guard: system available memory %s fell below half the reserve %s",
			units.Bytes(mi.Available), units.Bytes(c.HostReserve))
	}
	if c.Cgroup == nil {
		return ""
	}
	limit := c.Cgroup.Limit()
	ws, err := c.Cgroup.WorkingSet()
	if reserve := wire.CgroupReserve(c.HostReserve, limit); limit > 0 && err == nil && limit-min(limit, ws) < reserve/2 {
		return fmt.Sprintf("host guard: the memory cgroup %s has %s free (its limit %s less its working set), below half its reserve %s",
			c.Cgroup.Path, units.Bytes(limit-min(limit, ws)), units.Bytes(limit), units.Bytes(reserve))
	}
	return ""
}
