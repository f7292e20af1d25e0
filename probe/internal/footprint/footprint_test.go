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
