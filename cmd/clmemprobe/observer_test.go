package main

import (
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The live line counts buffers of the budget with the share done and, once the rate is known, the time
// left at that rate.
func TestProgressLine(t *testing.T) {
	p := probe.Progress{Job: probe.Job{Strategy: result.Shared, Size: 1 << 20, Budget: 1000}, Allocations: 250, RSSBytes: 300 << 20,
		Elapsed: 2 * time.Second}
	want := "shared        250/1000 buffers (25.0%)  250 MiB  host RSS 300 MiB  2.0s, about 6s left"
	if got := progressLine(p); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
