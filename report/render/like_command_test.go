package render

import (
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// A run --like TRACE is repeated by the flags the trace stood for: the trace is the user's file, which a
// ticket's reader does not have (a bundle's "run again" step failed with "open s1/trace1: no such file").
func TestTheReproduceLineWritesOutRunLike(t *testing.T) {
	one := &result.Like{Sizes: []uint64{1 << 20}, Flags: []string{"read-write"}, ContextDevices: 2}
	mix := &result.Like{Sizes: []uint64{256 << 10, 4 << 20}, Flags: []string{"read-write", "alloc-host-ptr"}, ContextDevices: 1}
	for _, c := range []struct {
		argv []string
		like *result.Like
		want string
	}{
		{[]string{"/x/bin/clmemprobe", "run", "--like", "s1/trace1", "--touch", "fill", "--out", "d"}, one, "bin/clmemprobe run --size " + units.SizeArg(1<<20) + " --touch fill --devices 0-1"},
		{[]string{"clmemprobe", "run", "--like=t.json", "--devices", "1"}, one, "clmemprobe run --size 1MiB --devices 1"},
		{[]string{"clmemprobe", "run", "-like", "t.json"}, mix, "clmemprobe run --sizes 256KiB,4MiB --flag-sets 'read-write;alloc-host-ptr' --devices 0-0"},
		{[]string{"clmemprobe", "run", "--touch", "fill"}, nil, "clmemprobe run --touch fill"},
	} {
		got := ReproduceCommand(&result.Run{Command: c.argv, Config: result.Config{Like: c.like}})
		if got != c.want || strings.Contains(got, "like") {
			t.Errorf("%q: %q, want %q", c.argv, got, c.want)
		}
	}
}
