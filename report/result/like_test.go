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
