package main

// The command line's behaviour for bad input, run in this process through realMain (its children are this
// test binary): cheap enough for a long table. Every case must end with one line on stderr and its
// documented exit code.

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// inProcess runs the command line in this process with exactly the environment env.
func inProcess(t *testing.T, env []string, args ...string) invocation {
	t.Helper()
	saved := os.Environ()
	os.Clearenv()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	defer func() {
		os.Clearenv()
		for _, kv := range saved {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
	}()
	var out, errb bytes.Buffer
	code := realMain(append([]string{"clmemprobe"}, args...), &out, &errb)
	return invocation{out.String(), errb.String(), code}
}

func TestBadInputGetsOneClearLine(t *testing.T) {
	env := PoCLEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		args    []string
		mention string
	}{
		{"unknown strategy", []string{"run", "--strategies", "shared,bogus"}, "unknown strategy"},
		{"duplicate strategy", []string{"run", "--strategies", "shared,shared"}, "twice"},
		{"size without number", []string{"run", "--size", "MiB"}, "no number"},
		{"size with unknown unit", []string{"run", "--size", "12XB"}, "unknown unit"},
		{"zero size", []string{"run", "--size", "0"}, "at least 1 byte"},
		{"negative size", []string{"run", "--size", "-5MiB"}, "positive"},
		{"duplicate sweep sizes", []string{"run", "--sizes", "1MiB,4KiB,1024KiB"}, "listed twice"},
		{"byte budget below the size", []string{"run", "--size", "1MiB", "--max-bytes", "512KiB"}, "not one buffer"},
		{"zero count", []string{"run", "--max-allocs", "0"}, "positive"},
		{"negative count", []string{"run", "--max-allocs", "-3"}, "positive"},
		{"count not a number", []string{"run", "--max-allocs", "many"}, "max-allocs"},
		{"device that does not exist", []string{"run", "--devices", "7"}, "device 7 does not exist"},
		{"duplicate devices", []string{"run", "--devices", "0,0"}, "twice"},
		{"device not a number", []string{"run", "--devices", "x"}, "not a device index"},
		{"unknown platform index", []string{"run", "--platform", "9"}, "platform 9 does not exist"},
		{"unknown platform name", []string{"run", "--platform", "nosuchvendor"}, "no platform matches"},
		{"timeout that does not parse", []string{"run", "--timeout", "soon"}, "does not parse"},
		{"negative hang timeout", []string{"run", "--hang-timeout", "-1s"}, "positive"},
		{"setup timeout that does not parse", []string{"devices", "--setup-timeout", "later"}, "does not parse"},
		{"unknown touch", []string{"run", "--touch", "wiggle"}, "unknown touch"},
		{"unknown format", []string{"run", "--format", "xml"}, "format"},
		{"unknown flag, with the closest", []string{"run", "--formt", "json"}, "did you mean --format?"},
		{"unknown flag", []string{"run", "--bogus"}, "bogus"},
		{"unknown command, with the closest", []string{"reprot", "x.json"}, "did you mean report?"},
		{"unknown command", []string{"frobnicate"}, "frobnicate"},
		{"help misspelt", []string{"hlep"}, "did you mean help?"},
		{"completion for a shell it does not write", []string{"completion", "fish"}, `completion "fish": that shell is not supported`},
		{"bundle named for another archive", []string{"bundle", "--output", filepath.Join(dir, "x.zip"), file}, "FILE.tar.gz or FILE.tgz"},
		{"arguments to run", []string{"run", "extra"}, "no arguments"},
		{"report without a file", []string{"report"}, "exactly one RUN.json"},
		{"compare without files", []string{"compare"}, "two arguments"},
		{"compare with one file", []string{"compare", file}, "two arguments"},
		{"report of a missing file", []string{"report", "/nonexistent/run.json"}, "no such file"},
		{"report of a file that is not a result", []string{"report", file}, "not a clmemprobe result"},
		{"report of /dev/zero", []string{"report", "/dev/zero"}, "does not start with {"},
		{"report of a folder without a result", []string{"report", dir}, "run.json"},
		{"report format", []string{"report", "--format", "pdf", file}, "format"},
		{"report format after the file", []string{"report", file, "--format", "pdf"}, "format"},
		{"compare tolerance", []string{"compare", "--tolerance", "lots", file, file}, "percentage"},
		{"version with arguments", []string{"version", "x"}, "no arguments"},
		{"variant without settings", []string{"run", "--variant", "pool"}, "has no settings"},
		{"variant name", []string{"run", "--variant", "a b:X=1"}, "a variant is NAME:KEY=VALUE"},
		{"default variant with settings", []string{"run", "--variant", "default:X=1"}, "takes none"},
		{"variant choosing the runtime", []string{"run", "--variant", "other:OCL_ICD_VENDORS=/x"}, "chooses the runtime"},
		{"variant setting that is not KEY=VALUE", []string{"run", "--variant", "v:1X=2"}, "not KEY=VALUE"},
		{"variant given twice", []string{"run", "--variant", "v:X=1", "--variant", "v:X=2"}, "given twice"},
		{"unknown preset", []string{"run", "--variant-preset", "nvidia-magic"}, "no such preset"},
		{"no variant left", []string{"run", "--no-default-variant"}, "leaves no variant"},
		{"merge without inputs", []string{"merge"}, "at least one"},
		{"merge tolerance", []string{"merge", "--tolerance", "x", dir}, "percentage"},
		{"check without expectations", []string{"check"}, "needs --expect"},
		{"record with expectations", []string{"check", "--record", "--expect", file, file}, "no --expect"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			oneLineError(t, inProcess(t, env, c.args...), exitUsage, c.mention)
		})
	}
}

func TestVersionBothWays(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		res := inProcess(t, Env(), args...)
		if res.code != 0 || strings.TrimSpace(res.stdout) != "clmemprobe "+version {
			t.Errorf("%v: exit %d, %q", args, res.code, res.stdout)
		}
	}
}

// --dry-run lists every job with the most memory it could take, starts no worker, and exits 0.
func TestDryRunPrintsThePlan(t *testing.T) {
	res := inProcess(t, PoCLEnv(t), "run", "--dry-run", "--sizes", "1MiB,16MiB", "--max-allocs", "5000", "--strategies", "shared,per-device", "--format", "json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var d result.DryRun
	if err := json.Unmarshal([]byte(res.stdout), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Jobs) != 4 || len(d.Devices) != 2 {
		t.Fatalf("%d jobs on %d devices, want 2 strategies x 2 sizes on 2", len(d.Jobs), len(d.Devices))
	}
	global := d.Devices[0].GlobalMemBytes
	if d.Devices[0].HostUnified {
		global = math.MaxUint64 // PoCL's devices are host memory, which holds more than they report: no cap
	}
	for _, j := range d.Jobs {
		bytes := j.Buffers * j.SizeBytes
		// A shared context may hold every buffer on every device; a context per device, its half.
		perDevice := min(bytes, global)
		if j.Strategy == result.PerDevice {
			perDevice = min((j.Buffers+1)/2*j.SizeBytes, global)
		}
		if j.Buffers != 5000 || j.Bytes != bytes || j.WorstHostBytes != bytes || j.WorstDeviceBytes != perDevice {
			t.Errorf("%+v: want 5000 buffers, %d bytes on the host at worst, %d per device", j, bytes, perDevice)
		}
	}
	table := inProcess(t, PoCLEnv(t), "run", "--dry-run", "--max-allocs", "10")
	// The table's first line says nothing is allocated (the rest of it: report's golden dry-run-guard-off).
	if table.code != 0 || !strings.HasPrefix(table.stdout, "clmemprobe run --dry-run: nothing is allocated. ") {
		t.Errorf("exit %d:\n%s", table.code, table.stdout)
	}
}

// Each command's help lists its own flags and the exit codes it can end with, not the others'.
func TestHelpListsTheCommandsOwnExitCodes(t *testing.T) {
	for cmd, absent := range map[string]int{"report": 5, "compare": 3, "run": 1, "devices": 5} {
		res := inProcess(t, Env(), cmd, "--help")
		lines := strings.Split(res.stdout, "\n")
		codes := helpExitCodes(res.stdout)
		if res.code != 0 || len(codes) == 0 || codes[0] != 0 || !slices.Contains(lines, "OPTIONS:") {
			t.Errorf("%s --help: exit %d, exit codes %v:\n%s", cmd, res.code, codes, res.stdout)
		}
		if slices.Contains(codes, absent) {
			t.Errorf("%s --help lists exit code %d, which it cannot end with:\n%s", cmd, absent, res.stdout)
		}
	}
}

// helpExitCodes are the codes a help text's EXIT CODES section lists, in order.
func helpExitCodes(help string) []int {
	var codes []int
	for _, l := range strings.Split(exitSection(help), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				codes = append(codes, n)
			}
		}
	}
	return codes
}

// The completion scripts ask the program, which answers with its commands, or the flags that match.
func TestCompletion(t *testing.T) {
	res := inProcess(t, Env(), "--generate-bash-completion")
	words := strings.Fields(res.stdout)
	for _, c := range []string{"run", "report", "compare", "devices", "completion"} {
		if !slices.Contains(words, c) {
			t.Errorf("completion of the command lacks %s: %q", c, res.stdout)
		}
	}
	// The flags of run that start --for, and only those.
	res = inProcess(t, Env(), "run", "--for", "--generate-bash-completion")
	if got := strings.Fields(res.stdout); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"--force", "--format"}) {
		t.Errorf("completion of run --for: %q, want --force and --format", got)
	}
	for _, shell := range []string{"bash", "zsh"} {
		script := inProcess(t, Env(), "completion", shell)
		if script.code != 0 || !strings.Contains(script.stdout, "--generate-bash-completion") {
			t.Errorf("completion %s: exit %d", shell, script.code)
		}
		if path, err := exec.LookPath(shell); err == nil {
			if out, err := exec.Command(path, "-n", "-c", script.stdout).CombinedOutput(); err != nil {
				t.Errorf("the %s script does not parse: %v %s", shell, err, out)
			}
		}
	}
}
