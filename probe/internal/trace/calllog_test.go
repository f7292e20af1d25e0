package trace

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

func TestCallLogKeepsTheCallsAroundTheFirstFailure(t *testing.T) {
	var l callLog
	n := CallsHead + CallsBefore + 1000 // the failure comes after 1000 records more than the log keeps before it
	for i := range n {
		l.add(result.TraceCall{Index: uint64(i)}, false)
	}
	l.add(result.TraceCall{Index: uint64(n), Code: -6}, true)
	for i := range CallsAfter + 7 {
		l.add(result.TraceCall{Index: uint64(n + 1 + i)}, i == 0) // a later failure is not the first
	}
	got := l.list()
	if len(got) != CallsHead+1+CallsBefore+CallsAfter+1 {
		t.Fatalf("%d entries", len(got))
	}
	if gap := got[CallsHead]; gap.Skipped != 1001 {
		t.Errorf("gap before the failure skips %d records, want 1001", gap.Skipped)
	}
	// The ring ends with the failure: its last CallsBefore records, in order.
	before := got[CallsHead+1 : CallsHead+1+CallsBefore]
	for i, c := range before {
		if want := uint64(n - CallsBefore + 1 + i); c.Index != want {
			t.Fatalf("before[%d] is #%d, want #%d", i, c.Index, want)
		}
	}
	if last := before[len(before)-1]; !last.Failure || last.Code != -6 {
		t.Errorf("the last record before the gap is %+v, want the failure", last)
	}
	if tail := got[len(got)-1]; tail.Skipped != 7 {
		t.Errorf("the tail skips %d, want 7", tail.Skipped)
	}
	failures := 0
	for _, c := range got {
		if c.Failure {
			failures++
		}
	}
	if failures != 1 {
		t.Errorf("%d entries marked as the failure", failures)
	}
}

func TestCallLogOfAShortProgramIsWhole(t *testing.T) {
	var l callLog
	for i := range 10 {
		l.add(result.TraceCall{Index: uint64(i)}, false)
	}
	if got := l.list(); len(got) != 10 || got[9].Index != 9 {
		t.Errorf("log = %+v", got)
	}
}
