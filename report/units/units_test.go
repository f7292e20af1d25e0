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
		1000: "1 KB", 1000 * 1000: "1 MB", 1500 * 1000: "1 MB+500 KB", 2 * 1000 * 1000 * 1000: "2 GB",
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

// Every size written reads back as itself: what a report shows can be typed again.
func TestSizeReadsBack(t *testing.T) {
	for _, n := range []uint64{1, 500, 1000, 1024, 4097, 1 << 20, 1<<20 + 4<<10, 1<<20 + 4097, 1e6, 1500000, 1000001, 3<<40 + 7, 123456789} {
		s := Size(n)
		got, err := ParseSize(strings.ReplaceAll(s, " ", ""))
		if err != nil || got != n {
			t.Errorf("Size(%d) = %q reads back as %d, %v", n, s, got, err)
		}
	}
}
