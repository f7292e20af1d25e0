package kernels

import "testing"

func TestFillPatternDividesTheSize(t *testing.T) {
	for _, size := range []uint64{1, 2, 3, 4, 6, 1 << 20, 1<<20 + 4096, 4097} {
		if p := FillPattern(size); size%uint64(len(p)) != 0 || len(p) == 0 {
			t.Errorf("size %d: pattern of %d bytes does not divide it", size, len(p))
		}
	}
}
