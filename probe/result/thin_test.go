package result

import "testing"

func TestThin(t *testing.T) {
	series := func(n int) []Sample {
		s := make([]Sample, n)
		for i := range s {
			s[i] = Sample{Index: uint64(100 + 3*i), Seconds: float64(i) / 4}
		}
		return s
	}
	tests := []struct {
		name   string
		length int
		n      int
	}{
		{"many into a few", 1000, 10},
		{"one more than kept", 11, 10},
		{"two", 57, 2},
		{"2n-1 into n", 1999, 1000},
		{"from 2n", 2000, 1000},
		{"prime lengths", 997, 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := series(tt.length)
			got := Thin(s, tt.n)
			if len(got) != tt.n {
				t.Fatalf("kept %d of %d, want %d", len(got), tt.length, tt.n)
			}
			if got[0].Index != s[0].Index || got[len(got)-1].Index != s[len(s)-1].Index {
				t.Errorf("ends %d..%d, want %d..%d", got[0].Index, got[len(got)-1].Index, s[0].Index, s[len(s)-1].Index)
			}
			// Evenly spread: the gaps between kept positions differ by at most one, and every kept sample comes
			// after the one before it (the order is kept, none twice).
			lo, hi := tt.length, 0
			for i := 1; i < len(got); i++ {
				gap := int(got[i].Index-got[i-1].Index) / 3
				if got[i].Index <= got[i-1].Index {
					t.Fatalf("sample %d (index %d) does not come after %d", i, got[i].Index, got[i-1].Index)
				}
				lo, hi = min(lo, gap), max(hi, gap)
			}
			if hi-lo > 1 {
				t.Errorf("gaps from %d to %d samples, not evenly spread", lo, hi)
			}
			for i, smp := range series(tt.length) {
				if s[i].Index != smp.Index {
					t.Fatalf("the input changed at %d: index %d, was %d", i, s[i].Index, smp.Index)
				}
			}
		})
	}
	t.Run("exactly every other from 2n-1", func(t *testing.T) {
		const n = 7
		s := series(2*n - 1)
		for i, smp := range Thin(s, n) {
			if smp.Index != s[2*i].Index {
				t.Errorf("kept %d is index %d, want %d", i, smp.Index, s[2*i].Index)
			}
		}
	})
	t.Run("nothing to thin", func(t *testing.T) {
		s := series(5)
		for _, n := range []int{5, 9, 1, 0, -3} {
			if got := Thin(s, n); len(got) != len(s) || &got[0] != &s[0] {
				t.Errorf("n %d: got %d samples, want s itself (%d)", n, len(got), len(s))
			}
		}
		if got := Thin([]TraceSample(nil), 4); got != nil {
			t.Errorf("nil thinned to %v", got)
		}
	})
}
