package units

import "testing"

// kubectl's binary suffixes (Ki, Mi, Gi, Ti) are powers of 1024, as KiB and the short K are.
func TestParseSizeKubernetesSuffixes(t *testing.T) {
	for in, want := range map[string]uint64{"1Ki": 1 << 10, "1Mi": 1 << 20, "2Gi": 2 << 30, "1Ti": 1 << 40, "1Mi+4Ki": 1<<20 + 4<<10, "64mi": 64 << 20} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

// DecimalTerms finds the decimal units in what was typed and says the binary size it was likely meant as.
func TestBinaryReading(t *testing.T) {
	for in, want := range map[string]string{"1mb": "1MiB", "2GB": "2GiB", "1MiB+4KB": "1MiB+4KiB", " 3 tb ": "3TiB", "5kb": "5KiB"} {
		if got, ok := BinaryReading(in); !ok || got != want {
			t.Errorf("BinaryReading(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"1MiB", "1M", "1Mi", "4096", "512B", "1MiB+4KiB"} {
		if got, ok := BinaryReading(in); ok {
			t.Errorf("BinaryReading(%q) = %q: it has no decimal unit", in, got)
		}
	}
}

func TestGrouped(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1048576: "1,048,576", 1000000000: "1,000,000,000"} {
		if got := Grouped(n); got != want {
			t.Errorf("Grouped(%d) = %q, want %q", n, got, want)
		}
	}
}

// A size written as an argument is read back as itself, whatever its shape: whole units, eighths, decimal
// units, sums and plain bytes.
func TestSizeArgReadsBack(t *testing.T) {
	for _, n := range []uint64{1, 500, 4096, 1 << 20, 1<<20 + 4096, 1<<20 + 4097, 3 << 29, 1e6, 1.1e6, 2.3e9, 1<<30 + 500e6, 1 << 40, 123456789} {
		arg := SizeArg(n)
		got, err := ParseSize(arg)
		if err != nil || got != n {
			t.Errorf("SizeArg(%d) = %q, read back as %d (%v)", n, arg, got, err)
		}
	}
}
