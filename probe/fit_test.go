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

// The slope's noise is twice its standard error, computed here the textbook way (two passes over the
// points) to hold the one-pass update against; on a straight line it is 0.
func TestSlopeNoiseIsTwiceTheStandardError(t *testing.T) {
	var line slopeFit
	for i := 0; i < 50; i++ {
		line.add(float64(i), 7+3*float64(i))
	}
	if n, ok := line.noise(); !ok || n > 1e-9 {
		t.Errorf("noise %v on a straight line", n)
	}
	xs, ys := []float64{}, []float64{}
	var f slopeFit
	for i := 0; i < 40; i++ {
		x := 1e6 + float64(i)*1000 // large x, as buffer indices in a long run
		y := 5e9 + 1048576*float64(i) + float64((i*7919)%97-48)*1e5
		xs, ys = append(xs, x), append(ys, y)
		f.add(x, y)
	}
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i]/40, my+ys[i]/40
	}
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	b := sxy / sxx
	var rss float64
	for i := range xs {
		r := ys[i] - (my + b*(xs[i]-mx))
		rss += r * r
	}
	want := 2 * math.Sqrt(rss/38/sxx)
	if got, ok := f.noise(); !ok || math.Abs(got-want) > 1e-6*want {
		t.Errorf("noise %v, want %v", got, want)
	}
	var two slopeFit
	two.add(0, 0)
	two.add(1, 1)
	if _, ok := two.noise(); ok {
		t.Error("a noise from two points")
	}
}
