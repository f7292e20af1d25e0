package main

// Numbers as users type them (issue 24): counts in exponent form, decimal sizes said once, a host reserve
// too small to protect anything refused.

import (
	"encoding/json"
	"flag"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

func TestParseCount(t *testing.T) {
	for in, want := range map[string]uint64{"1000": 1000, "1e3": 1000, "1E6": 1000000, "1.5e3": 1500, " 42 ": 42, "100_000": 100000, "2.5e1": 25} {
		got, err := ParseCount(in)
		if err != nil || got != want {
			t.Errorf("ParseCount(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	// What each says, whole: the user's input quoted, what is wrong with it, what to give instead.
	notWhole := func(in, v string) string {
		return strconv.Quote(in) + " is not a whole number (" + v + "): give a count such as 1000 or 1e3"
	}
	notCount := func(in string) string {
		return strconv.Quote(in) + " is not a count: give a number such as 1000 or 1e3"
	}
	for in, want := range map[string]string{"1.2345e2": notWhole("1.2345e2", "123.45"), "1.5": notWhole("1.5", "1.5"),
		"-3": `"-3" is negative: give a positive number such as 1000 or 1e3`, "many": notCount("many"),
		"1e30": `"1e30" is too large (at most 9007199254740992)`, "": notCount(""), "NaN": notCount("NaN"), "0x10": notCount("0x10")} {
		if _, err := ParseCount(in); err == nil || err.Error() != want {
			t.Errorf("ParseCount(%q): %v, want %q", in, err, want)
		}
	}
}

// Every count flag takes 1e3; the plan holds the count it means.
func TestCountFlagsTakeExponents(t *testing.T) {
	res := inProcess(t, PoCLEnv(t), "run", "--dry-run", "--max-allocs", "1e3", "--strategies", "shared", "--format", "json")
	var d result.DryRun
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &d) != nil || len(d.Jobs) != 1 || d.Jobs[0].Buffers != 1000 {
		t.Fatalf("--max-allocs 1e3: exit %d, %.300s %s", res.code, res.stdout, res.stderr)
	}
	oneLineError(t, inProcess(t, PoCLEnv(t), "run", "--dry-run", "--max-allocs", "1.2345e2"), exitUsage, "--max-allocs")
	o, err := exchangeOptionsOf("--cells", "1e3", "--steps", "1e2", "--bench-reps", "2e1", "--bench-bytes", "1Mi", "--devices", "0,1")
	if err == nil {
		err = o.validate()
	}
	if r := o.request(); err != nil || r.Cells != 1000 || r.Steps != 100 || r.BenchReps != 20 || r.BenchBytes != 1<<20 {
		t.Fatalf("exchange 1e3 cells, 1e2 steps, 2e1 reps, 1Mi: %+v, %v", r, err)
	}
	if _, err := exchangeOptionsOf("--steps", "2.5"); err == nil || lineOf(err) != `--steps: "2.5" is not a whole number (2.5): give a count such as 1000 or 1e3` {
		t.Errorf("--steps 2.5: %v", err)
	}
	for _, args := range [][]string{{"report", "--max-samples", "1.5", "x.json"}, {"exchange", "--cells", "1e3.5"}} {
		oneLineError(t, inProcess(t, Env(), args...), exitUsage, args[1])
	}
}

// A decimal unit in a buffer size is said once on stderr, with the bytes it is and the binary size it was
// probably meant to be; a binary one is not.
func TestDecimalSizeIsSaidOnce(t *testing.T) {
	env := PoCLEnv(t)
	res := inProcess(t, env, "run", "--dry-run", "--max-allocs", "4", "--size", "1mb")
	want := "clmemprobe: --size 1mb is 1,000,000 bytes (decimal); 1MiB is 1,048,576"
	if res.code != 0 || strings.Count(res.stderr, want) != 1 {
		t.Errorf("--size 1mb: exit %d, stderr %q, want once %q", res.code, res.stderr, want)
	}
	sweep := inProcess(t, env, "run", "--dry-run", "--max-allocs", "4", "--sizes", "4KiB,2GB")
	if sweep.code != 0 || sweep.stderr != "clmemprobe: --sizes 2GB is 2,000,000,000 bytes (decimal); 2GiB is 2,147,483,648\n" {
		t.Errorf("--sizes 4KiB,2GB: exit %d, stderr %q", sweep.code, sweep.stderr)
	}
	if o, err := exchangeOptionsOf("--bench-bytes", "16MB"); err != nil || o.note() != "--bench-bytes 16MB is 16,000,000 bytes (decimal); 16MiB is 16,777,216" {
		t.Errorf("exchange --bench-bytes 16MB: %q, %v", o.note(), err)
	}
	// A decimal size whose binary reading is no whole number of bytes still says the bytes it is.
	if o, err := exchangeOptionsOf("--bench-bytes", "1.1MB"); err != nil || o.note() != "--bench-bytes 1.1MB is "+units.Grouped(11*100*1000)+" bytes (decimal); 1.1MiB would not be a whole number of bytes" {
		t.Errorf("exchange --bench-bytes 1.1MB: %q, %v", o.note(), err)
	}
	for _, size := range []string{"1MiB", "1Mi", "1M", "1048576"} {
		if res := inProcess(t, env, "run", "--dry-run", "--max-allocs", "4", "--size", size); res.code != 0 || res.stderr != "" {
			t.Errorf("--size %s: exit %d, stderr %q, want nothing", size, res.code, res.stderr)
		}
	}
}

// A host reserve below the floor cannot protect the machine and is refused with why; 0 and off turn the
// guard off, and the floor itself is allowed.
func TestHostReserveFloor(t *testing.T) {
	env := PoCLEnv(t)
	for _, small := range []string{"1MiB", "63MiB", "1B"} {
		oneLineError(t, inProcess(t, env, "run", "--dry-run", "--host-reserve", small), exitUsage, "at least 64 MiB")
	}
	for _, ok := range []string{"0", "off", "64MiB", "64Mi", "2GiB"} {
		if res := inProcess(t, env, "run", "--dry-run", "--max-allocs", "4", "--host-reserve", ok); res.code != 0 {
			t.Errorf("--host-reserve %s: exit %d: %s", ok, res.code, res.stderr)
		}
	}
}

// CLMEMPROBE_HOST_RESERVE sets the default reserve: the dry run reports it, --host-reserve overrides it, and
// a value that is not a size of at least the floor is one line naming the variable, for run and largest.
func TestHostReserveFromTheEnvironment(t *testing.T) {
	env := PoCLEnv(t)
	res := inProcess(t, append(env, "CLMEMPROBE_HOST_RESERVE=300MiB"), "run", "--dry-run", "--max-allocs", "4", "--format", "json")
	var d result.DryRun
	if err := json.Unmarshal([]byte(res.stdout), &d); res.code != 0 || err != nil || d.HostReserve != 300<<20 {
		t.Errorf("exit %d, %v, reserve %d; want %d: %s", res.code, err, d.HostReserve, 300<<20, res.stderr)
	}
	res = inProcess(t, append(env, "CLMEMPROBE_HOST_RESERVE=300MiB"), "run", "--dry-run", "--max-allocs", "4", "--format", "json", "--host-reserve", "100MiB")
	if err := json.Unmarshal([]byte(res.stdout), &d); err != nil || d.HostReserve != 100<<20 {
		t.Errorf("--host-reserve over the variable: %v, reserve %d", err, d.HostReserve)
	}
	for _, bad := range []string{"1MiB", "lots"} {
		oneLineError(t, inProcess(t, append(env, "CLMEMPROBE_HOST_RESERVE="+bad), "run", "--dry-run"), exitUsage, "CLMEMPROBE_HOST_RESERVE="+bad)
		oneLineError(t, inProcess(t, append(env, "CLMEMPROBE_HOST_RESERVE="+bad), "largest", "--max-bytes", "64MiB"), exitUsage, "CLMEMPROBE_HOST_RESERVE="+bad)
	}
}

// exchangeOptionsOf are exchange's options as its flags set them from args, as the command line does.
func exchangeOptionsOf(args ...string) (*exchangeOptions, error) {
	o := &exchangeOptions{}
	set := flag.NewFlagSet("exchange", flag.ContinueOnError)
	set.SetOutput(io.Discard)
	for _, f := range exchangeFlags(o) {
		if err := f.Apply(set); err != nil {
			return o, err
		}
	}
	return o, set.Parse(args)
}

// lineOf is the one line a flag value's error comes out as (setErrorLine), or the error as it is.
func lineOf(err error) string {
	if line, ok := setErrorLine(err); ok {
		return line
	}
	return err.Error()
}
