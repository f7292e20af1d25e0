package kernels

import "testing"

// A fill's pattern keeps its element count under 2^31 where the size allows, up to 128 bytes, and stays the
// programs' 4 bytes where that is already so.
func TestFillPatternKeepsTheElementCountUnder2To31(t *testing.T) {
	for _, c := range []struct {
		size uint64
		want int
	}{
		{1 << 20, 4},     // 2^18 elements
		{4 << 30, 4},     // 2^30
		{8 << 30, 8},     // 2^31 elements of 4 bytes: 8 bytes gives 2^30
		{16 << 30, 16},   // 2^30 elements of 16 bytes
		{139 << 30, 128}, // the H200's memory: 1.1 * 2^30 elements of 128 bytes
		{1<<20 + 2, 2},
		{3, 1},
	} {
		p := FillPattern(c.size)
		if len(p) != c.want || c.size%uint64(len(p)) != 0 {
			t.Errorf("%d bytes: a %d-byte pattern, want %d", c.size, len(p), c.want)
		}
		if c.size%128 == 0 && c.size < 128*MaxFillElements && c.size/uint64(len(p)) >= MaxFillElements {
			t.Errorf("%d bytes: %d elements", c.size, c.size/uint64(len(p)))
		}
	}
}
