package main

import (
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

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
	if got, err := ParseStrategies("all"); err != nil || len(got) != len(result.Strategies) {
		t.Errorf("all: %v %v", got, err)
	}
	if got, err := ParseStrategies("per-device, shared"); err != nil || len(got) != 2 || got[0] != result.PerDevice || got[1] != result.Shared {
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

// The parsers of user input must never panic, whatever they are given. Seeds live in testdata/fuzz.
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

// RLIMIT_ settings are read by the limits' own rule (result.LimitValue): a count for descriptors, a size
// or unlimited for locked memory and address space; the value is kept as given, for the findings to quote.
func TestParseVariantLimits(t *testing.T) {
	v, err := ParseVariant("nofile:RLIMIT_NOFILE=65536,RLIMIT_MEMLOCK=64KiB,RLIMIT_AS=unlimited,NEOReadDebugKeys=1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"RLIMIT_NOFILE": "65536", "RLIMIT_MEMLOCK": "64KiB", "RLIMIT_AS": "unlimited", "NEOReadDebugKeys": "1"}
	if len(v.Settings) != len(want) {
		t.Fatalf("settings %v, want %v", v.Settings, want)
	}
	for k, val := range want {
		if v.Settings[k] != val {
			t.Errorf("%s=%q, want %q as given", k, v.Settings[k], val)
		}
	}
	for in, want := range map[string]uint64{"RLIMIT_MEMLOCK=0": 0, "RLIMIT_AS=64GB": 64e9, "RLIMIT_MEMLOCK=1MiB+4KiB": 1<<20 + 4<<10} {
		k, val, _ := strings.Cut(in, "=")
		if n, err := result.LimitValue(k, val); err != nil || n != want {
			t.Errorf("%s: %d, %v; want %d", in, n, err, want)
		}
		if _, err := ParseVariant("v:" + in); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
	for _, bad := range []string{"RLIMIT_NOFILE=64KiB", "RLIMIT_NOFILE=0", "RLIMIT_NOFILE=unlimited", "RLIMIT_NOFILE=-1",
		"RLIMIT_NOFILE=", "RLIMIT_AS=0", "RLIMIT_AS=lots", "RLIMIT_STACK=8MiB", "RLIMIT_nofile=1"} {
		if v, err := ParseVariant("v:" + bad); err == nil || !strings.Contains(err.Error(), "RLIMIT_") {
			t.Errorf("%s: %v, %v; want an error naming the limit", bad, v.Settings, err)
		}
	}
}
