package units

import (
	"fmt"
	"math"
)

// Count writes a count, or a median of counts: whole where it is whole, else with one decimal (the mean
// of two middle counts).
func Count(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
