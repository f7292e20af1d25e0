package main

// End-to-end tests of "a tracer never changes the traced": one program (scripts/traceprog/classprog.c),
// built each way a program reaches OpenCL, traced by the real binary through each way in, on PoCL and on the
// fault-injection runtime, through the real ICD loader.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

// debianPython is the interpreter Debian's python3-pyopencl is installed for (a python3 earlier on PATH,
// pyenv's say, does not see it).
const debianPython = "/usr/bin/python3"

// loadClass is one way a program loads OpenCL, and the command that runs classprog that way.
type loadClass struct {
	name string
	argv func(dir string) []string
	env  func(dir string) []string
	// preloadBlind: LD_PRELOAD's exports cannot reach it (the program looks the entry points up on the
	// handle of the library it opened).
	preloadBlind bool
}

var loadClasses = []loadClass{
	{name: "linked", argv: func(d string) []string { return []string{filepath.Join(d, "classprog-linked"), "run"} }},
	{name: "dlopen and dlsym", argv: func(d string) []string { return []string{filepath.Join(d, "classprog-dlopen"), "run"} }, preloadBlind: true},
	{name: "plugin opened RTLD_LOCAL", argv: func(d string) []string {
		return []string{filepath.Join(d, "classhost"), filepath.Join(d, "classprog-plugin.so"), "run"}
	}},
	{name: "pyopencl", argv: func(string) []string {
		return []string{debianPython, filepath.Join(Root(), "scripts", "traceprog", "classprog.py"), "run"}
	}},
	{name: "fork, the child calls", argv: func(d string) []string { return []string{filepath.Join(d, "classprog-linked"), "fork"} }},
	{name: "16 threads", argv: func(d string) []string { return []string{filepath.Join(d, "classprog-linked"), "threads"} }},
	{name: "a second loader under another name", argv: func(d string) []string { return []string{filepath.Join(d, "classprog-dlopen"), "run"} },
		env: func(d string) []string {
			return []string{"CLASSPROG_LIB=" + filepath.Join(d, "bundled", "libOpenCL-bundled.so.1")}
		},
		preloadBlind: true},
}

// requirePyOpenCL fails (or skips, where OpenCL is not required) without Debian's pyopencl.
func requirePyOpenCL(t *testing.T) {
	t.Helper()
	if out, err := exec.Command(debianPython, "-c", "import pyopencl").CombinedOutput(); err != nil {
		skipOrFail(t, "no pyopencl for %s (apt-get install python3-pyopencl): %v: %s", debianPython, err, out)
	}
}

// programRun is what one run of a program did, as its caller sees it.
type programRun struct {
	stdout, stderr []byte
	code           int
}

func runPlain(t *testing.T, env, argv []string) programRun {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	return programRun{out.Bytes(), errb.Bytes(), code}
}

// traceQuietly traces argv with --via, the rendered trace in a file and the result in a folder, so that
// what the tool's stdout and stderr hold is the program's alone.
func traceQuietly(t *testing.T, env []string, via string, argv []string) (*result.Trace, programRun) {
	t.Helper()
	dir := t.TempDir()
	res := runTool(t, traceEnv(env), append([]string{"trace", "-q", "--via", via, "--out", dir, "-o", filepath.Join(dir, "trace.txt"), "--"}, argv...)...)
	if res.code != 0 {
		t.Fatalf("trace --via %s: exit %d: %s", via, res.code, res.stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "trace.json"))
	var tr result.Trace
	if err != nil || json.Unmarshal(b, &tr) != nil {
		t.Fatalf("trace.json: %v", err)
	}
	code := -1
	if tr.Exit.Code != nil {
		code = *tr.Exit.Code
	}
	return &tr, programRun{[]byte(res.stdout), []byte(res.stderr), code}
}

// Each class, each way in, on each runtime: the program's stdout, stderr and exit status are byte for byte
// what they are untraced; where the way reaches the class, the trace's first failure is the program's own
// (its index, code and call, and the buffer number in the first sentence); where it does not, the first
// line says the program mapped the loader and what to try, never that it did not use OpenCL.
func TestTraceNeverChangesTheProgram(t *testing.T) {
	requirePyOpenCL(t)
	dir := filepath.Dir(Traceprog(t))
	const buffers, cap = 12, 9
	runtimes := []struct {
		name string
		env  []string
		// index and code are the failure the runtime gives this loop: PoCL refuses the buffer over its
		// largest allocation (after the 12), faultcl holds at most 9 live buffers and refuses the next with
		// -6 every time it is asked (pyopencl asks twice: it retries a failed create once, after a garbage
		// collection).
		index uint64
		code  int32
	}{
		{"PoCL", PoCLEnv(t), buffers, -61},
		{"faultcl", FaultEnv(t, "FAULTCL_MAX_ALLOCS="+strconv.Itoa(cap)), cap, -6},
	}
	for _, rt := range runtimes {
		for _, class := range loadClasses {
			argv := append(class.argv(dir), "4096", strconv.Itoa(buffers))
			env := rt.env
			if class.env != nil {
				env = append(append([]string{}, env...), class.env(dir)...)
			}
			plain := runPlain(t, env, argv)
			t.Logf("%s, %s: %s", rt.name, class.name, plain.stdout)
			if idx, code := printedFailure(t, string(plain.stdout)); idx != rt.index || code != rt.code {
				t.Fatalf("%s, %s, untraced: the program failed at #%d with %d, want #%d with %d", rt.name, class.name, idx, code, rt.index, rt.code)
			}
			for _, via := range []string{"auto", "layer", "preload"} {
				name := fmt.Sprintf("%s, %s, --via %s", rt.name, class.name, via)
				tr, traced := traceQuietly(t, env, via, argv)
				if !bytes.Equal(traced.stdout, plain.stdout) || !bytes.Equal(traced.stderr, plain.stderr) || traced.code != plain.code {
					t.Errorf("%s: traced the program printed %q, %q and exited %d; untraced %q, %q and %d", name,
						traced.stdout, traced.stderr, traced.code, plain.stdout, plain.stderr, plain.code)
					continue
				}
				wantWay := map[string]string{"auto": result.WayLayer, "layer": result.WayLayer, "preload": result.WayPreload}[via]
				if tr.WayIn != wantWay || tr.WayInReason == "" {
					t.Errorf("%s: way in %q (%q), want %s and why", name, tr.WayIn, tr.WayInReason, wantWay)
				}
				if via == "preload" && class.preloadBlind {
					wantUnseen(t, name, tr, env, class)
					continue
				}
				f := tr.FirstFailure
				if tr.Interception != wantWay || f == nil || f.Index != rt.index || f.Code != rt.code || f.Call != "clCreateBuffer" ||
					!slices.Equal(tr.Verdict, findings.JudgeTrace(tr).Verdict()) {
					t.Errorf("%s: recorded by %q, first failure %+v, verdict %q; the program printed #%d with %d", name, tr.Interception, f, tr.Verdict, rt.index, rt.code)
				}
			}
		}
	}
}

// wantUnseen checks the trace of a class LD_PRELOAD cannot reach: nothing recorded, and a first line that
// names the loader the program mapped and says to try the loader's layers.
func wantUnseen(t *testing.T, name string, tr *result.Trace, env []string, class loadClass) {
	t.Helper()
	loader := "libOpenCL.so.1"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CLASSPROG_LIB="); ok {
			loader = filepath.Base(v)
		}
	}
	mapped := false
	for _, l := range tr.Libraries {
		mapped = mapped || (l.Kind == result.LibraryLoader && filepath.Base(l.Path) == loader)
	}
	if tr.Interception != result.InterceptNone || !mapped || !strings.HasPrefix(tr.Verdict[0], "No OpenCL call reached the layer, but the program mapped the ICD loader") ||
		!strings.Contains(tr.Verdict[0], "--via layer") || strings.Contains(strings.Join(tr.Verdict, " "), "did not use OpenCL") {
		t.Errorf("%s (%s): recorded by %q, libraries %+v, verdict %q", name, class.name, tr.Interception, tr.Libraries, tr.Verdict)
	}
}

// A program that made no OpenCL call and mapped no OpenCL library is said not to have used OpenCL.
func TestTraceOfAProgramWithoutOpenCL(t *testing.T) {
	tr, _ := traceOut(t, PoCLEnv(t), "--", "true")
	if tr.Interception != result.InterceptNone || len(tr.Libraries) != 0 || !strings.HasPrefix(tr.Verdict[0], "The program did not use OpenCL") {
		t.Fatalf("recorded by %q, libraries %+v, verdict %q", tr.Interception, tr.Libraries, tr.Verdict)
	}
}

// A traced program that ignores SIGTERM and SIGINT: the first Ctrl-C sends it SIGTERM, the second kills its
// group at once; the tool exits 130 within 5 s of the second and the trace is still written. And where
// the tool itself is killed (SIGKILL, no handler runs), the program dies with it.
func TestTraceOfAProgramThatIgnoresSignals(t *testing.T) {
	env := traceEnv(FaultEnv(t))
	script := `trap '' TERM INT; echo ready; while :; do sleep 0.05; done`
	for _, how := range []string{"second Ctrl-C", "tool killed"} {
		dir := t.TempDir()
		cmd, out := startTrace(t, env, dir, "ready\n", "bash", "-c", script)
		go io.Copy(io.Discard, out)
		prog := childOf(t, cmd.Process.Pid, "bash")
		start := time.Now()
		if how == "tool killed" {
			_ = cmd.Process.Kill()
		} else {
			_ = cmd.Process.Signal(os.Interrupt)
			time.Sleep(300 * time.Millisecond) // the program has had its SIGTERM and ignores it
			if !alive(prog) {
				t.Fatalf("the program did not ignore SIGTERM: the test proves nothing")
			}
			_ = cmd.Process.Signal(os.Interrupt)
		}
		err := cmd.Wait()
		for alive(prog) && time.Since(start) < 5*time.Second {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(prog) {
			t.Fatalf("%s: the traced program %d is still running 5 s after", how, prog)
		}
		if how == "tool killed" {
			continue
		}
		if code := exitOf(err); code != exitInterrupted || time.Since(start) > 5*time.Second {
			t.Errorf("exit code %d after %s, want %d within 5 s", code, time.Since(start), exitInterrupted)
		}
		b, rerr := os.ReadFile(filepath.Join(dir, "trace.json"))
		var tr result.Trace
		if rerr != nil || json.Unmarshal(b, &tr) != nil || !tr.Exit.Interrupted || tr.Exit.Signal != "SIGKILL" {
			t.Errorf("trace.json after two Ctrl-C (%v): %.300s", rerr, b)
		}
	}
}

// childOf is the pid of the child of parent whose command is name, waited for a little.
func childOf(t *testing.T, parent int, name string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			s := string(stat)
			// pid (comm) state ppid ...
			close := strings.LastIndexByte(s, ')')
			if close < 0 || !strings.Contains(s[:close], "("+name) {
				continue
			}
			f := strings.Fields(s[close+1:])
			if len(f) > 1 && f[1] == strconv.Itoa(parent) {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no child %s of %d", name, parent)
	return 0
}

// A plugin-loaded program that fills its buffers, on a runtime that allocates at first use (faultcl's lazy
// model, two devices of 32 MiB): traced with the defaults and through each way in, it fails where it fails
// untraced, and the trace names the fill on the same buffer the program prints.
func TestTraceOfAPluginFillFailure(t *testing.T) {
	const devMem = 32 << 20
	env := FaultEnv(t, "FAULTCL_MODEL=lazy", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", devMem))
	dir := filepath.Dir(Traceprog(t))
	argv := []string{filepath.Join(dir, "classhost"), filepath.Join(dir, "classprog-plugin.so"), "fill", strconv.Itoa(mib), "1000"}
	plain := runPlain(t, env, argv)
	idx, code := printedFailure(t, string(plain.stdout))
	if want := uint64(2 * devMem / mib); idx != want || code != -4 {
		t.Fatalf("untraced the program failed at #%d with %d, want #%d with -4", idx, code, want)
	}
	for _, via := range []string{"auto", "layer", "preload"} {
		tr, traced := traceQuietly(t, env, via, argv)
		f := tr.FirstFailure
		if !bytes.Equal(traced.stdout, plain.stdout) || !bytes.Equal(traced.stderr, plain.stderr) || f == nil || f.Call != "clEnqueueFillBuffer" ||
			f.Code != code || f.Buffer != result.BufferNewest || f.Index != idx+1 || !slices.Equal(tr.Verdict, findings.JudgeTrace(tr).Verdict()) {
			t.Errorf("--via %s: printed %q %q, first failure %+v, verdict %q; untraced %q", via, traced.stdout, traced.stderr, f, tr.Verdict, plain.stdout)
		}
	}
}
