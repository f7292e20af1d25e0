// Package units writes and reads the quantities clmemprobe reports: byte counts, buffer sizes, durations.
package units

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Bytes writes n with a binary unit, short enough for a table cell. From 1000 of a unit up it takes the
// next ("0.99 MiB", not "1017.53 KiB": four digits before the point read as a larger number than they are).
func Bytes(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v := float64(n)
	u := 0
	for (v >= 1024 || (u > 0 && v >= 999.995)) && u < len(units)-1 {
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

// SignedBytes formats a fitted per-buffer figure, which can be negative or fractional.
func SignedBytes(v float64) string {
	if v <= -0.5 {
		return "-" + SignedBytes(-v)
	}
	if v < 1024 {
		if v < 0.5 {
			return "0 B" // not "-0 B" for a slope a hair below zero
		}
		return fmt.Sprintf("%.0f B", v)
	}
	return Bytes(uint64(math.Round(v)))
}

// Size writes a buffer size exactly, in a form a user would type and that ParseSize reads back: "1.5 MiB",
// "1 MiB+4 KiB", "1 MB", "1000 B". Sizes near pool thresholds differ by a few KiB, so a rounded figure would
// hide the difference. The first of these forms that is exact is written:
//   - one binary unit, the largest not above the size, with at most three decimals (the eighths of a unit:
//     1.5 MiB, 1.25 GiB, 1.125 MiB), as sizes are typed;
//   - a whole number of that unit and a remainder in one unit of its own, again with at most three decimals
//     (1 MiB+4 KiB, 1 GiB+1.5 MiB): how a size just past a threshold is typed, the threshold first, rather
//     than 1028 KiB;
//   - the same with the eighths of the first unit (1.5 GiB+4 KiB);
//   - the same three in decimal units (1 MB, 1.5 MB, 1 GB+500 MB), for a size that is only exact in those
//     and so was most likely typed in them; a decimal unit also takes one decimal (1.1 MB, 2.3 GB), as a
//     decimal size is typed, where the eighths would give 1 MB+100 KB;
//   - a whole binary unit and bytes (1 MiB+4097 B), else bytes (500 B).
func Size(n uint64) string {
	for _, units := range [][]unit{binaryUnits, decimalUnits} {
		if s, ok := exactTerm(n, units); ok {
			return s
		}
		if u, ok := largest(n, units); ok {
			whole := n / u.v * u.v
			if s, ok := exactTerm(n-whole, units); ok {
				return fmt.Sprintf("%d %s+%s", n/u.v, u.name, s)
			}
			eighths := n / (u.v / 8) * (u.v / 8)
			if s, ok := exactTerm(n-eighths, units); ok && eighths > whole {
				head, _ := exactTerm(eighths, units)
				return head + "+" + s
			}
		}
	}
	if u, ok := largest(n, binaryUnits); ok {
		return fmt.Sprintf("%d %s+%d B", n/u.v, u.name, n%u.v)
	}
	return fmt.Sprintf("%d B", n)
}

// SizeArg is Size as a command-line argument, without spaces ("1MiB", "1MiB+4KiB"): ParseSize reads it
// back as n.
func SizeArg(n uint64) string { return strings.ReplaceAll(Size(n), " ", "") }

type unit struct {
	v    uint64
	name string
}

// The units Size writes in, the largest first. Each is a multiple of 8, so its eighths are whole bytes.
var (
	binaryUnits  = []unit{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}}
	decimalUnits = []unit{{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}}
)

// largest is the largest of units not above n.
func largest(n uint64, units []unit) (unit, bool) {
	for _, u := range units {
		if n >= u.v {
			return u, true
		}
	}
	return unit{}, false
}

// exactTerm writes n as one term of the largest of units not above it, with at most three decimals (a whole
// number of eighths of the unit: 1/8 is 0.125) or, in a decimal unit, one (a whole number of tenths), or
// says it cannot.
func exactTerm(n uint64, units []unit) (string, bool) {
	u, ok := largest(n, units)
	if ok && u.v%10 == 0 && n%(u.v/8) != 0 && n%(u.v/10) == 0 {
		return fmt.Sprintf("%d.%d %s", n/u.v, n%u.v/(u.v/10), u.name), true
	}
	if !ok || n%(u.v/8) != 0 {
		return "", false
	}
	whole, eighths := n/u.v, n%u.v/(u.v/8)
	if eighths == 0 {
		return fmt.Sprintf("%d %s", whole, u.name), true
	}
	return fmt.Sprintf("%d.%s %s", whole, strings.TrimRight(fmt.Sprintf("%03d", eighths*125), "0"), u.name), true
}

// Nanos writes a duration given in nanoseconds with a unit that keeps three significant digits.
func Nanos(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3g s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// sizeUnits are the units a size may be typed in, in lower case. Ki, Mi, Gi and Ti are kubectl's spelling of
// the binary units, which cluster owners type out of habit.
var sizeUnits = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "ki": 1 << 10, "kib": 1 << 10, "kb": 1000,
	"m": 1 << 20, "mi": 1 << 20, "mib": 1 << 20, "mb": 1000 * 1000,
	"g": 1 << 30, "gi": 1 << 30, "gib": 1 << 30, "gb": 1000 * 1000 * 1000,
	"t": 1 << 40, "ti": 1 << 40, "tib": 1 << 40, "tb": 1000 * 1000 * 1000 * 1000,
}

// UnitList is every unit ParseSize takes, written out from sizeUnits itself so that an error lists exactly
// what the parser accepts: "B; K, Ki, KiB (powers of 1024: 1K is 1 KiB), M, ...; KB, MB, GB, TB (powers of
// 1000)".
func UnitList() string {
	var binary, decimal []string
	keys := slices.SortedFunc(maps.Keys(sizeUnits), func(a, b string) int {
		return cmp.Or(cmp.Compare(sizeUnits[a], sizeUnits[b]), cmp.Compare(len(a), len(b)))
	})
	for _, k := range keys {
		switch m := sizeUnits[k]; {
		case k == "":
		case m == 1:
			binary = append([]string{unitText(k)}, binary...)
		case m&(m-1) == 0:
			binary = append(binary, unitText(k))
		default:
			decimal = append(decimal, unitText(k))
		}
	}
	// The byte first, then the binary units by size, each as K, Ki, KiB.
	return fmt.Sprintf("%s; %s (powers of 1024: 1K is 1 KiB); %s (powers of 1000)", binary[0], strings.Join(binary[1:], ", "), strings.Join(decimal, ", "))
}

// unitText writes a unit of sizeUnits as it is usually typed: "kib" as KiB, "k" as K, "kb" as KB.
func unitText(k string) string {
	return strings.ToUpper(k[:1]) + strings.ReplaceAll(k[1:], "b", "B")
}

// binaryOf is the binary unit a decimal one is most likely a slip for.
var binaryOf = map[string]string{"kb": "KiB", "mb": "MiB", "gb": "GiB", "tb": "TiB"}

// BinaryReading returns s with each decimal unit (KB, MB, GB, TB) written as its binary one ("1mb" ->
// "1MiB"), and whether s had one. Buffer sizes in OpenCL work are almost always meant in powers of 1024,
// so a command says once what a decimal size is; it does not refuse it. s should already parse.
func BinaryReading(s string) (string, bool) {
	terms := strings.Split(strings.TrimSpace(s), "+")
	decimal := false
	for i, term := range terms {
		term = strings.TrimSpace(term)
		j := strings.IndexFunc(term, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if j < 0 {
			terms[i] = term
			continue
		}
		num, unit := term[:j], strings.ToLower(strings.TrimSpace(term[j:]))
		if b, ok := binaryOf[unit]; ok {
			decimal = true
			terms[i] = num + b
		} else {
			terms[i] = num + strings.TrimSpace(term[j:])
		}
	}
	return strings.Join(terms, "+"), decimal
}

// Grouped writes n with a comma between groups of three digits, as the notes on stderr spell byte counts.
func Grouped(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ParseSize reads a byte size: a number with an optional unit (B, KiB, MiB, GiB, TiB are powers of 1024;
// KB, MB, GB, TB powers of 1000; K, M, G, T and Ki, Mi, Gi, Ti are read as KiB, MiB, GiB, TiB), and sums of such terms joined
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
		return 0, fmt.Errorf("no number (units: %s)", UnitList())
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q (units: %s)", t[i:], UnitList())
	}
	v, whole, err := scaled(num, mult)
	switch {
	case err != nil:
		return 0, err
	case v >= math.MaxUint64/2:
		return 0, fmt.Errorf("too large")
	case v == 0:
		return 0, fmt.Errorf("must be at least 1 byte")
	case !whole:
		return 0, fmt.Errorf("%s is not a whole number of bytes", t)
	}
	return v, nil
}

// scaled is the number num (digits with at most one decimal point) times mult, in whole bytes, and whether
// that is exact. It is worked out in integers, not floats, so that every size Size writes reads back as
// itself however large: a float64 holds whole numbers exactly only up to 2^53.
func scaled(num string, mult uint64) (v uint64, whole bool, err error) {
	intPart, frac, _ := strings.Cut(num, ".")
	frac = strings.TrimRight(frac, "0")
	if intPart == "" && frac == "" || strings.Contains(frac, ".") {
		return 0, false, fmt.Errorf("bad number %q", num)
	}
	var i uint64
	if intPart != "" {
		if i, err = strconv.ParseUint(intPart, 10, 64); err != nil {
			return 0, false, fmt.Errorf("too large")
		}
	}
	hi, v := bits.Mul64(i, mult)
	if hi != 0 {
		return 0, false, fmt.Errorf("too large")
	}
	if frac == "" {
		return v, true, nil
	}
	if len(frac) > 19 {
		// More decimals than a uint64 holds: no unit's fraction typed as a size needs them.
		return 0, false, fmt.Errorf("%s has too many decimals", num)
	}
	f, _ := strconv.ParseUint(frac, 10, 64) // digits only, fewer than 20: it parses
	pow := uint64(1)
	for range len(frac) {
		pow *= 10
	}
	// f < pow, so f*mult/pow < mult: the quotient fits, and Div64's high word is below pow.
	fh, fl := bits.Mul64(f, mult)
	q, r := bits.Div64(fh, fl, pow)
	sum, carry := bits.Add64(v, q, 0)
	if carry != 0 {
		return 0, false, fmt.Errorf("too large")
	}
	return sum, r == 0, nil
}

// Counted writes n and its noun, plural unless n is 1: "1 buffer", "2 platforms".
func Counted(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
