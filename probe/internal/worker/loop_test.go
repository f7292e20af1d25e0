package worker

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/progress"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The loop's tests run it against the fake runtime (fake_test.go), which fails at one buffer's call of one
// stage in one way; what the loop must answer is derived from the case, as a wait after every buffer
// would have found it.

const (
	testBuffers = 100
	testSize    = 4096
)

// shape is how the loop's targets are laid out.
type shape struct {
	name       string
	targets    int
	perDevice  bool // a context per target (else one over all)
	deviceList bool // buffers made with device-list properties
}

var shapes = []shape{
	{name: "one target", targets: 1},
	{name: "three targets of one context", targets: 3},
	{name: "two targets of a context each", targets: 2, perDevice: true},
	{name: "two targets with device lists", targets: 2, deviceList: true},
}

// Platforms: one whose batches take an event per command, and the one whose batches go without.
const (
	eventsPlatform   = "Portable Computing Language"
	noEventsPlatform = "NVIDIA CUDA"
)

// loopCase is one run of the loop against the fake runtime.
type loopCase struct {
	name      string
	shape     shape
	touch     result.Touch
	migrate   bool
	perBuffer bool
	platform  string
	faults    []fault // the first is the earliest
}

func (c loopCase) queued() bool  { return c.touch != result.TouchNone || c.migrate }
func (c loopCase) batched() bool { return c.queued() && !c.perBuffer }

func (c loopCase) strategy() result.Strategy {
	switch {
	case c.migrate:
		return result.MigrateFirst
	case c.shape.deviceList:
		return result.DeviceList
	case c.shape.perDevice:
		return result.PerDevice
	}
	return result.Shared
}

// expectation is what the loop must answer for a case.
type expectation struct {
	outcome     result.Outcome
	ok          uint64
	stage       result.Stage
	call        string
	code        cl.Status
	device      int
	attribution string
	note        string // the note, where it is known in full
	replay      bool   // the note must name a batch made again that holds the failed buffer
}

// device is the device number of target k: not k, so that a mix-up shows.
func device(k uint64) int { return 10 + int(k) }

// callOf is the call a fault at the call of stage fails.
func (c loopCase) callOf(stage result.Stage) string {
	switch {
	case stage == result.StageCreate && c.shape.deviceList:
		return "clCreateBufferWithProperties"
	case stage == result.StageCreate:
		return "clCreateBuffer"
	case stage == result.StageMigrate:
		return "clEnqueueMigrateMemObjects"
	case c.touch == result.TouchFill:
		return "clEnqueueFillBuffer"
	}
	return "clEnqueueNDRangeKernel"
}

func (c loopCase) expect() expectation {
	events, why := eventsNeeded(c.platform)
	e := expectation{attribution: wire.AttributionPerBuffer}
	if c.batched() {
		e.attribution, e.note = wire.AttributionBatched, why
	}
	var f fault
	if len(c.faults) > 0 {
		f = c.faults[0] // the earliest fails the loop, as a wait after every buffer would find
	}
	switch {
	case !f.set:
		e.outcome, e.ok = result.OutcomeCompleted, testBuffers
		return e
	case c.shape.deviceList && f.stage == result.StageCreate && f.index == 0 && (f.code == cl.InvalidProperty || f.code == cl.InvalidValue):
		e.outcome = result.OutcomeUnsupported
		return e
	}
	e.outcome, e.ok, e.code, e.device = result.OutcomeFailed, f.index, f.code, device(f.index%uint64(c.shape.targets))
	if f.way == atCall {
		e.stage, e.call = f.stage, c.callOf(f.stage)
		return e
	}
	e.stage, e.call = result.StageFinish, "clFinish"
	// With --touch fill the first buffer's fill is waited for on its own (its read-back proves it), so a
	// failure there is pinned by that wait. Otherwise a batch's wait that failed is attributed by the events
	// where they say which command failed; else the batch is made again with a wait after each buffer.
	if c.touch == result.TouchFill && f.index == 0 {
		return e
	}
	if c.batched() && !(events && f.way == atWaitNamed) {
		e.attribution, e.note, e.replay = wire.AttributionPerBuffer, "", true
	}
	return e
}

// loopCases are every shape, touch, migrate-first, mode and platform, without a fault and with each fault
// the combination can have, at buffers in the first batch, at its end and after it, and the last.
func loopCases() []loopCase {
	var cases []loopCase
	for _, sh := range shapes {
		for _, touch := range []result.Touch{result.TouchNone, result.TouchFill, result.TouchKernel} {
			for _, migrate := range []bool{false, true} {
				if migrate && (sh.perDevice || sh.deviceList) {
					continue // migrate-first is a strategy of one context without device lists
				}
				for _, perBuffer := range []bool{false, true} {
					for _, platform := range []string{eventsPlatform, noEventsPlatform} {
						c := loopCase{shape: sh, touch: touch, migrate: migrate, perBuffer: perBuffer, platform: platform}
						cases = append(cases, c.withFaults()...)
					}
				}
			}
		}
	}
	return cases
}

// withFaults is the case without a fault, and with every fault it can have.
func (c loopCase) withFaults() []loopCase {
	faults := []fault{{}}
	stages := []result.Stage{result.StageCreate}
	if c.migrate {
		stages = append(stages, result.StageMigrate)
	}
	if c.touch != result.TouchNone {
		stages = append(stages, result.StageTouch)
	}
	codes := map[result.Stage]cl.Status{result.StageCreate: cl.OutOfHostMemory, result.StageMigrate: cl.MemObjectAllocationFailure,
		result.StageTouch: cl.OutOfResources}
	for _, stage := range stages {
		ways := []way{atCall}
		if stage != result.StageCreate { // a create has no wait
			ways = append(ways, atWaitNamed, atWaitUnnamed)
		}
		for _, w := range ways {
			for _, i := range []uint64{0, 1, batchBuffers - 1, batchBuffers, testBuffers - 1} {
				faults = append(faults, fault{set: true, index: i, stage: stage, way: w, code: codes[stage]})
			}
		}
	}
	sets := make([][]fault, len(faults))
	for k, f := range faults {
		sets[k] = []fault{f}
	}
	if c.shape.deviceList {
		// The runtime rejects the properties: at buffer 0 the strategy is unsupported, later a failure.
		sets = append(sets, []fault{{set: true, index: 0, stage: result.StageCreate, code: cl.InvalidProperty}},
			[]fault{{set: true, index: 5, stage: result.StageCreate, code: cl.InvalidProperty}})
	}
	// A command that failed on the device comes first, though a later buffer's call fails before the wait.
	if last := stages[len(stages)-1]; last != result.StageCreate {
		for _, w := range []way{atWaitNamed, atWaitUnnamed} {
			sets = append(sets, []fault{{set: true, index: 10, stage: last, way: w, code: codes[last]},
				{set: true, index: 12, stage: result.StageCreate, code: codes[result.StageCreate]}})
		}
	}
	var out []loopCase
	for _, fs := range sets {
		fc := c
		fc.faults = fs
		mode := "batched"
		if c.perBuffer {
			mode = "per-buffer"
		}
		fc.name = fmt.Sprintf("%s, touch %s, migrate %v, %s, %s", c.shape.name, c.touch, c.migrate, mode, c.platform)
		for _, f := range fs {
			if f.set {
				fc.name += fmt.Sprintf(", %s fails %s at #%d with %d", f.stage, f.way, f.index, f.code)
			}
		}
		out = append(out, fc)
	}
	return out
}

// loopRun is a loop built for a case, with the fake runtime under it and the forced samples it took.
type loopRun struct {
	l       *loop
	rt      *fakeRuntime
	tally   *tally
	sampled []uint64
	bad     []string // forced samples taken with a batch in flight
}

func newLoopRun(t *testing.T, c loopCase, g *hostGuard) *loopRun {
	t.Helper()
	cell, f, err := progress.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(); cell.Close() })
	r := &loopRun{rt: newFakeRuntime(c.faults...), tally: &tally{cell: wire.Cell{Cell: cell}, noQueues: !c.queued()}}
	var targets []target
	for k := 0; k < c.shape.targets; k++ {
		tg := target{device: device(uint64(k)), buffers: fakeContext{r.rt}}
		if c.queued() {
			tg.queue = &fakeQueue{rt: r.rt}
		}
		if c.touch == result.TouchKernel {
			tg.args = fakeKernel{r.rt}
		}
		if c.shape.deviceList {
			tg.props = &cl.Properties{}
		}
		targets = append(targets, tg)
	}
	spec := &wire.StrategySpec{Strategy: c.strategy(), Size: testSize, Count: testBuffers, Touch: c.touch, PerBuffer: c.perBuffer}
	if g == nil {
		root, _ := fakeMeminfo(t, 8<<30)
		g = newHostGuard(root, 0, testSize, noCgroup, 0)
	}
	r.l = newLoop(spec, targets, c.platform, r.tally, g, func(i uint64) {
		r.sampled = append(r.sampled, i)
		if len(r.l.batch) > 0 {
			r.bad = append(r.bad, fmt.Sprintf("a forced sample at #%d with %d buffers in flight", i, len(r.l.batch)))
		}
	})
	return r
}

func TestLoopAgainstTheFakeRuntime(t *testing.T) {
	cases := loopCases()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newLoopRun(t, c, nil)
			ans := r.l.run()
			checkAnswer(t, ans, c.expect())
			r.checkRuntime(t, c, ans)
		})
	}
}

// replayedBatch finds the batch a note says was made again.
var replayedBatch = regexp.MustCompile(`in the batch of buffers #(\d+)-#(\d+); they were released and made again`)

// replayed is the first and last buffer of the batch a note says was made again; ok is false when it says
// none was.
func replayed(note string) (first, last uint64, ok bool) {
	m := replayedBatch.FindStringSubmatch(note)
	if m == nil {
		return 0, 0, false
	}
	first, _ = strconv.ParseUint(m[1], 10, 64)
	last, _ = strconv.ParseUint(m[2], 10, 64)
	return first, last, true
}

func checkAnswer(t *testing.T, ans *wire.StrategyAnswer, want expectation) {
	t.Helper()
	if ans.Outcome != want.outcome || ans.AllocationsOK != want.ok || ans.Attribution != want.attribution {
		t.Fatalf("%s after %d buffers, attribution %s (%s); want %s after %d, attribution %s",
			ans.Outcome, ans.AllocationsOK, ans.Attribution, ans.Reason, want.outcome, want.ok, want.attribution)
	}
	if want.replay {
		if first, last, ok := replayed(ans.AttributionNote); !ok || first > want.ok || last < want.ok {
			t.Errorf("note %q: want the batch made again, holding #%d", ans.AttributionNote, want.ok)
		}
	} else if ans.AttributionNote != want.note {
		t.Errorf("note %q, want %q", ans.AttributionNote, want.note)
	}
	ff := ans.FirstFailure
	if want.outcome != result.OutcomeFailed {
		if ff != nil {
			t.Errorf("a first failure %+v in a loop that did not fail", ff)
		}
		return
	}
	if ff == nil || ff.Index != want.ok || ff.Stage != want.stage || ff.Call != want.call || ff.Code != int32(want.code) ||
		ff.Name != want.code.Name() || ff.Device != want.device || ff.BytesBefore != want.ok*testSize {
		t.Errorf("first failure %+v; want #%d at %s in %s with %d on device %d", ff, want.ok, want.stage, want.call, want.code, want.device)
	}
}

// checkRuntime checks what the loop left in the fake runtime: every event released, every forced sample at
// a settled count on the schedule, the buffers of a replayed batch released, the device's count.
func (r *loopRun) checkRuntime(t *testing.T, c loopCase, ans *wire.StrategyAnswer) {
	t.Helper()
	for _, p := range append(r.rt.problems, r.bad...) {
		t.Error(p)
	}
	if len(r.rt.events) > 0 {
		t.Errorf("%d events left unreleased", len(r.rt.events))
	}
	schedule := forcedSchedule(testBuffers)
	for _, i := range r.sampled {
		if !slices.Contains(schedule, i) {
			t.Errorf("a forced sample at #%d, off the schedule %v", i, schedule)
		}
	}
	if ans.Outcome == result.OutcomeCompleted && !slices.Equal(r.sampled, schedule) {
		t.Errorf("forced samples at %v, want %v", r.sampled, schedule)
	}
	if first, last, ok := replayed(ans.AttributionNote); ok {
		if r.rt.released != int(last-first+1) {
			t.Errorf("%d buffers released; the batch made again had %d", r.rt.released, last-first+1)
		}
	}
	most := ans.AllocationsOK
	// A buffer whose touch failed at the call after its migration was enqueued with an event is settled with
	// its batch, and so counted as finished: the loop ends there, and only a sample taken meanwhile reads it.
	if events, _ := eventsNeeded(c.platform); c.migrate && c.batched() && events && len(c.faults) == 1 &&
		c.faults[0].stage == result.StageTouch && c.faults[0].way == atCall {
		most++
	}
	if done := r.tally.finished(); done > most || (ans.Outcome == result.OutcomeCompleted && done != testBuffers) {
		t.Errorf("the device finished %d buffers; the answer says %d", done, ans.AllocationsOK)
	}
}

// forcedSchedule is every forced sample of a loop of n buffers, by the rule: from the first, each next
// half as far again, at least one further.
func forcedSchedule(n uint64) []uint64 {
	var out []uint64
	for at := uint64(firstForcedSample); at < n; at += max(1, at/2) {
		out = append(out, at)
	}
	return out
}

func TestForcedSampleSchedule(t *testing.T) {
	// The counts the comment on nextForcedSample gives.
	if got, want := forcedSchedule(43), []uint64{2, 3, 4, 6, 9, 13, 19, 28, 42}; !slices.Equal(got, want) {
		t.Errorf("schedule %v, want %v", got, want)
	}
	schedule := forcedSchedule(1 << 20)
	for from := uint64(0); from < 1<<12; from++ {
		got := forcedSampleFrom(from)
		k, _ := slices.BinarySearch(schedule, from) // the first at or after from
		if got != schedule[k] {
			t.Fatalf("from #%d: the first forced sample is #%d, want #%d", from, got, schedule[k])
		}
	}
}

// The fake's own case count, so that a change that drops cases shows.
func TestLoopCasesCoverEveryPath(t *testing.T) {
	paths := map[string]bool{}
	for _, c := range loopCases() {
		e := c.expect()
		paths[fmt.Sprintf("%s %s replay=%v", e.outcome, e.attribution, e.replay)] = true
	}
	for _, want := range []string{
		"completed batched replay=false", "completed per-buffer replay=false", "unsupported batched replay=false",
		"unsupported per-buffer replay=false", "failed batched replay=false", "failed per-buffer replay=false",
		"failed per-buffer replay=true",
	} {
		if !paths[want] {
			t.Errorf("no case takes the path %q; the cases take %v", want, strings.Join(slices.Sorted(maps.Keys(paths)), ", "))
		}
	}
}

// A runtime that reports the first buffer's fill done and did not write it has placed nothing: the job is
// wrong after 0 buffers, whatever came after, and says what it read.
func TestLoopWithAFillThatDidNotTake(t *testing.T) {
	c := loopCase{shape: shapes[0], touch: result.TouchFill, platform: eventsPlatform}
	r := newLoopRun(t, c, nil)
	r.rt.wrongFill = true
	ans := r.l.run()
	if ans.Outcome != result.OutcomeWrong || ans.AllocationsOK != 0 || ans.Reason != "the runtime reported the fill of buffer #0 (4 KiB, a 4-byte pattern: 1024 elements) done, "+
		"and its byte at offset 0 reads back 0x00, not the fill's 0xa5" {
		t.Errorf("answer %+v, want wrong after 0 buffers", ans)
	}
	if len(r.rt.problems) > 0 {
		t.Errorf("the loop did what a runtime would not take: %v", r.rt.problems)
	}
}
