package worker

import (
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// settle on a batch of five filled buffers, the fourth of which fails on the device or not: what it finds,
// and what it leaves for the loop.
func TestSettle(t *testing.T) {
	const batch, failAt = 5, 3
	for _, c := range []struct {
		name     string
		platform string
		faults   []fault
		want     settlement
	}{
		{name: "every command completed", platform: eventsPlatform, want: confirmed},
		{name: "an event names the failed command", platform: eventsPlatform,
			faults: []fault{{set: true, index: failAt, stage: result.StageTouch, way: atWaitNamed, code: cl.OutOfResources}}, want: failed},
		{name: "the wait fails and no event says which", platform: eventsPlatform,
			faults: []fault{{set: true, index: failAt, stage: result.StageTouch, way: atWaitUnnamed, code: cl.OutOfResources}}, want: unattributed},
		{name: "the wait fails on a platform without events", platform: noEventsPlatform,
			faults: []fault{{set: true, index: failAt, stage: result.StageTouch, way: atWaitNamed, code: cl.OutOfResources}}, want: unattributed},
	} {
		t.Run(c.name, func(t *testing.T) {
			lc := loopCase{shape: shapes[0], touch: result.TouchFill, platform: c.platform, faults: c.faults}
			r := newLoopRun(t, lc, nil)
			l := r.l
			for i := uint64(0); i < batch; i++ {
				if s, ans := l.buffer(i, &l.targets[0]); s != confirmed || ans != nil {
					t.Fatalf("buffer %d: %v, %+v", i, s, ans)
				}
			}
			s, ans := l.settle()
			if s != c.want {
				t.Fatalf("settled %v, want %v", s, c.want)
			}
			if len(l.batch) != 0 || len(r.rt.events) != 0 {
				t.Errorf("%d buffers left in the batch, %d events unreleased", len(l.batch), len(r.rt.events))
			}
			switch s {
			case confirmed:
				if ans != nil || r.tally.finished() != batch {
					t.Errorf("answer %+v, %d buffers finished; want none and %d", ans, r.tally.finished(), batch)
				}
			case failed:
				if ans == nil || ans.FirstFailure.Index != failAt || ans.FirstFailure.Stage != result.StageFinish || r.tally.finished() != 0 {
					t.Errorf("answer %+v, %d finished; want buffer #%d at finish, none finished", ans, r.tally.finished(), failAt)
				}
			case unattributed:
				if ans != nil || l.replayFrom != 0 || l.batched || r.rt.released != batch || l.note != "the runtime reported clFinish: CL_OUT_OF_RESOURCES (-5) at clFinish without a failed command in the batch of buffers #0-#4; "+
					"they were released and made again with a wait after each" {
					t.Errorf("answer %+v, replay from %d, batched %v, %d released, note %q; want a replay of #0-#4, all released",
						ans, l.replayFrom, l.batched, r.rt.released, l.note)
				}
			}
		})
	}
}

// The guard stops the loop at the buffer that would take available memory below the reserve, and the
// answer says so: with each buffer taking its size from available memory, and k buffers and a half of room
// above the reserve at the start, buffer k is not made.
func TestLoopStopsAtTheGuard(t *testing.T) {
	const mib, k = 1 << 20, 10
	const reserve = 1 << 30
	start := uint64(reserve + k*mib + mib/2)
	root, set := fakeMeminfo(t, start)
	g := newHostGuard(root, reserve, mib, noCgroup, 0)
	r := newLoopRun(t, loopCase{shape: shapes[0], touch: result.TouchNone, platform: eventsPlatform}, g)
	r.l.size = mib
	r.rt.onCreate = func(i uint64) { set(start - (i+1)*mib) }
	ans := r.l.run()
	if ans.Outcome != result.OutcomeStopped || ans.StopCause != result.StopHostGuard || ans.AllocationsOK != k || ans.Guard != result.GuardSystem ||
		!strings.HasPrefix(ans.Reason, "host guard: system available memory") {
		t.Errorf("%s (%s) after %d buffers by %q (%s); want stopped (%s) after %d by the system's reserve", ans.Outcome, ans.StopCause,
			ans.AllocationsOK, ans.Guard, ans.Reason, result.StopHostGuard, k)
	}
}

// A batched loop has the guard measure its cost after each batch settles: far from the reserve, where the
// loop itself asks for no reading, those are the only ones. With every buffer taking one and a half times
// its size, that is the cost the guard ends with, not the size it starts from.
func TestBatchedLoopMeasuresTheGuardCost(t *testing.T) {
	const per = testSize * 3 / 2
	start := uint64(8 << 30)
	root, set := fakeMeminfo(t, start)
	g := newHostGuard(root, 1<<30, testSize, noCgroup, 0)
	g.window = 0 // the buffers alone decide when a window ends
	r := newLoopRun(t, loopCase{shape: shapes[0], touch: result.TouchFill, platform: eventsPlatform}, g)
	r.rt.onCreate = func(i uint64) { set(start - (i+1)*per) }
	if ans := r.l.run(); ans.Outcome != result.OutcomeCompleted || !r.l.batched {
		t.Fatalf("%s after %d buffers (batched %v); want a batched loop that completes", ans.Outcome, ans.AllocationsOK, r.l.batched)
	}
	if g.cost != per {
		t.Errorf("the guard's cost is %.0f bytes per buffer, want %d (each buffer took that)", g.cost, per)
	}
}

// A batch settles when it is full or old: a batch begun batchTime ago is waited for at its next buffer,
// however few it holds, so that a slow runtime's failure is not left unseen for a whole batch. The batch's
// start is set in the past, not waited for, so the test does not depend on the machine's speed.
func TestAnOldBatchSettlesAtItsNextBuffer(t *testing.T) {
	r := newLoopRun(t, loopCase{shape: shapes[0], touch: result.TouchKernel, platform: eventsPlatform}, nil)
	l := r.l
	if !l.batched {
		t.Fatal("the case's loop waits after each buffer; want batches")
	}
	if s, ans := l.buffer(0, &l.targets[0]); s != confirmed || ans != nil || len(l.batch) != 1 {
		t.Fatalf("buffer 0: %v, %+v, %d in the batch; want it in a batch of one", s, ans, len(l.batch))
	}
	l.batchStart = l.batchStart.Add(-batchTime)
	if s, ans := l.buffer(1, &l.targets[0]); s != confirmed || ans != nil {
		t.Fatalf("buffer 1: %v, %+v", s, ans)
	}
	if len(l.batch) != 0 || r.tally.finished() != 2 {
		t.Errorf("after the old batch's next buffer: %d in the batch, %d finished; want it settled with both finished", len(l.batch), r.tally.finished())
	}
}
