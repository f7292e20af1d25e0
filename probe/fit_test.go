package probe

import (
	"math"
	"testing"
)

func TestSlopeFitIsExactOnALine(t *testing.T) {
	// RSS of a process that costs exactly 1 MiB + 64 B per buffer from a 200 MiB base, over 30 million
	// buffers: the magnitudes the probe meets on a large device.
	const base, per = 200 << 20, 1<<20 + 64
	var f slopeFit
	for i := 0; i <= 30_000_000; i += 9973 {
		f.add(float64(i), base+per*float64(i))
	}
	got, ok := f.slope()
	if !ok || math.Abs(got-per) > 1e-6*per {
		t.Fatalf("slope %v (%v), want %v", got, ok, per)
	}
}

func TestSlopeFitNeedsTwoPoints(t *testing.T) {
	var f slopeFit
	if _, ok := f.slope(); ok {
		t.Fatal("no points, yet a slope")
	}
	f.add(5, 10)
	f.add(5, 20)
	if _, ok := f.slope(); ok {
		t.Fatal("one distinct x, yet a slope")
	}
}
