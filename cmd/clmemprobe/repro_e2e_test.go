package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// compileRepro writes the reproducer of a run (report --format repro, with extra flags) and compiles it
// with the system's C compiler against the OpenCL headers and loader, warnings as errors.
func compileRepro(t *testing.T, runJSON string, flags ...string) string {
	t.Helper()
	res := runTool(t, Env(), append(append([]string{"report", "--format", "repro"}, flags...), runJSON)...)
	if res.code != 0 {
		t.Fatalf("report --format repro: exit %d: %s", res.code, res.stderr)
	}
	return compileC(t, res.stdout)
}

func compileC(t *testing.T, source string) string {
	t.Helper()
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "repro.c"), filepath.Join(dir, "repro")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errCC := exec.LookPath("cc")
	libs, _ := filepath.Glob("/usr/lib/*/libOpenCL.so")
	if _, err := os.Stat("/usr/include/CL/cl.h"); err != nil || errCC != nil || len(libs) == 0 {
		skipOrFail(t, "compiling a reproducer needs cc, opencl-c-headers and ocl-icd-opencl-dev")
	}
	cc := exec.Command("cc", "-std=c99", "-Wall", "-Wextra", "-Werror", src, "-lOpenCL", "-o", bin)
	if out, err := cc.CombinedOutput(); err != nil {
		t.Fatalf("the reproducer does not compile cleanly: %v\n%s", err, out)
	}
	return bin
}

var reproLine = regexp.MustCompile(`(?m)^failed at buffer #(\d+): (\S+) \((-?\d+)\) at (\w+) \((\w+)\), meant for device (\d+)$`)

// runRepro runs a compiled reproducer and checks that it reports exactly the failure the tool recorded.
func runRepro(t *testing.T, bin string, env []string, s *result.JobResult) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if code := exitOf(err); code != 1 {
		t.Fatalf("the reproducer exited %d, want 1 (a failure): %s", code, out)
	}
	m := reproLine.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no failure line in the reproducer's output:\n%s", out)
	}
	ff := s.FirstFailure
	want := []string{strconv.FormatUint(ff.Index, 10), ff.Name, strconv.Itoa(int(ff.Code)), string(ff.Stage), ff.Call, strconv.Itoa(ff.Device)}
	if got := m[1:]; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the reproducer says %v, the tool recorded %v\n%s", got, want, out)
	}
}

func TestReproducerRepeatsTheFirstFailure(t *testing.T) {
	lazy := []string{"FAULTCL_MODEL=lazy", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", 256*mib)}
	cases := []struct {
		name     string
		settings []string
		args     []string
		strategy result.Strategy
	}{
		{"replicating, create", []string{hostBudget(64)}, []string{"--strategies", "shared"}, result.Shared},
		{"lazy, fill", lazy, []string{"--strategies", "per-device", "--touch", "fill"}, result.PerDevice},
		{"lazy, kernel", lazy, []string{"--strategies", "shared", "--touch", "kernel"}, result.Shared},
		{"lazy, migrate", lazy, []string{"--strategies", "migrate-first"}, result.MigrateFirst},
		{"lazy, late at finish", append(lazy, "FAULTCL_LAZY_AT_FINISH=1"), []string{"--strategies", "shared", "--touch", "fill"}, result.Shared},
		{"device list", append(lazy, "FAULTCL_EXTENSIONS=cl_khr_external_memory"), []string{"--strategies", "device-list", "--touch", "fill"}, result.DeviceList},
		{"allocation cap", []string{"FAULTCL_MAX_ALLOCS=300"}, []string{"--strategies", "per-device"}, result.PerDevice},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := FaultEnv(t, c.settings...)
			r, _, dir := runOut(t, env, append(c.args, "--max-allocs", "2000")...)
			s := strategy(t, r, c.strategy)
			if s.Outcome != result.OutcomeFailed {
				t.Fatalf("%s %s, want a failure to reproduce", s.Strategy, s.Outcome)
			}
			runRepro(t, compileRepro(t, filepath.Join(dir, "run.json")), env, s)
		})
	}
	// A variant's settings go into the reproducer: it sets them itself, whatever the environment it runs in.
	t.Run("variant", func(t *testing.T) {
		env := FaultEnv(t, hostBudget(256))
		r, _, dir := runOut(t, env, "--strategies", "shared", "--max-allocs", "1000", "--variant", fmt.Sprintf("small:FAULTCL_HOST_BUDGET=%d", 64*mib))
		s := job(t, r, result.Shared, "small")
		if s.FirstFailure == nil || s.FirstFailure.Index != 64 {
			t.Fatalf("the variant's job: %+v", s.FirstFailure)
		}
		runRepro(t, compileRepro(t, filepath.Join(dir, "run.json"), "--variant", "small"), env, s)
	})
	// On PoCL: a PoCL limit that makes a buffer too large for the device's largest allocation.
	t.Run("PoCL", func(t *testing.T) {
		env := PoCLEnv(t)
		r, _, dir := runOut(t, env, "--strategies", "shared", "--size", "512MiB", "--max-allocs", "2", "--variant-preset", "pocl-limit")
		s := job(t, r, result.Shared, "limit-1g")
		if s.Outcome != result.OutcomeFailed || s.FirstFailure.Code != -61 {
			t.Fatalf("PoCL with POCL_MEMORY_LIMIT=1 and 512 MiB buffers: %s %+v, want -61 at create", s.Outcome, s.FirstFailure)
		}
		runRepro(t, compileRepro(t, filepath.Join(dir, "run.json"), "--variant", "limit-1g"), env, s)
	})
}

// A reproducer the OOM killer ends has said how far it got (issue 46: it printed nothing). The kill is
// certain and comes at a known buffer: faultcl sends the process SIGKILL in its K-th clCreateBuffer, after
// the reproducer printed its progress into a file (where stdio buffers fully unless told otherwise). Its
// last line is the last multiple of the progress step before buffer K: a GiB of buffers, or a sixty-fourth
// of the buffers the run made where that is less. Killed near where the run ended (a cgroup's limit),
// a reproducer of 1 MiB buffers with a GiB step had said only "1 buffers done" (the sixth walk-through).
func TestKilledReproducerSaysHowFarItGot(t *testing.T) {
	for _, c := range []struct {
		size, made, killAt uint64
	}{{256 * mib, 20, 11}, {mib, 1000, 990}} {
		t.Run(units.SizeArg(c.size), func(t *testing.T) { killedReproducer(t, c.size, c.made, c.killAt) })
	}
}

func killedReproducer(t *testing.T, size, made, killAt uint64) {
	env := FaultEnv(t)
	r, _, dir := runOut(t, env, "--strategies", "per-device", "--size", units.SizeArg(size), "--max-allocs", fmt.Sprint(made))
	if s := strategy(t, r, result.PerDevice); s.Outcome != result.OutcomeCompleted || s.AllocationsOK != made {
		t.Fatalf("the run: %s after %d buffers, want %d completed", s.Outcome, s.AllocationsOK, made)
	}
	bin := compileRepro(t, filepath.Join(dir, "run.json"))
	outPath := filepath.Join(t.TempDir(), "out")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(bin)
	cmd.Env, cmd.Stdout, cmd.Stderr = append(env, fmt.Sprintf("FAULTCL_KILL_AT=%d", killAt)), out, out
	err = cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the reproducer ended with %v, want SIGKILL at buffer %d", err, killAt)
	}
	b, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	every := max(1, min((1<<30)/size, made/64))
	done := regexp.MustCompile(`(?m)^progress: (\d+) buffers done \((\d+) MiB\)$`).FindAllStringSubmatch(string(b), -1)
	want := (killAt - 1) / every * every
	if len(done) == 0 {
		t.Fatalf("killed at buffer %d, the reproducer had said nothing of its progress:\n%s", killAt, b)
	}
	last := done[len(done)-1]
	if last[1] != strconv.FormatUint(want, 10) || last[2] != strconv.FormatUint(want*size>>20, 10) || done[0][1] != "1" {
		t.Errorf("progress lines %q, want the first at 1 and the last at %d buffers (%d MiB)\n%s", done, want, want*size>>20, b)
	}
}

// Strings from a runtime end up in the C file, in comments and literals: none can end them and inject code.
func TestReproducerOfHostileStrings(t *testing.T) {
	_, _, dir := runOut(t, FaultEnv(t, hostBudget(8)), "--strategies", "shared", "--max-allocs", "100",
		"--variant", `evil:FAULTCL_X="; system("false"); /* */,FAULTCL_Y=a\b??=c`)
	r, err := result.Load(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	// U+202E and U+2066 reorder what an editor shows; gcc refuses them unpaired (-Wbidi-chars).
	r.Platform.Name = `faultcl */ int injected; /* "; abort(); "` + "\n#define X \u202e\u2066"
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := compileRepro(t, path, "--variant", "evil")
	cmd := exec.Command(bin)
	cmd.Env = FaultEnv(t)
	out, err := cmd.CombinedOutput()
	// The platform is looked for by its whole hostile name, which faultcl does not have: exit 2, nothing else.
	if code := exitOf(err); code != 2 || string(out) != "no platform named \"faultcl */ int injected; /* \"; abort(); \"\n#define X \u202e\u2066\"\n" {
		t.Errorf("exit %d, %q; want 2 and the platform named", code, out)
	}
}

// A variant's limits go into the reproducer as setrlimit calls at the start of main (soft limits, as the
// worker sets them), never as variables: under a shell's limit of 4096 descriptors, the reproducer of a
// job run with RLIMIT_NOFILE=512 fails where 512 descriptors are reached, as the tool's worker did. Its index
// is a little higher than the tool's: the reproducer holds fewer descriptors of its own (no Go runtime, no
// sampler, no protocol pipes). Where it cannot set a limit it says so in one line and runs on.
func TestReproducerSetsTheVariantsLimits(t *testing.T) {
	const shell, low = 4096, 512
	settings := fmt.Sprintf("low:RLIMIT_NOFILE=%d,RLIMIT_MEMLOCK=64KiB", low)
	if out, _ := exec.Command("/bin/sh", "-c", "ulimit -Hv").Output(); strings.TrimSpace(string(out)) == "unlimited" {
		settings += ",RLIMIT_AS=unlimited" // only where the hard limit allows it
	}
	env := FaultEnv(t, "FAULTCL_FDS_PER_EXTRA_DEVICE=1")
	dir := t.TempDir()
	res := underUlimit(t, env, fmt.Sprintf("ulimit -Sn %d", shell), "run", "--strategies", "shared", "--size", "4KiB", "--max-allocs", "5000",
		"--no-default-variant", "--variant", settings, "--out", dir)
	r, err := result.Load(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatalf("run.json (exit %d, %s): %v", res.code, res.stderr, err)
	}
	s := job(t, r, result.Shared, "low")
	if s.Outcome != result.OutcomeFailed || s.FirstFailure.Code != -6 || s.FirstFailure.Index >= low {
		t.Fatalf("shared under RLIMIT_NOFILE=%d: %s %+v", low, s.Outcome, s.FirstFailure)
	}
	src := runTool(t, Env(), "report", "--format", "repro", "--variant", "low", filepath.Join(dir, "run.json"))
	call := fmt.Sprintf(`set_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", (rlim_t)%dULL, "%d");`, low, low)
	if !strings.Contains(src.stdout, call) || !strings.Contains(src.stdout, `(rlim_t)65536ULL, "64KiB"`) || strings.Contains(src.stdout, `setenv("RLIMIT_`) {
		t.Fatalf("the reproducer does not set the limits (want %s):\n%s", call, src.stdout)
	}
	bin := compileC(t, src.stdout)
	run := func(ulimits string) (string, []string) {
		cmd := exec.Command("bash", "-c", ulimits+` && exec "$@"`, "_", bin)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if code := exitOf(err); code != 1 {
			t.Fatalf("under %s the reproducer exited %d, want 1 (a failure): %s", ulimits, code, out)
		}
		m := reproLine.FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("no failure line in the reproducer's output:\n%s", out)
		}
		return string(out), m[1:]
	}
	out, got := run(fmt.Sprintf("ulimit -Sn %d", shell))
	index, _ := strconv.ParseUint(got[0], 10, 64)
	if index < s.FirstFailure.Index || index >= low || got[2] != "-6" || got[3] != "create" {
		t.Errorf("the reproducer failed at #%s with %s at %s; want -6 at create, at or after the tool's #%d and before #%d:\n%s",
			got[0], got[2], got[3], s.FirstFailure.Index, low, out)
	}
	t.Logf("the tool failed at #%d, its reproducer at #%d (descriptor limit %d)", s.FirstFailure.Index, index, low)
	// A hard limit below the variant's: one line says so, and the loop runs under the limit there is.
	out, got = run("ulimit -Sn 256 && ulimit -Hn 256")
	if want := fmt.Sprintf("cannot set RLIMIT_NOFILE to %d (the hard limit is 256): Invalid argument", low); strings.Split(out, "\n")[0] != want {
		t.Errorf("the reproducer does not say it could not set the limit (%q):\n%s", want, out)
	}
	if index, _ := strconv.ParseUint(got[0], 10, 64); index >= 256 {
		t.Errorf("under a hard limit of 256 the reproducer failed at #%d", index)
	}
}

// A limit's value in an edited result is refused before it reaches the reproducer's C.
func TestEditedLimitIsRefused(t *testing.T) {
	_, _, dir := runOut(t, FaultEnv(t), "--strategies", "shared", "--max-allocs", "10", "--variant", "v:RLIMIT_NOFILE=4096")
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	edited := regexp.MustCompile(`"RLIMIT_NOFILE":\s*"4096"`).ReplaceAll(b, []byte(`"RLIMIT_NOFILE": "4096ULL); system(\"id\"); (void)(0"`))
	if bytes.Equal(edited, b) {
		t.Fatal("the run.json does not hold the variant's setting as written")
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	res := runTool(t, Env(), "report", "--format", "repro", "--variant", "v", path)
	// Refused as not a result: nothing on stdout (no C), one line saying which value.
	if res.stdout != "" {
		t.Errorf("stdout %q: an edited limit must be refused before any C is written", res.stdout)
	}
	errorLine(t, res, exitUsage, "clmemprobe: "+path+` is not a clmemprobe result: variant v: RLIMIT_NOFILE="4096ULL); system(\"id\"); (void)(0": want a count of descriptors or hard, at least 1`)
}
