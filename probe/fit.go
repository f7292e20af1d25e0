package probe

// slopeFit accumulates a least-squares line y = a + b*x one point at a time (Welford's update, which stays
// exact for the large x and y the probe sees: tens of millions of buffers, hundreds of GiB), so the fit uses
// every sample without keeping them.
type slopeFit struct {
	n            float64
	meanX, meanY float64
	sxx, sxy     float64
}

func (f *slopeFit) add(x, y float64) {
	f.n++
	dx := x - f.meanX
	f.meanX += dx / f.n
	f.meanY += (y - f.meanY) / f.n
	f.sxx += dx * (x - f.meanX)
	f.sxy += dx * (y - f.meanY)
}

// slope returns b, and false when fewer than two distinct x were seen.
func (f *slopeFit) slope() (float64, bool) {
	if f.n < 2 || f.sxx == 0 {
		return 0, false
	}
	return f.sxy / f.sxx, true
}
