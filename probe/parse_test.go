package probe

import (
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want uint64
		bad  bool
	}{
		{name: "bytes", in: "4096", want: 4096},
		{name: "B unit", in: "512B", want: 512},
		{name: "KiB", in: "4KiB", want: 4 << 10},
		{name: "MiB", in: "1MiB", want: 1 << 20},
		{name: "GiB", in: "2GiB", want: 2 << 30},
		{name: "decimal MB", in: "1MB", want: 1000 * 1000},
		{name: "short M", in: "16M", want: 16 << 20},
		{name: "lower case", in: "1mib", want: 1 << 20},
		{name: "sum around a pool threshold", in: "1MiB+4KiB", want: 1<<20 + 4<<10},
		{name: "fraction that is whole", in: "1.5KiB", want: 1536},
		{name: "space before unit", in: "64 KiB", want: 64 << 10},
		{name: "no number", in: "MiB", bad: true},
		{name: "unknown unit", in: "12XB", bad: true},
		{name: "zero", in: "0", bad: true},
		{name: "negative", in: "-5MiB", bad: true},
		{name: "empty", in: "", bad: true},
		{name: "fraction of a byte", in: "0.5B", bad: true},
		{name: "not whole", in: "1.3B", bad: true},
		{name: "huge", in: "99999999TiB", bad: true},
		{name: "dangling plus", in: "1MiB+", bad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseSize(c.in)
			if c.bad {
				if err == nil {
					t.Fatalf("ParseSize(%q) = %d, want an error", c.in, got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
			}
		})
	}
}

func TestParseDeviceList(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []int
		bad  bool
	}{
		{name: "all", in: "all", want: nil},
		{name: "empty is all", in: "", want: nil},
		{name: "list", in: "1,0", want: []int{0, 1}},
		{name: "range", in: "0-3", want: []int{0, 1, 2, 3}},
		{name: "mixed", in: "4,0-1", want: []int{0, 1, 4}},
		{name: "duplicate", in: "0,0", bad: true},
		{name: "overlapping range", in: "0-2,1", bad: true},
		{name: "negative", in: "-1", bad: true},
		{name: "backwards", in: "3-1", bad: true},
		{name: "word", in: "gpu", bad: true},
		{name: "empty item", in: "0,,1", bad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseDeviceList(c.in)
			if c.bad {
				if err == nil {
					t.Fatalf("ParseDeviceList(%q) = %v, want an error", c.in, got)
				}
				return
			}
			if err != nil || len(got) != len(c.want) {
				t.Fatalf("ParseDeviceList(%q) = %v, %v; want %v", c.in, got, err, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("ParseDeviceList(%q) = %v, want %v", c.in, got, c.want)
				}
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{in: "90s", want: 90 * time.Second},
		{in: "1h30m", want: 90 * time.Minute},
		{in: "2.5", want: 2500 * time.Millisecond},
		{in: "0", bad: true},
		{in: "-1s", bad: true},
		{in: "soon", bad: true},
		{in: "NaN", bad: true},
	}
	for _, c := range cases {
		got, err := ParseDuration(c.in)
		if c.bad != (err != nil) || (!c.bad && got != c.want) {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v (error: %v)", c.in, got, err, c.want, c.bad)
		}
	}
}

func TestParseStrategiesAndTouch(t *testing.T) {
	if got, err := ParseStrategies("all"); err != nil || len(got) != len(AllStrategies) {
		t.Errorf("all: %v %v", got, err)
	}
	if got, err := ParseStrategies("per-device, shared"); err != nil || len(got) != 2 || got[0] != PerDevice || got[1] != Shared {
		t.Errorf("order must be kept: %v %v", got, err)
	}
	for _, bad := range []string{"", "bogus", "shared,shared", "shared,"} {
		if _, err := ParseStrategies(bad); err == nil {
			t.Errorf("ParseStrategies(%q) should fail", bad)
		}
	}
	if _, err := ParseTouch("FILL"); err != nil {
		t.Errorf("touch is case-insensitive: %v", err)
	}
	if _, err := ParseTouch("write"); err == nil {
		t.Errorf("unknown touch accepted")
	}
}

func TestBudget(t *testing.T) {
	p := Plan{MaxAllocs: 100000, MaxBytes: 1 << 30}
	if got := p.Budget(1 << 20); got != 1024 {
		t.Errorf("1 GiB of 1 MiB buffers: %d, want 1024", got)
	}
	if got := p.Budget(1 << 10); got != 100000 {
		t.Errorf("the smaller limit wins: %d, want 100000", got)
	}
}

// The parsers of user input must never panic, whatever they are given. Seeds live in testdata/fuzz.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1MiB", "1MiB+4KiB", "0", "-1", "1e309GiB", "+", "..", "18446744073709551615"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseSize(s); err == nil && v == 0 {
			t.Fatalf("ParseSize(%q) accepted zero", s)
		}
	})
}

func FuzzParseDeviceList(f *testing.F) {
	for _, s := range []string{"all", "0,1", "0-3", "3-1", "0-999999999", "-", ",", "1-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseDeviceList(s)
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for _, d := range got {
			if d < 0 || seen[d] {
				t.Fatalf("ParseDeviceList(%q) = %v: negative or duplicate", s, got)
			}
			seen[d] = true
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10s", "1.5", "-1", "1e400", "9999999999h", "NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseDuration(s); err == nil && d <= 0 {
			t.Fatalf("ParseDuration(%q) = %v accepted", s, d)
		}
	})
}
