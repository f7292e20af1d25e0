package footprint

import (
	"math"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	const gib = uint64(1 << 30)
	none := uint64(math.MaxUint64)
	for _, c := range []struct {
		name               string
		as, mapped, cgroup uint64
		want               int64
	}{
		{"no limit at all", none, gib, 0, 0},
		{"half the room under ulimit -v", 3 * gib, gib, 0, int64(gib)},
		{"a quarter of the cgroup", none, gib, 4 * gib, int64(gib)},
		{"the tighter of the two", 3 * gib, gib, 2 * gib, int64(gib / 2)},
		{"never below the least", 2 * gib, 2*gib - 1, 0, leastMemoryLimit},
		{"mapped past the limit leaves the cgroup's", 2 * gib, 3 * gib, 8 * gib, int64(2 * gib)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := memoryLimit(c.as, c.mapped, c.cgroup); got != c.want {
				t.Errorf("memoryLimit(%d, %d, %d) = %d, want %d", c.as, c.mapped, c.cgroup, got, c.want)
			}
		})
	}
}

func TestVMSize(t *testing.T) {
	status := "Name:\tclmemprobe\nVmPeak:\t 1938020 kB\nVmSize:\t 1723524 kB\nVmRSS:\t 30000 kB\n"
	if got, want := vmSize([]byte(status)), uint64(1723524)<<10; got != want {
		t.Errorf("vmSize = %d, want %d (VmSize, not VmPeak)", got, want)
	}
	if got := vmSize([]byte("Name:\tx\n")); got != 0 {
		t.Errorf("vmSize without the field = %d, want 0", got)
	}
}
