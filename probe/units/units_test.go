package units

import (
	"strings"
	"testing"
)

func TestFormatSizeIsExact(t *testing.T) {
	for in, want := range map[uint64]string{
		1 << 20: "1 MiB", 1<<20 + 4<<10: "1 MiB+4 KiB", 4 << 10: "4 KiB", 1<<20 + 1: "1 MiB+1 B",
		1<<20 + 4<<10 + 1: "1 MiB+4097 B", 16 << 30: "16 GiB", 500: "500 B",
		// Decimal sizes are written as typed: --size 1MB is 10^6 bytes, not 976.56 KiB.
		1000: "1 KB", 1000 * 1000: "1 MB", 1500 * 1000: "1.5 MB", 2 * 1000 * 1000 * 1000: "2 GB", 1000*1000*1000 + 500*1000*1000 + 1000: "1.5 GB+1 KB",
		// A fraction of a unit is written as typed (--size 1.5MiB), in at most three decimals, not as a sum.
		3 << 19: "1.5 MiB", 5 << 28: "1.25 GiB", 9 << 17: "1.125 MiB", 1536: "1.5 KiB", 15 << 37: "1.875 TiB", 7 << 37: "896 GiB",
		// Past a threshold, the threshold and the step: 1 MiB+4 KiB, not 1028 KiB or 1.004 MiB.
		1<<30 + 3<<19: "1 GiB+1.5 MiB", 3<<29 + 4<<10: "1.5 GiB+4 KiB", 1<<20 + 1<<17 + 4<<10: "1 MiB+132 KiB",
		// A decimal size with one decimal is written as typed (--size 1.1MB), not as 1 MB+100 KB.
		1100 * 1000: "1.1 MB", 2300 * 1000 * 1000: "2.3 GB", 1900: "1.9 KB", 1000*1000*1000 + 1100*1000: "1 GB+1.1 MB",
	} {
		if got := Size(in); got != want {
			t.Errorf("Size(%d) = %q, want %q", in, got, want)
		}
	}
}

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
		// Read in integers, not floats: 1.1 * 10^6 in floats is not a whole number, 2^53+1 not a float.
		{name: "decimal fraction of a decimal unit", in: "1.1MB", want: 1100000},
		{name: "decimal fraction of a decimal unit, GB", in: "2.3GB", want: 2300000000},
		{name: "bytes past 2^53", in: "9007199254740993", want: 1<<53 + 1},
		{name: "three decimals of a binary unit", in: "1.125 MiB", want: 9 << 17},
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

// ParseSize must never panic, whatever it is given, and never accept zero. Seeds live in testdata/fuzz.
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

// Every size written reads back as itself, with its spaces or without: what a report shows can be typed
// again. The sizes are every form Size writes (whole and fractional units, sums, decimal units, bytes) at
// every unit and around each unit's edges, up to the largest size ParseSize takes.
func TestSizeReadsBack(t *testing.T) {
	ns := []uint64{1, 500, 1000, 1024, 4097, 1 << 20, 1<<20 + 4<<10, 1<<20 + 4097, 1e6, 1500000, 1000001, 3<<40 + 7, 123456789,
		1<<53 + 1, 1<<62 + 12345, 1<<63 - 1}
	for _, u := range append(append([]unit{}, binaryUnits...), decimalUnits...) {
		for k := uint64(1); k <= 64; k++ {
			for _, d := range []uint64{0, 1, 7, 1000, 1 << 12} {
				ns = append(ns, k*u.v/8+d, k*u.v/8-1, 1000*u.v+k*u.v/8+d)
			}
			if u.v%10 == 0 { // the tenths of a decimal unit
				ns = append(ns, k*u.v/10, k*u.v/10+1, u.v+k*u.v/10, 1000*u.v+k*u.v/10)
			}
		}
	}
	for _, n := range ns {
		if n == 0 || n >= 1<<63 {
			continue
		}
		readsBack(t, n)
	}
}

// readsBack fails t unless Size(n) parses, as written and without spaces, as n.
func readsBack(t *testing.T, n uint64) {
	t.Helper()
	s := Size(n)
	for _, typed := range []string{s, strings.ReplaceAll(s, " ", "")} {
		if got, err := ParseSize(typed); err != nil || got != n {
			t.Errorf("Size(%d) = %q: %q reads back as %d, %v", n, s, typed, got, err)
		}
	}
}

// Size writes every size ParseSize takes (1 up to 2^63) in a form that reads back as itself.
func FuzzSizeReadsBack(f *testing.F) {
	for _, n := range []uint64{1, 1536, 3 << 19, 1<<20 + 4<<10, 1500000, 1<<53 + 1, 1<<63 - 1} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n uint64) {
		if n == 0 || n >= 1<<63 {
			return
		}
		readsBack(t, n)
	})
}

// Counted writes a count with its noun, singular for exactly one.
func TestCounted(t *testing.T) {
	for _, c := range []struct {
		name string
		n    uint64
		want string
	}{{"none", 0, "0 contexts"}, {"one", 1, "1 context"}, {"many", 142627, "142627 contexts"}} {
		if got := Counted(c.n, "context"); got != c.want {
			t.Errorf("%s: Counted(%d) = %q, want %q", c.name, c.n, got, c.want)
		}
	}
}

// From 1000 of a unit up, Bytes says the next unit: no figure is written with four digits before its point.
func TestBytesNeverFourDigitsOfAUnit(t *testing.T) {
	for _, base := range []uint64{1 << 10, 1 << 20, 1 << 30} {
		for n := 999 * base; n < 1025*base; n += base / 7 {
			s := Bytes(n)
			num := strings.Fields(s)[0]
			if whole, _, _ := strings.Cut(num, "."); len(whole) > 3 {
				t.Errorf("Bytes(%d) = %q", n, s)
			}
		}
	}
}
