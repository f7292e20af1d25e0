package probe

import "testing"

// BenchmarkFitAdd is one point added to the least-squares fit (the parent does it per sample and device).
func BenchmarkFitAdd(b *testing.B) {
	var f slopeFit
	for i := 0; i < b.N; i++ {
		f.add(float64(i), float64(i)*1048576+4096)
	}
	if _, ok := f.slope(); !ok && b.N > 1 {
		b.Fatal("no slope")
	}
}
