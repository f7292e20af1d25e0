package result

import (
	"slices"
	"testing"
)

// LikeOf takes the program's sizes and flag sets most created first, counts only creates (not sub-buffers,
// releases or contexts), reads flags without an access bit as read-write, and keeps the failing context's
// live bytes.
func TestLikeOf(t *testing.T) {
	tr := &Trace{Program: "app", Allocations: 42, Sequence: []TraceStep{
		{Call: "clCreateContext", Context: 0, Devices: 2, Count: 1},
		{Call: "clCreateBuffer", Context: 0, Size: 4096, Flags: 0, Count: 5},
		{Call: "clCreateBuffer", Context: 0, Size: 1 << 20, Flags: uint64(MemReadWrite), Count: 20},
		{Call: "clCreateSubBuffer", Context: 0, Size: 512, Count: 100},
		{Call: "clReleaseMemObject", Context: 0, Size: 1 << 20, Count: 100},
		{Call: "clCreateBufferWithProperties", Context: 0, Size: 4096, Flags: uint64(MemReadOnly | MemUseHostPtr), Count: 7},
		{Call: "clCreateBuffer", Context: 0, Size: 64, Count: 1},
	}, FirstFailure: &TraceFailure{Index: 33, CodeName: "CL_OUT_OF_RESOURCES", Context: 0, Devices: []int{0, 1},
		Live: []TraceLive{{Context: 1, Bytes: 7}, {Context: 0, Bytes: 20 << 20}}}}
	l := LikeOf(tr, 2)
	if want := []uint64{1 << 20, 4096}; !slices.Equal(l.Sizes, want) {
		t.Errorf("sizes %v, want %v (20 of 1 MiB, 12 of 4 KiB; 64 B dropped past 2)", l.Sizes, want)
	}
	if want := []string{"read-write", "read-only+use-host-ptr"}; !slices.Equal(l.Flags, want) {
		t.Errorf("flags %v, want %v (25 read-write, flags 0 among them)", l.Flags, want)
	}
	if !l.Failed || l.FailureIndex != 33 || l.ContextDevices != 2 || l.LiveBytes != 20<<20 || l.Allocations != 42 {
		t.Errorf("like %+v: want the failure at #33 on 2 devices with 20 MiB live in its context", l)
	}
}

// A program that did not fail is run like on as many devices as its largest context had, not on every
// device of the platform: one context over one device gives 1; over 1 and another over 3 gives 3.
func TestLikeOfWithoutFailureTakesTheLargestContext(t *testing.T) {
	for _, tc := range []struct {
		name     string
		contexts []int
		want     int
	}{{"one context over one device", []int{1}, 1}, {"one over 1, one over 3", []int{1, 3}, 3}, {"no context", nil, 0}} {
		tr := &Trace{Program: "app", Sequence: []TraceStep{{Call: "clCreateBuffer", Size: 4096, Count: 3}}}
		for i, n := range tc.contexts {
			tr.Contexts = append(tr.Contexts, TraceContext{Index: i, DeviceCount: n})
		}
		if l := LikeOf(tr, 4); l.Failed || l.ContextDevices != tc.want {
			t.Errorf("%s: like %+v, want %d devices and no failure", tc.name, l, tc.want)
		}
	}
}

// A program ended by a signal or the timeout without a failed call carries how it ended into the run like
// it; one that exited by itself, failed a call, or was interrupted by the user does not.
func TestLikeOfCarriesHowAKilledProgramEnded(t *testing.T) {
	killed := TraceExit{Signal: "SIGKILL", Description: "was killed by SIGKILL"}
	for _, c := range []struct {
		name string
		tr   Trace
		want string
	}{
		{"killed", Trace{Exit: killed}, killed.Description},
		{"interrupted", Trace{Exit: TraceExit{Signal: "SIGINT", Interrupted: true, Description: "was killed by SIGINT"}}, ""},
		{"a call failed first", Trace{Exit: killed, FirstFailure: &TraceFailure{Index: 3, CodeName: "CL_OUT_OF_HOST_MEMORY"}}, ""},
		{"exited", Trace{Exit: TraceExit{Description: "exited with status 0"}}, ""},
	} {
		if got := LikeOf(&c.tr, 3).Ended; got != c.want {
			t.Errorf("%s: Ended %q, want %q", c.name, got, c.want)
		}
	}
}
