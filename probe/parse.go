package probe

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"time"
)

var sizeUnits = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1000,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1000 * 1000,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1000 * 1000 * 1000,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1000 * 1000 * 1000 * 1000,
}

// ParseSize reads a byte size: a number with an optional unit (B, KiB, MiB, GiB, TiB are powers of 1024;
// KB, MB, GB, TB powers of 1000; K, M, G, T are read as KiB, MiB, GiB, TiB), and sums of such terms joined
// by '+' so sizes around pool thresholds can be written as "1MiB+4KiB". Zero and negative sizes are errors.
func ParseSize(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty size: give a number with a unit, for example 1MiB")
	}
	var total uint64
	for _, term := range strings.Split(s, "+") {
		v, err := parseSizeTerm(strings.TrimSpace(term))
		if err != nil {
			return 0, fmt.Errorf("size %q: %w", s, err)
		}
		sum, carry := bits.Add64(total, v, 0)
		if carry != 0 {
			return 0, fmt.Errorf("size %q is too large", s)
		}
		total = sum
	}
	return total, nil
}

func parseSizeTerm(t string) (uint64, error) {
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	if num == "" {
		if strings.HasPrefix(t, "-") {
			return 0, fmt.Errorf("must be positive")
		}
		return 0, fmt.Errorf("no number (units: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)")
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q (units: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)", t[i:])
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("bad number %q", num)
	}
	v := f * float64(mult)
	if v >= math.MaxUint64/2 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("too large")
	}
	if v < 1 {
		return 0, fmt.Errorf("must be at least 1 byte")
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("%s is not a whole number of bytes", t)
	}
	return uint64(v), nil
}

// ParseSizes reads a comma-separated list of sizes (for a sweep).
func ParseSizes(s string) ([]uint64, error) {
	var out []uint64
	for _, part := range strings.Split(s, ",") {
		v, err := ParseSize(part)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// ParseDeviceList reads "all" (returned as nil) or comma-separated device indices and ranges ("0,1", "0-3").
// Duplicates and negative numbers are errors; the result is sorted.
func ParseDeviceList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "all") {
		return nil, nil
	}
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, err := parseRange(part)
		if err != nil {
			return nil, fmt.Errorf("device list %q: %w", s, err)
		}
		for i := lo; i <= hi; i++ {
			if seen[i] {
				return nil, fmt.Errorf("device list %q: device %d is listed twice", s, i)
			}
			seen[i] = true
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out, nil
}

func parseRange(part string) (int, int, error) {
	a, b, isRange := strings.Cut(part, "-")
	lo, err := parseIndex(a)
	if err != nil {
		return 0, 0, err
	}
	if !isRange {
		return lo, lo, nil
	}
	hi, err := parseIndex(b)
	if err != nil {
		return 0, 0, err
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("range %q runs backwards", part)
	}
	if hi-lo > 4096 {
		return 0, 0, fmt.Errorf("range %q is too long", part)
	}
	return lo, hi, nil
}

func parseIndex(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty device index (use numbers such as 0,1 or all)")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("%q is not a device index (use numbers such as 0,1 or all)", s)
	}
	return n, nil
}

// ParseDuration reads a Go duration ("90s", "5m") or a plain number of seconds; it must be positive.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f <= 0 || f > 1e9 || math.IsNaN(f) {
			return 0, fmt.Errorf("duration %q must be a positive number of seconds", s)
		}
		if d := time.Duration(f * float64(time.Second)); d > 0 {
			return d, nil
		}
		return 0, fmt.Errorf("duration %q is shorter than a nanosecond", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q does not parse (examples: 90s, 5m, 1h30m)", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("duration %q must be positive", s)
	}
	return d, nil
}

// ParsePercent reads a percentage such as "10%" (the % is optional) and returns it as a fraction.
func ParsePercent(s string) (float64, error) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1000 || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is not a percentage (example: 10%%)", s)
	}
	return f / 100, nil
}
