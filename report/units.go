package report

import (
	"fmt"
	"math"
)

// FormatBytes writes n with a binary unit, short enough for a table cell.
func FormatBytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v := float64(n)
	u := 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f %s", v, units[u])
	}
	return fmt.Sprintf("%.2f %s", v, units[u])
}

// FormatSignedBytes formats a fitted per-buffer figure, which can be negative or fractional.
func FormatSignedBytes(v float64) string {
	if v < 0 {
		return "-" + FormatSignedBytes(-v)
	}
	if v < 1024 {
		return fmt.Sprintf("%.0f B", v)
	}
	return FormatBytes(uint64(math.Round(v)))
}
