package main

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

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
	in := s
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsNaN(f):
		return 0, fmt.Errorf("%q is not a percentage (example: 10%%)", in)
	case f < 0:
		return 0, fmt.Errorf("%q: a tolerance cannot be negative (example: 10%%)", in)
	case f > 1000:
		return 0, fmt.Errorf("%q: at most 1000%% (example: 10%%)", in)
	}
	return f / 100, nil
}

// ParseStrategies reads a comma-separated list of strategies ("all" for every one).
func ParseStrategies(s string) ([]result.Strategy, error) {
	if strings.EqualFold(strings.TrimSpace(s), "all") {
		return result.Strategies, nil
	}
	seen := map[result.Strategy]bool{}
	var out []result.Strategy
	for _, part := range strings.Split(s, ",") {
		st := result.Strategy(strings.TrimSpace(strings.ToLower(part)))
		if !slices.Contains(result.Strategies, st) {
			return nil, fmt.Errorf("unknown strategy %q%s (choose from %s, or all)", part, suggestion(string(st), append(toStrings(result.Strategies), "all")),
				joinNames(result.Strategies))
		}
		if seen[st] {
			return nil, fmt.Errorf("strategy %q is listed twice", st)
		}
		seen[st] = true
		out = append(out, st)
	}
	return out, nil
}

// ParseTouch reads a touch mode.
func ParseTouch(s string) (result.Touch, error) {
	t := result.Touch(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(result.Touches, t) {
		return "", fmt.Errorf("unknown touch mode %q%s (choose from %s)", s, suggestion(string(t), toStrings(result.Touches)), joinNames(result.Touches))
	}
	return t, nil
}

// joinNames lists enum values for a message.
func joinNames[T ~string](vs []T) string { return strings.Join(toStrings(vs), ", ") }

// toStrings is enum values as strings, for a message or a suggestion.
func toStrings[T ~string](vs []T) []string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = string(v)
	}
	return names
}

var (
	envKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
)

// ParseVariant reads NAME:KEY=VALUE[,KEY=VALUE...]. A comma separates settings only where a KEY= follows
// it, so a value may hold commas (NVIDIA_DRIVER_CAPABILITIES=compute,utility). "default" names the
// runtime's own settings and takes none. RLIMIT_NOFILE, RLIMIT_MEMLOCK and RLIMIT_AS set the worker's soft
// limit instead of a variable (result.LimitValue says what each takes).
func ParseVariant(s string) (result.Variant, error) {
	name, settings, _ := strings.Cut(s, ":")
	if !result.IsVariantName(name) {
		return result.Variant{}, fmt.Errorf("%q: a variant is NAME:KEY=VALUE[,KEY=VALUE...], its name letters, digits, '.', '_' or '-' (at most 40)", s)
	}
	v := result.Variant{Name: name}
	if name == result.DefaultVariant {
		if settings != "" {
			return v, fmt.Errorf("%q: the default variant is the runtime's own settings and takes none; give the variant another name", s)
		}
		return v, nil
	}
	if settings == "" {
		return v, fmt.Errorf("%q: variant %s has no settings (NAME:KEY=VALUE)", s, name)
	}
	v.Settings = map[string]string{}
	// Split at the commas that start a KEY=.
	var parts []string
	start := 0
	for i := 0; i < len(settings); i++ {
		if settings[i] == ',' && envKey.MatchString(settings[i+1:]) {
			parts = append(parts, settings[start:i])
			start = i + 1
		}
	}
	parts = append(parts, settings[start:])
	for _, p := range parts {
		if !envKey.MatchString(p) {
			return v, fmt.Errorf("%q: %q is not KEY=VALUE with KEY an environment variable name", s, p)
		}
		k, val, _ := strings.Cut(p, "=")
		if !result.IsEnvName(k) {
			return v, fmt.Errorf("%q: %.40q... is too long for a variable name", s, k)
		}
		if result.SelectsRuntimeOrTool(k) {
			return v, fmt.Errorf("%q: %s chooses the runtime or the tool, not a runtime's setting: run that as a separate probe", s, k)
		}
		// RLIMIT_ keys are the worker's limits, not variables: their values must be ones setrlimit takes.
		if result.IsLimitSetting(k) {
			if _, err := result.LimitValue(k, val); err != nil {
				return v, fmt.Errorf("%q: %v", s, err)
			}
		}
		if _, dup := v.Settings[k]; dup {
			return v, fmt.Errorf("%q: %s is set twice", s, k)
		}
		v.Settings[k] = val
	}
	return v, nil
}

// maxCount bounds a count flag: far past any budget a machine could reach, and exact in a float64.
const maxCount = 1 << 53

// ParseCount reads a count as users type it: 100000, 100_000, or in exponent form (1e6, 1.5e3). Exponent
// form must still name a whole number: 1.2345e2 is an error, not 123.
func ParseCount(s string) (uint64, error) {
	in := s
	s = strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		if n > maxCount {
			return 0, fmt.Errorf("%q is too large (at most %d)", in, uint64(maxCount))
		}
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	// ParseFloat also reads hexadecimal, infinities and NaN, which no one types for a count.
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "xXpP") || s == "" {
		if strings.HasPrefix(s, "-") && err == nil {
			return 0, fmt.Errorf("%q is negative: give a positive number such as 1000 or 1e3", in)
		}
		return 0, fmt.Errorf("%q is not a count: give a number such as 1000 or 1e3", in)
	}
	switch {
	case f < 0:
		return 0, fmt.Errorf("%q is negative: give a positive number such as 1000 or 1e3", in)
	case f > maxCount:
		return 0, fmt.Errorf("%q is too large (at most %d)", in, uint64(maxCount))
	case f != math.Trunc(f):
		return 0, fmt.Errorf("%q is not a whole number (%s): give a count such as 1000 or 1e3", in, strconv.FormatFloat(f, 'f', -1, 64))
	}
	return uint64(f), nil
}

// hostReserveEnv names the environment variable that sets the default host reserve where no --host-reserve
// is given: a site's own, or a test suite's on a runtime that takes little host memory, whose runs must not
// stop for what the rest of the machine holds.
const hostReserveEnv = "CLMEMPROBE_HOST_RESERVE"

// defaultHostReserve is $CLMEMPROBE_HOST_RESERVE where it is set, else the engine's default (the larger of
// 1 GiB and 5% of RAM). A value that is not a size of at least probe.LeastHostReserve is an error that names
// the variable.
func defaultHostReserve() (uint64, error) {
	v := os.Getenv(hostReserveEnv)
	if v == "" {
		return probe.DefaultHostReserve(), nil
	}
	reserve, err := units.ParseSize(v)
	if err != nil || reserve < probe.LeastHostReserve {
		return 0, fmt.Errorf("%s=%s: give a size of at least %s (1GiB, 512MiB), or unset it for the default", hostReserveEnv, v, units.Size(probe.LeastHostReserve))
	}
	return reserve, nil
}
