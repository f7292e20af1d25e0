package trace

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// writer writes the channel as the layer does (layer/clmemprobe_layer.c: emit_fast, emit_as), one call at a
// time: the fast thread's calls into runs of the fast ring, every other thread's into the shared ring, each
// with what it saw of the fast ring. The real layer's order is tested end to end (TestRelayOrderOnPoCL);
// this one drives the tool's merge through cases a scheduler would make only by chance.
type writer struct {
	c        *Channel
	fastPos  uint64
	fastOpen bool
}

func (w *writer) fast(r record) bool {
	h := w.c.h
	if w.fastOpen {
		s := &w.c.fast[w.fastPos%ringRecords]
		if s.Kind == r.Kind && r.Kind != kindContext && s.Context == r.Context && s.Code == r.Code && s.Size == r.Size &&
			s.Flags == r.Flags && s.Aux == r.Aux {
			atomic.StoreUint64(&s.Count, s.Count+1)
			return true
		}
		w.fastPos++
		w.fastOpen = false
		atomic.StoreUint64(&h.FastHead, w.fastPos)
	}
	if w.fastPos >= atomic.LoadUint64(&h.FastTail)+ringRecords {
		return false // dropped
	}
	r.Count = 1
	w.c.fast[w.fastPos%ringRecords] = r
	atomic.StoreUint64(&w.c.fast[w.fastPos%ringRecords].Commit, w.fastPos+1)
	w.fastOpen = true
	return true
}

// reserve takes a shared-ring place and fills the record, leaving the commit to the caller.
func (w *writer) reserve(r record) (uint64, bool) {
	h := w.c.h
	r.After = atomic.LoadUint64(&h.FastHead)
	r.AfterCount = w.c.openCount(r.After)
	pos := atomic.LoadUint64(&h.Head)
	if pos-atomic.LoadUint64(&h.Tail) >= ringRecords {
		return 0, false
	}
	atomic.StoreUint64(&h.Head, pos+1)
	r.Count = 1
	w.c.ring[pos%ringRecords] = r
	return pos, true
}

func (w *writer) shared(r record) bool {
	pos, ok := w.reserve(r)
	if ok {
		atomic.StoreUint64(&w.c.ring[pos%ringRecords].Commit, pos+1)
	}
	return ok
}

func newTestChannel(t *testing.T) *Channel {
	t.Helper()
	c, err := NewChannel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// expand is what the drain handed out, one size a call (the sizes tell the calls apart).
func expand(into *[]uint64) func(*record) {
	return func(r *record) {
		for range r.Count {
			*into = append(*into, r.Size)
		}
	}
}

// Calls made one after another by a fast thread and others, drained at random points (an open run is
// handed out in parts), come out in the order they were made, across more runs and shared records than the
// rings hold (their positions wrap).
func TestDrainKeepsTheOrderOfCalls(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	c := newTestChannel(t)
	w := &writer{c: c}
	var made, got []uint64
	// Sizes repeat in stretches, so that the fast ring's runs grow over other threads' calls.
	for i := 0; i < 3*ringRecords; i++ {
		size := uint64(4096 * (1 + rng.IntN(3)))
		r := record{Kind: kindBuffer, Context: 1, Size: size}
		ok := false
		if rng.IntN(3) == 0 {
			ok = w.shared(r)
		} else {
			ok = w.fast(r)
		}
		if !ok {
			t.Fatalf("call %d dropped: the test drains too seldom", i)
		}
		made = append(made, size)
		if rng.IntN(50) == 0 {
			c.drain(false, expand(&got))
		}
	}
	c.drain(true, expand(&got))
	if len(got) != len(made) {
		t.Fatalf("%d calls handed out, %d made", len(got), len(made))
	}
	for i := range made {
		if got[i] != made[i] {
			t.Fatalf("call %d: size %d handed out, %d made", i, got[i], made[i])
		}
	}
}

// A shared record whose writer has taken its place but not committed it holds back what comes after it:
// the shared records after it, and the fast calls not handed out before it, since a record after it may have
// been committed before one of those calls (3 here, before the second 1). Once it is committed, all come out
// in order; at the end a place never committed is counted lost.
func TestDrainAroundAnUncommittedRecord(t *testing.T) {
	c := newTestChannel(t)
	w := &writer{c: c}
	var got []uint64
	w.fast(record{Kind: kindBuffer, Size: 1})
	c.drain(false, expand(&got))
	pos, _ := w.reserve(record{Kind: kindBuffer, Size: 2}) // in flight
	w.shared(record{Kind: kindBuffer, Size: 3})
	w.fast(record{Kind: kindBuffer, Size: 1})
	c.drain(false, expand(&got))
	if want := []uint64{1}; !equal(got, want) {
		t.Fatalf("handed out %v, want %v", got, want)
	}
	atomic.StoreUint64(&c.ring[pos%ringRecords].Commit, pos+1)
	w.fast(record{Kind: kindBuffer, Size: 4})
	w.reserve(record{Kind: kindBuffer, Size: 5}) // its writer is gone
	c.drain(true, expand(&got))
	if want := []uint64{1, 2, 3, 1, 4}; !equal(got, want) || c.lost != 1 {
		t.Fatalf("handed out %v (lost %d), want %v (lost 1)", got, c.lost, want)
	}
}

// Positions the program wrote over (a fast head or a shared head near 2^64) cost a drain one ring's reading,
// not a hang, and hand out nothing that was not committed.
func TestDrainOfPositionsWrittenOver(t *testing.T) {
	c := newTestChannel(t)
	w := &writer{c: c}
	w.fast(record{Kind: kindBuffer, Size: 1})
	w.shared(record{Kind: kindBuffer, Size: 2})
	atomic.StoreUint64(&c.h.FastHead, math.MaxUint64-1)
	atomic.StoreUint64(&c.h.Head, math.MaxUint64-1)
	var got []uint64
	c.drain(true, expand(&got))
	if want := []uint64{1, 2}; !equal(got, want) || c.tail > 1+ringRecords || c.fastTail > ringRecords {
		t.Fatalf("handed out %v, tails %d and %d, want %v within one ring", got, c.tail, c.fastTail, want)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
