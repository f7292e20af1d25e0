package probe

import "math"

// slopeFit accumulates a least-squares line y = a + b*x one point at a time (Welford's update, which stays
// exact for the large x and y the probe sees: tens of millions of buffers, hundreds of GiB), so the fit uses
// every sample without keeping them.
type slopeFit struct {
	n            float64
	meanX, meanY float64
	sxx, sxy     float64
	syy          float64
}

func (f *slopeFit) add(x, y float64) {
	f.n++
	dx := x - f.meanX
	oldMeanY := f.meanY
	f.meanX += dx / f.n
	f.meanY += (y - f.meanY) / f.n
	f.sxx += dx * (x - f.meanX)
	f.sxy += dx * (y - f.meanY)
	f.syy += (y - oldMeanY) * (y - f.meanY)
}

// slope returns b, and false when fewer than two distinct x were seen.
func (f *slopeFit) slope() (float64, bool) {
	if f.n < 2 || f.sxx == 0 {
		return 0, false
	}
	return f.sxy / f.sxx, true
}

// noise returns twice the slope's standard error (about a 95% interval's half-width): how far the
// scatter of the readings around the line lets the slope move. A machine-wide reading (available or
// committed memory) scatters with everything else the machine does, and a slope inside its noise is not a
// cost. False with fewer than three points.
func (f *slopeFit) noise() (float64, bool) {
	b, ok := f.slope()
	if !ok || f.n < 3 {
		return 0, false
	}
	resid := max(0, f.syy-b*f.sxy)
	return 2 * math.Sqrt(resid/(f.n-2)/f.sxx), true
}
