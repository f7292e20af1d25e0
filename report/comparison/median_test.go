package comparison

import (
	"slices"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []float64
		want float64
	}{
		{name: "none", in: nil, want: 0},
		{name: "one", in: []float64{7}, want: 7},
		{name: "odd count, unsorted", in: []float64{5, 1, 3}, want: 3},
		{name: "even count: the mean of the middle two", in: []float64{4, 1, 3, 2}, want: 2.5},
		{name: "negative costs", in: []float64{-10, 20}, want: 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := slices.Clone(c.in)
			if got := Median(in); got != c.want {
				t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
			}
			if !slices.Equal(in, c.in) {
				t.Errorf("Median sorted its argument: %v", in)
			}
		})
	}
}
