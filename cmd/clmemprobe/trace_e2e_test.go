package main

// End-to-end tests of `clmemprobe trace`: the real binary, the project's own test programs
// (scripts/traceprog), the real ICD loader with PoCL and with the fault-injection runtime.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

var (
	traceprogOnce sync.Once
	traceprogPath string
	traceprogErr  string
)

// Traceprog builds scripts/traceprog once and returns its path.
func Traceprog(t *testing.T) string {
	t.Helper()
	traceprogOnce.Do(func() {
		out, err := exec.Command("bash", filepath.Join(Root(), "scripts", "traceprog", "build.sh"), filepath.Join(tmp(), "traceprog")).CombinedOutput()
		if err != nil {
			traceprogErr = string(out) + err.Error()
			return
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		traceprogPath = lines[len(lines)-1]
	})
	if traceprogErr != "" {
		skipOrFail(t, "cannot build traceprog (needs cc, opencl-c-headers, ocl-icd-opencl-dev): %s", traceprogErr)
	}
	return traceprogPath
}

// traceEnv is env with the layer's cache in the tests' own folder, so the user's cache is left alone and
// the layer is built once for all the tests of the process.
func traceEnv(env []string) []string {
	return append(env, "XDG_CACHE_HOME="+filepath.Join(tmp(), "cache"))
}

// traceOut runs trace with --out in a fresh folder and loads the trace.json it wrote.
func traceOut(t *testing.T, env []string, args ...string) (*result.Trace, invocation) {
	t.Helper()
	_, tr, res := tracedInto(t, env, args...)
	if tr.SchemaVersion != result.TraceSchemaVersion || tr.Kind != result.TraceKind || len(tr.Verdict) == 0 {
		t.Fatalf("trace.json: schema %d kind %q verdict %q", tr.SchemaVersion, tr.Kind, tr.Verdict)
	}
	return tr, res
}

// tracedInto traces with --out into a fresh folder and returns the folder and its trace.
func tracedInto(t *testing.T, env []string, args ...string) (string, *result.Trace, invocation) {
	t.Helper()
	dir := t.TempDir()
	res := runTool(t, traceEnv(env), append([]string{"trace", "-q", "--out", dir}, args...)...)
	tr, err := result.LoadTrace(filepath.Join(dir, "trace.json"))
	if err != nil || tr == nil {
		t.Fatalf("trace %v: exit %d, stderr %q: %v", args, res.code, res.stderr, err)
	}
	return dir, tr, res
}

// printedFailure is the "first failure: index I code C" line the program printed.
func printedFailure(t *testing.T, out string) (uint64, int32) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "first failure: index "); ok {
			f := strings.Fields(rest)
			i, _ := strconv.ParseUint(f[0], 10, 64)
			c, _ := strconv.ParseInt(f[2], 10, 32)
			return i, int32(c)
		}
	}
	t.Fatalf("the program printed no failure: %q", out)
	return 0, 0
}

// On faultcl with a fixed failure (the 37th create returns -5), the trace's first failure is the one the
// program prints and the one `run` finds for the same loop (one context over both devices: shared).
func TestTraceMatchesProgramAndRun(t *testing.T) {
	const at = 37
	env := FaultEnv(t, "FAULTCL_OOR_AT="+strconv.Itoa(at))
	tr, res := traceOut(t, env, "--", Traceprog(t), "loop", strconv.Itoa(mib))
	idx, code := printedFailure(t, res.stdout)
	f := tr.FirstFailure
	if res.code != 0 || f == nil || f.Index != idx || f.Code != code || idx != at-1 || code != -5 {
		t.Fatalf("exit %d, trace's first failure %+v; the program printed index %d code %d; want %d, -5", res.code, f, idx, code, at-1)
	}
	r := decodeRun(t, runTool(t, env, "run", "--strategies", "shared", "--max-allocs", "100", "--format", "json"))
	wantFailure(t, strategy(t, r, result.Shared), f.Index, result.StageCreate, f.Code, 0)
	if len(f.Live) != 1 || f.Live[0].Buffers != idx || f.Live[0].Bytes != idx*mib || len(f.Devices) != 2 ||
		tr.Contexts[0].DeviceCount != 2 || tr.Devices[1].Name != "faultcl device 1" {
		t.Fatalf("live %+v, devices %v, contexts %+v, devices %+v", f.Live, f.Devices, tr.Contexts, tr.Devices)
	}
	// The limit rests on the failure's count (how the verdict words it is the judge's tests' concern).
	if tr.Limit == "" || tr.LimitEvidence["allocations_ok"] != float64(idx) || tr.Exit.Code == nil || *tr.Exit.Code != 0 {
		t.Fatalf("limit %q %v, verdict %q, exit %+v", tr.Limit, tr.LimitEvidence, tr.Verdict, tr.Exit)
	}
}

// On PoCL with two devices, through the loader's layers and through LD_PRELOAD: the program prints what it
// prints without the tool (return values and codes unchanged, errcode_ret NULL included), and the trace's
// failure and live buffers per context are the program's own account.
func TestTraceMixedOnPoCL(t *testing.T) {
	env := PoCLEnv(t)
	prog := Traceprog(t)
	plain := exec.Command(prog, "mixed", "4096")
	plain.Env = env
	want, err := plain.Output()
	if err != nil {
		t.Fatal(err)
	}
	for via, mech := range map[string]string{"layer": result.InterceptLayer, "preload": result.InterceptPreload} {
		tr, res := traceOut(t, env, "--via", via, "--", prog, "mixed", "4096")
		if res.code != 0 || res.stdout[:len(want)] != string(want) || tr.Interception != mech {
			t.Fatalf("%s: exit %d, interception %q, the program printed %q, without the tool %q", via, res.code, tr.Interception, res.stdout, want)
		}
		idx, code := printedFailure(t, string(want))
		f := tr.FirstFailure
		if f == nil || f.Index != idx || f.Code != code || f.Context != 1 || len(f.Live) != 2 ||
			f.Live[0] != (result.TraceLive{Context: 0, Buffers: 2, Bytes: 8192}) || f.Live[1] != (result.TraceLive{Context: 1, Buffers: 1, Bytes: 8192}) {
			t.Fatalf("%s: first failure %+v; the program says index %d code %d, live 2/8192 and 1/8192", via, f, idx, code)
		}
	}
}

// A program that segfaults after its first failure, and one that never ends (--timeout), leave whole
// traces, with exit code 5.
func TestTraceCrashAndTimeout(t *testing.T) {
	env := FaultEnv(t, "FAULTCL_OOR_AT=5")
	prog := Traceprog(t)
	tr, res := traceOut(t, env, "--", prog, "crash", "1024")
	if res.code != exitWorkerFault || tr.Exit.Signal != "SIGSEGV" || tr.FirstFailure == nil || tr.FirstFailure.Index != 4 ||
		res.stderr != "clmemprobe: the program was killed by SIGSEGV; the trace is written\n" {
		t.Fatalf("crash: exit %d (%q), trace exit %+v, first failure %+v", res.code, res.stderr, tr.Exit, tr.FirstFailure)
	}
	tr, res = traceOut(t, env, "--timeout", "2s", "--", prog, "forever", "1024", "3")
	if res.code != exitWorkerFault || !tr.Exit.TimedOut || tr.Allocations != 3 || tr.Contexts[0].LiveBuffers != 3 || tr.FirstFailure != nil {
		t.Fatalf("forever: exit %d (%q), trace exit %+v, allocations %d", res.code, res.stderr, tr.Exit, tr.Allocations)
	}
	// Two seconds of a live process sampled every 100 ms: its memory was read, from its own /proc entry.
	if len(tr.Samples) == 0 || tr.Samples[0].RSSBytes == 0 || tr.Samples[0].OpenFDs == 0 {
		t.Fatalf("forever: samples %+v", tr.Samples)
	}
}

// Ctrl-C (SIGINT to the tool) ends the program's process group and still writes the trace, exit code 130.
func TestTraceInterrupted(t *testing.T) {
	dir := t.TempDir()
	cmd, out := startTrace(t, traceEnv(FaultEnv(t)), dir, "created 2\n", Traceprog(t), "forever", "1024", "2")
	_ = cmd.Process.Signal(os.Interrupt)
	go io.Copy(io.Discard, out)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want %d", err, exitInterrupted)
	}
	b, err := os.ReadFile(filepath.Join(dir, "trace.json"))
	var tr result.Trace
	if err != nil || json.Unmarshal(b, &tr) != nil || !tr.Exit.Interrupted || tr.Allocations != 2 {
		t.Fatalf("trace.json (%v): %.300s", err, b)
	}
}

// startTrace starts `trace --out dir -- argv` and returns once the program has printed first: it runs, and
// what it prints next is in out.
func startTrace(t *testing.T, env []string, dir, first string, argv ...string) (*exec.Cmd, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(Binary(t), append([]string{"trace", "-q", "--out", dir, "--"}, argv...)...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, len(first))
	if _, err := io.ReadFull(out, line); err != nil || string(line) != first {
		t.Fatalf("the program printed %q, want %q: %v", line, first, err)
	}
	return cmd, out
}

// Bad input is one line and exit code 2; a machine without a compiler is one line saying what to install.
func TestTraceBadInput(t *testing.T) {
	env := traceEnv(Env())
	oneLineError(t, runTool(t, env, "trace"), exitUsage, "needs a program")
	oneLineError(t, runTool(t, env, "trace", "--", "no-such-program-here"), exitUsage, "not found")
	notExec := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oneLineError(t, runTool(t, env, "trace", "--", notExec), exitUsage, "not executable")
	oneLineError(t, runTool(t, env, "trace", "--via", "ld", "--", "true"), exitUsage, "--via")
	oneLineError(t, runTool(t, env, "trace", "--timeout", "soon", "--", "true"), exitUsage, "--timeout")
	noCC := append(Env("CC=/nonexistent/cc"), "XDG_CACHE_HOME="+t.TempDir())
	oneLineError(t, runTool(t, noCC, "trace", "--", "true"), exitNoOpenCL, "install gcc")
}

// tracedLoopFailure traces traceprog's loop on faultcl with its at-th create failing, into a folder: the
// runtime's environment, the folder, and the failure the program printed.
func tracedLoopFailure(t *testing.T, at int) ([]string, string, uint64, int32) {
	t.Helper()
	env := FaultEnv(t, "FAULTCL_OOR_AT="+strconv.Itoa(at))
	dir := t.TempDir()
	res := runTool(t, traceEnv(env), "trace", "-q", "--out", dir, "--", Traceprog(t), "loop", "4096")
	idx, code := printedFailure(t, res.stdout)
	return env, dir, idx, code
}

// report --format repro of a trace writes a C program that repeats the program's sequence and fails at the
// same index with the same code, on the same runtime; a trace without a failure has nothing to repeat.
func TestTraceRepro(t *testing.T) {
	const at = 21
	env, dir, idx, code := tracedLoopFailure(t, at)
	src := filepath.Join(dir, "repro.c")
	if r := runTool(t, env, "report", "--format", "repro", filepath.Join(dir, "trace.json"), "--output", src); r.code != 0 {
		t.Fatalf("report --format repro: exit %d: %s", r.code, r.stderr)
	}
	bin := filepath.Join(dir, "repro")
	if out, err := exec.Command("cc", "-O2", "-o", bin, src, "-lOpenCL").CombinedOutput(); err != nil {
		t.Fatalf("compiling the reproducer: %v: %s", err, out)
	}
	run := exec.Command(bin)
	run.Env = env
	out, err := run.Output()
	if err != nil {
		t.Fatalf("the reproducer: %v: %s", err, out)
	}
	if got := fmt.Sprintf("first failure: index %d code %d\n", idx, code); string(out) != got || idx != at-1 {
		t.Fatalf("the reproducer printed %q; the program %q", out, got)
	}
	nofail := t.TempDir()
	runTool(t, traceEnv(FaultEnv(t)), "trace", "-q", "--out", nofail, "--", Traceprog(t), "loop", "4096", "3")
	oneLineError(t, runTool(t, env, "report", "--format", "repro", filepath.Join(nofail, "trace.json")), exitUsage, "no allocation failure")
	if r, want := runTool(t, env, "report", filepath.Join(nofail, "trace.json")), renderedTrace(t, filepath.Join(nofail, "trace.json"), "table"); r.code != 0 || r.stdout != want {
		t.Fatalf("report of a trace: exit %d: %s %s; want the trace's table:\n%s", r.code, r.stdout, r.stderr, want)
	}
}

// A program that fills each buffer and waits, on a runtime that allocates at first use: the failure is the
// fill's, recorded with its queue's context and devices; its index counts the allocation calls before it
// (the creates of every buffer up to the one filled), so it is one past the buffer the program names, and
// the live buffers are the program's count at that moment.
func TestTraceOfAFillFailure(t *testing.T) {
	const devMem = 32 << 20
	env := FaultEnv(t, "FAULTCL_MODEL=lazy", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", devMem))
	tr, res := traceOut(t, env, "--", Traceprog(t), "fill", strconv.Itoa(mib), "1000")
	idx, code := printedFailure(t, res.stdout)
	if want := uint64(2 * devMem / mib); idx != want || code != -4 {
		t.Fatalf("the program failed at #%d with %d, want #%d with -4 (two devices of %d MiB)", idx, code, want, devMem>>20)
	}
	f := tr.FirstFailure
	if f == nil || f.Call != "clEnqueueFillBuffer" || f.Code != code || f.Index != idx+1 || f.Context != 0 || len(f.Devices) != 2 ||
		len(f.Live) != 1 || f.Live[0].Buffers != idx+1 || f.Buffer != result.BufferNewest || f.BufferBytes != mib {
		t.Fatalf("first failure %+v; the program printed buffer #%d", f, idx)
	}
	r := decodeRun(t, runTool(t, env, "run", "--strategies", "shared", "--touch", "fill", "--max-allocs", "1000", "--format", "json"))
	wantFailure(t, strategy(t, r, result.Shared), idx, result.StageTouch, code, int(idx%2))
	// The limit rests on the newest buffer, whose fill failed (checked above), filling the device: the
	// devices' memory, full. How the verdict names that buffer (#idx, as the program and run do) is the
	// judge's tests' (report/findings, trace_devices_test.go).
	if tr.Limit != result.LimitDeviceMemory || tr.LimitEvidence["device_fill"] != 1 || tr.LimitEvidence["allocations_ok"] != float64(idx+1) {
		t.Errorf("limit %q %v: want device-memory, the device full at %d allocations", tr.Limit, tr.LimitEvidence, idx+1)
	}
}

// A program that makes all its buffers first and fills them after: the failed fill is on an older buffer,
// which the trace says, and the limit does not name the newest buffer's number for it (it has none the
// layer can tell).
func TestTraceOfALaterFillFailure(t *testing.T) {
	const devMem, n = 32 << 20, 100
	env := FaultEnv(t, "FAULTCL_MODEL=lazy", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", devMem))
	tr, res := traceOut(t, env, "--", Traceprog(t), "later", strconv.Itoa(mib), strconv.Itoa(n))
	idx, code := printedFailure(t, res.stdout)
	if want := uint64(2 * devMem / mib); idx != want || code != -4 {
		t.Fatalf("the program failed at #%d with %d, want #%d with -4 (two devices of %d MiB)", idx, code, want, devMem>>20)
	}
	f := tr.FirstFailure
	if f == nil || f.Call != "clEnqueueFillBuffer" || f.Code != code || f.Index != n || len(f.Live) != 1 || f.Live[0].Buffers != n ||
		f.Buffer != result.BufferOlder || f.BufferBytes != mib {
		t.Fatalf("first failure %+v; the program made %d buffers and printed buffer #%d", f, n, idx)
	}
	// faultcl measures no device memory: which of the live buffers it had placed is not known, and the limit
	// is unknown rather than all of them read as the device's (they would be 156% of it: no device fill, no
	// bytes given to the device among its evidence).
	_, fill := tr.LimitEvidence["device_fill"]
	_, given := tr.LimitEvidence["bytes_given_to_device"]
	if tr.Limit != result.LimitUnknown || fill || given || tr.LimitEvidence["allocations_ok"] != n {
		t.Errorf("limit %q %v; want unknown, resting on %d allocations and no device figure", tr.Limit, tr.LimitEvidence, n)
	}
}

// A trace's folder is taken where a run's is (report DIR), and bundle packs a trace for a ticket: README,
// report, the trace as written and a reproducer that fails where the program did; a trace whose failure is
// a command's says in the README why there is no reproducer.
func TestTraceBundleAndFolder(t *testing.T) {
	const at = 13
	env, dir, idx, code := tracedLoopFailure(t, at)
	if r, want := runTool(t, env, "report", dir), renderedTrace(t, filepath.Join(dir, "trace.json"), "table"); r.code != 0 || r.stdout != want {
		t.Fatalf("report DIR of a trace: exit %d: %s%s; want the trace's table:\n%s", r.code, r.stdout, r.stderr, want)
	}
	out := filepath.Join(t.TempDir(), "ticket.tar.gz")
	if r := runTool(t, env, "bundle", "-q", "--keep-identity", "-o", out, dir); r.code != 0 {
		t.Fatalf("bundle of a trace: exit %d: %s", r.code, r.stderr)
	}
	files := untar(t, out)
	original, _ := os.ReadFile(filepath.Join(dir, "trace.json"))
	// The README is traceReadme's of this trace, with the reproducer (its prose: readme-trace-create).
	if !bytes.Equal(files["trace.json"], original) || len(files["report.md"]) == 0 || files["repro.c"] == nil || !bytes.Equal(files["README.md"], bundledReadme(t, files)) {
		t.Fatalf("bundle holds %v; want the trace as written, the report, repro.c and its README:\n%s", keys(files), files["README.md"])
	}
	bin := compileC(t, string(files["repro.c"]))
	run := exec.Command(bin)
	run.Env = env
	got, _ := run.Output()
	if want := fmt.Sprintf("first failure: index %d code %d\n", idx, code); string(got) != want {
		t.Errorf("the bundle's reproducer printed %q, the program %q", got, want)
	}
	fill := t.TempDir()
	runTool(t, traceEnv(FaultEnv(t, "FAULTCL_MODEL=lazy", "FAULTCL_DEVICE_MEM=8388608")), "trace", "-q", "--out", fill, "--", Traceprog(t), "fill", strconv.Itoa(mib), "100")
	out2 := filepath.Join(t.TempDir(), "fill.tar.gz")
	if r := runTool(t, env, "bundle", "-q", "-o", out2, fill); r.code != 0 {
		t.Fatalf("bundle of a fill trace: exit %d: %s", r.code, r.stderr)
	}
	// No reproducer, and the README says why: traceReadme's words for a fill failure (readme-trace-fill).
	if f := untar(t, out2); f["repro.c"] != nil || !bytes.Equal(f["README.md"], bundledReadme(t, f)) {
		t.Errorf("a fill failure's bundle: %v, README %q", keys(f), f["README.md"])
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// trace -o writes the rendered trace, what stdout would have held, and refuses --out's own trace.json.
func TestTraceOutput(t *testing.T) {
	env := traceEnv(FaultEnv(t, "FAULTCL_OOR_AT=5"))
	dir := t.TempDir()
	md := filepath.Join(dir, "trace.md")
	res := runTool(t, env, "trace", "-q", "--format", "markdown", "-o", md, "--", Traceprog(t), "loop", "4096")
	b, err := os.ReadFile(md)
	// The Markdown is in the file; stdout holds the program's own line alone.
	idx, code := printedFailure(t, res.stdout)
	if program := fmt.Sprintf("first failure: index %d code %d\n", idx, code); res.code != 0 || err != nil || !bytes.HasPrefix(b, []byte("# clmemprobe trace\n")) || res.stdout != program {
		t.Fatalf("exit %d, file %q (%v), stdout %q: want the Markdown in the file, only %q on stdout", res.code, b, err, res.stdout, program)
	}
	oneLineError(t, runTool(t, env, "trace", "--out", dir, "-o", filepath.Join(dir, "trace.json"), "--", Traceprog(t), "loop", "4096"), exitUsage, "--out's own trace.json")
}

// trace --calls logs every enqueue, not only the creates, and logs it as the program makes it: a program the
// kernel kills inside a fill (faultcl sends SIGKILL in its n-th clEnqueueFillBuffer, before it answers) has
// that fill as its log's last call (issue 46: the log ended at the create before it). Each of the fills
// before it is logged after its buffer's create, with the fill's bytes.
func TestTraceCallsLogTheFillInFlightAtAKill(t *testing.T) {
	const killAt, size = 5, 4096
	env := FaultEnv(t, fmt.Sprintf("FAULTCL_KILL_FILL_AT=%d", killAt))
	tr, _ := traceOut(t, env, "--calls", "--", Traceprog(t), "fill", strconv.Itoa(size), "100")
	if tr.FirstFailure != nil {
		t.Fatalf("a first failure %+v; the program was killed before any", tr.FirstFailure)
	}
	var fills, creates uint64
	var order []string
	for _, c := range tr.Calls {
		switch c.Call {
		case "clEnqueueFillBuffer":
			fills += c.Count
			if c.Size != size {
				t.Errorf("a fill of %d bytes logged, the program fills %d", c.Size, size)
			}
		case "clCreateBuffer":
			creates += c.Count
		default:
			continue
		}
		order = append(order, c.Call)
	}
	if fills != killAt || creates != killAt {
		t.Errorf("%d fills and %d creates logged, want %d of each (the last fill in flight when it was killed)", fills, creates, killAt)
	}
	if n := len(tr.Calls); n == 0 || tr.Calls[n-1].Call != "clEnqueueFillBuffer" {
		t.Fatalf("the log's last call is not the fill the program was killed in: %+v", tr.Calls)
	}
	for i, call := range order {
		if want := []string{"clCreateBuffer", "clEnqueueFillBuffer"}[i%2]; call != want {
			t.Fatalf("call %d of the creates and fills is %s, want %s: %v", i, call, want, order)
		}
	}
}
