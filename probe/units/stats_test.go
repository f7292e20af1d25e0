package units

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		name string
		in   float64
		want string
	}{
		{name: "whole", in: 1024, want: "1024"},
		{name: "a mean of two counts", in: 1024.5, want: "1024.5"},
		{name: "zero", in: 0, want: "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Count(c.in); got != c.want {
				t.Errorf("Count(%v) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
