package worker

import (
	"errors"
	"syscall"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// countingMaps is a stand-in for cl.MapHost that numbers the blocks it hands out and can fail at one.
type countingMaps struct {
	mapped int
	failAt int // the block number that fails; -1 for none
}

func (c *countingMaps) mapHost(size uint64, fill byte) (cl.HostPtr, error) {
	if c.mapped == c.failAt {
		return 0, syscall.ENOMEM
	}
	c.mapped++
	return cl.HostPtr(c.mapped << 20), nil
}

// Each flag set's buffers get the host memory it needs: use-host-ptr a block of its own per live buffer
// (and, after a replay, the released buffers' blocks again, not new ones), copy-host-ptr one block for all,
// others none; every buffer is created with the job's flags.
func TestHostBlocksPerFlagSet(t *testing.T) {
	unnamed := []fault{{set: true, index: 37, stage: result.StageTouch, way: atWaitUnnamed, code: cl.OutOfResources}}
	for _, c := range []struct {
		name       string
		flags      result.MemFlags
		faults     []fault
		wantBlocks int // blocks mapped in all; -1: as many as buffers were ever live (to the replayed batch's end)
		distinct   bool
	}{
		{name: "read-write takes none", flags: result.DefaultFlags, wantBlocks: 0},
		{name: "alloc-host-ptr takes none: the runtime allocates it", flags: result.MemReadWrite | result.MemAllocHostPtr, wantBlocks: 0},
		{name: "copy-host-ptr shares one source", flags: result.MemReadOnly | result.MemCopyHostPtr, wantBlocks: 1},
		{name: "use-host-ptr takes one per buffer", flags: result.MemReadWrite | result.MemUseHostPtr, wantBlocks: testBuffers, distinct: true},
		{name: "use-host-ptr after a replay reuses the released blocks", flags: result.MemUseHostPtr | result.MemReadWrite, faults: unnamed,
			wantBlocks: -1, distinct: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newLoopRun(t, loopCase{shape: shapes[0], touch: result.TouchFill, platform: eventsPlatform, faults: c.faults}, nil)
			maps := &countingMaps{failAt: -1}
			r.l.flags, r.l.host = uint64(c.flags), newHostBlocks(c.flags, testSize)
			if r.l.host != nil { // flags that take no host memory have none to map
				r.l.host.mapHost = maps.mapHost
			}
			ans := r.l.run()
			if len(c.faults) > 0 && (ans.Outcome != result.OutcomeFailed || ans.AllocationsOK != 37) {
				t.Fatalf("%s after %d buffers: want failed at #37", ans.Outcome, ans.AllocationsOK)
			}
			want := c.wantBlocks
			if want < 0 {
				_, last, ok := replayed(ans.AttributionNote)
				if !ok {
					t.Fatalf("note %q: want a replay", ans.AttributionNote)
				}
				want = int(last) + 1
			}
			if maps.mapped != want {
				t.Errorf("%d host blocks mapped, want %d", maps.mapped, want)
			}
			seen := map[cl.HostPtr]bool{}
			for m, f := range r.rt.flags {
				if f != uint64(c.flags) {
					t.Fatalf("a buffer made with flags %#x, want %#x", f, uint64(c.flags))
				}
				h := r.rt.hosts[m]
				if c.distinct && seen[h] {
					t.Fatalf("two live buffers share host block %#x", uintptr(h))
				}
				seen[h] = true
			}
			if len(r.rt.problems) > 0 {
				t.Errorf("the runtime saw: %v", r.rt.problems)
			}
		})
	}
}

// When the tool cannot map a buffer's host memory, the loop stops there with the reason, after the buffers
// before it are confirmed: the tool's own allocation is no runtime failure.
func TestHostBlockThatCannotBeMappedStops(t *testing.T) {
	const at = 70
	r := newLoopRun(t, loopCase{shape: shapes[0], touch: result.TouchFill, platform: eventsPlatform}, nil)
	flags := result.MemReadWrite | result.MemUseHostPtr
	r.l.flags, r.l.host = uint64(flags), newHostBlocks(flags, testSize)
	maps := &countingMaps{failAt: at}
	r.l.host.mapHost = maps.mapHost
	ans := r.l.run()
	if ans.Outcome != result.OutcomeStopped || ans.StopCause != result.StopHostMapping || ans.AllocationsOK != at || ans.FirstFailure != nil ||
		ans.Reason != "the tool could not map the host memory of buffer #70 (use-host-ptr): "+syscall.ENOMEM.Error() {
		t.Errorf("%s (%s) after %d (%q, failure %+v); want stopped (%s) after %d, saying why", ans.Outcome, ans.StopCause, ans.AllocationsOK,
			ans.Reason, ans.FirstFailure, result.StopHostMapping, at)
	}
	if r.tally.finished() != at {
		t.Errorf("%d buffers confirmed, want %d", r.tally.finished(), at)
	}
}

// MapHost gives page-aligned memory that holds what it was written with.
func TestMapHostIsAlignedAndWritten(t *testing.T) {
	p, err := cl.MapHost(3<<12+5, blockFill)
	if err != nil {
		t.Fatal(err)
	}
	if uintptr(p)%uintptr(syscall.Getpagesize()) != 0 {
		t.Errorf("block at %#x is not page-aligned", uintptr(p))
	}
	if _, err := cl.MapHost(0, 0); err == nil || errors.Is(err, syscall.ENOMEM) {
		t.Errorf("a block of 0 bytes: %v, want a refusal", err)
	}
}
