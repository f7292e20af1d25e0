package trace

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CLMEMPROBE_REQUIRE_OPENCL") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

var (
	buildOnce          sync.Once
	layerPath, progBin string
	buildErr           error
	buildDir           string
)

// built builds the layer (into a cache of the test's own) and traceprog once.
func built(t *testing.T) (string, string) {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "clmemprobe-trace-test-*")
		if buildErr != nil {
			return
		}
		layerPath, buildErr = Layer(context.Background(), filepath.Join(buildDir, "cache"))
		if buildErr != nil {
			return
		}
		out, err := exec.Command("bash", filepath.Join(root(), "scripts", "traceprog", "build.sh"), filepath.Join(buildDir, "prog")).CombinedOutput()
		if err != nil {
			buildErr = &buildFailure{string(out) + err.Error()}
			return
		}
		progBin = strings.TrimSpace(string(out))
	})
	if buildErr != nil {
		skipOrFail(t, "cannot build the layer or traceprog (needs cc, opencl-c-headers, ocl-icd-opencl-dev): %v", buildErr)
	}
	return layerPath, progBin
}

type buildFailure struct{ out string }

func (b *buildFailure) Error() string { return b.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func pocl(t *testing.T) []string {
	t.Helper()
	if files, _ := filepath.Glob("/etc/OpenCL/vendors/*pocl*.icd"); len(files) == 0 {
		skipOrFail(t, "PoCL is not installed")
	}
	return cleanEnv("POCL_DEVICES=pthread pthread", "OCL_ICD_VENDORS=/etc/OpenCL/vendors")
}

func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "POCL_") || strings.HasPrefix(kv, "OCL_ICD_") || strings.HasPrefix(kv, "FAULTCL_") ||
			strings.HasPrefix(kv, "OPENCL_LAYERS=") || strings.HasPrefix(kv, "LD_PRELOAD=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// traced runs the program under the layer and returns the trace and what the program printed.
func traced(t *testing.T, env []string, via string, timeout time.Duration, args ...string) (*result.Trace, string) {
	t.Helper()
	layer, prog := built(t)
	var out bytes.Buffer
	way := via // auto is the loader's layers here: ocl-icd 2.3 loads them (the probe's tests ask it)
	if via == ViaAuto {
		way = result.WayLayer
	}
	tr, err := Run(context.Background(), Spec{Program: prog, Args: args, Env: env, Layer: layer, Via: via, Way: way,
		Timeout: timeout, Stdout: &out, Stderr: os.Stderr, SampleEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return tr, out.String()
}

// plain runs the program without the layer.
func plain(t *testing.T, env []string, args ...string) string {
	t.Helper()
	_, prog := built(t)
	cmd := exec.Command(prog, args...)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return string(out)
}

// The mixed program on PoCL, through each mechanism: it prints the same with the layer as without it (codes,
// errcode_ret NULL included), and the trace's first failure, contexts and live counts at the failure are what
// the program itself says.
func TestMixedOnPoCL(t *testing.T) {
	env := pocl(t)
	const size = 4096
	want := plain(t, env, "mixed", strconv.Itoa(size))
	for _, tc := range []struct{ via, mech string }{{ViaLayer, result.InterceptLayer}, {ViaPreload, result.InterceptPreload}, {ViaAuto, result.InterceptLayer}} {
		t.Run(tc.via, func(t *testing.T) {
			tr, got := traced(t, env, tc.via, time.Minute, "mixed", strconv.Itoa(size))
			if got != want {
				t.Fatalf("the program printed, traced:\n%s\nand without the layer:\n%s", got, want)
			}
			if tr.Interception != tc.mech {
				t.Fatalf("interception %q, want %q", tr.Interception, tc.mech)
			}
			checkMixed(t, tr, want, size)
		})
	}
}

func checkMixed(t *testing.T, tr *result.Trace, printed string, size uint64) {
	t.Helper()
	var idx uint64
	var code int32
	for _, l := range strings.Split(printed, "\n") {
		if rest, ok := strings.CutPrefix(l, "first failure: index "); ok {
			f := strings.Fields(rest)
			i, _ := strconv.ParseUint(f[0], 10, 64)
			c, _ := strconv.ParseInt(f[2], 10, 32)
			idx, code = i, int32(c)
		}
	}
	f := tr.FirstFailure
	if f == nil || f.Index != idx || f.Code != code || f.Call != "clCreateBuffer" || f.Context != 1 {
		t.Fatalf("first failure %+v; the program says index %d code %d (context 1, clCreateBuffer)", f, idx, code)
	}
	// Sub-buffers are not counted as bytes of their own; released buffers are gone.
	wantLive := []result.TraceLive{{Context: 0, Buffers: 2, Bytes: 2 * size}, {Context: 1, Buffers: 1, Bytes: 2 * size}}
	if len(f.Live) != 2 || f.Live[0] != wantLive[0] || f.Live[1] != wantLive[1] {
		t.Fatalf("live at the failure %+v, want %+v", f.Live, wantLive)
	}
	if len(tr.Contexts) != 2 || tr.Contexts[0].DeviceCount != 2 || tr.Contexts[1].DeviceCount != 2 || len(tr.Devices) != 2 {
		t.Fatalf("contexts %+v devices %+v, want 2 contexts of the 2 PoCL devices", tr.Contexts, tr.Devices)
	}
	for _, c := range tr.Contexts {
		if c.LiveBuffers != 0 || c.LiveBytes != 0 || c.ReleasedSeconds == nil {
			t.Fatalf("context %d at the end: %+v, want everything released", c.Index, c)
		}
	}
	if tr.Allocations != 8 || tr.CreatesFailed != 2 || tr.RecordsDropped != 0 {
		t.Fatalf("allocations %d, failed %d, dropped %d; want 8, 2, 0", tr.Allocations, tr.CreatesFailed, tr.RecordsDropped)
	}
	if tr.Exit.Code == nil || *tr.Exit.Code != 0 {
		t.Fatalf("exit %+v", tr.Exit)
	}
}

var (
	faultOnce sync.Once
	faultDir  string
	faultErr  error
)

// faultcl is the environment of the fault-injection runtime, built once, with settings.
func faultcl(t *testing.T, settings ...string) []string {
	t.Helper()
	built(t)
	faultOnce.Do(func() {
		out, err := exec.Command("bash", filepath.Join(root(), "scripts", "faultcl", "build.sh"), filepath.Join(buildDir, "faultcl")).CombinedOutput()
		if err != nil {
			faultErr = &buildFailure{string(out)}
			return
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		faultDir = lines[len(lines)-1]
	})
	if faultErr != nil {
		skipOrFail(t, "cannot build faultcl: %v", faultErr)
	}
	return cleanEnv(append([]string{"OCL_ICD_VENDORS=" + faultDir}, settings...)...)
}

// On faultcl, through the real loader, a create that fails at a chosen call: the trace's index, code and live
// count are the program's own, through both mechanisms.
func TestLoopOnFaultCL(t *testing.T) {
	const at = 37 // the 37th create fails: index 36
	env := faultcl(t, "FAULTCL_OOR_AT="+strconv.Itoa(at))
	for _, via := range []string{ViaLayer, ViaPreload} {
		tr, out := traced(t, env, via, time.Minute, "loop", "1048576")
		if want := fmt.Sprintf("first failure: index %d code -5\n", at-1); out != want {
			t.Fatalf("%s: the program printed %q, want %q", via, out, want)
		}
		f := tr.FirstFailure
		if f == nil || f.Index != at-1 || f.Code != -5 || f.CodeName != "CL_OUT_OF_RESOURCES" || f.Context != 0 ||
			len(f.Live) != 1 || f.Live[0].Buffers != at-1 || f.Live[0].Bytes != (at-1)<<20 || len(f.Devices) != 2 {
			t.Fatalf("%s: first failure %+v", via, f)
		}
		if tr.Allocations != at || tr.CreatesOK != at-1 || tr.Contexts[0].BuffersCreated != at-1 || tr.Contexts[0].PeakBytes != (at-1)<<20 {
			t.Fatalf("%s: allocations %d ok %d, context %+v", via, tr.Allocations, tr.CreatesOK, tr.Contexts[0])
		}
		if len(tr.Sequence) != 3 || tr.Sequence[1].Count != at-1 || tr.Sequence[2].Code != -5 {
			t.Fatalf("%s: sequence %+v, want the context, %d creates, the failure", via, tr.Sequence, at-1)
		}
	}
}

// A program that crashes after its first failure and one that never ends still leave whole traces: the
// failure kept, the signal or the timeout said.
func TestCrashAndHang(t *testing.T) {
	env := faultcl(t, "FAULTCL_OOR_AT=5")
	tr, _ := traced(t, env, ViaAuto, time.Minute, "crash", "1024")
	if tr.Exit.Signal != "SIGSEGV" || tr.Exit.Code != nil || tr.FirstFailure == nil || tr.FirstFailure.Index != 4 {
		t.Fatalf("crash: exit %+v, first failure %+v", tr.Exit, tr.FirstFailure)
	}
	tr, out := traced(t, env, ViaAuto, 2*time.Second, "forever", "1024", "3")
	if out != "created 3\n" || !tr.Exit.TimedOut || tr.Exit.Signal != "SIGTERM" || tr.Allocations != 3 || tr.FirstFailure != nil ||
		tr.Contexts[0].LiveBuffers != 3 {
		t.Fatalf("forever: printed %q, exit %+v, allocations %d, first failure %+v", out, tr.Exit, tr.Allocations, tr.FirstFailure)
	}
}

// A child that the program forks without exec has the parent's channel mapped and the parent's fast thread
// in it: it only forwards, and is counted as another process, so the trace holds the parent's creates alone.
func TestForkedChildOnFaultCL(t *testing.T) {
	env := faultcl(t)
	const parent, child = 30, 20
	for _, via := range []string{ViaLayer, ViaPreload} {
		tr, out := traced(t, env, via, time.Minute, "fork", strconv.Itoa(parent), strconv.Itoa(child))
		if want := fmt.Sprintf("parent %d child %d status 0\n", parent, child); out != want {
			t.Fatalf("%s: the program printed %q, want %q", via, out, want)
		}
		if tr.Allocations != parent || tr.OtherProcesses != 1 || len(tr.Contexts) != 1 || tr.Contexts[0].BuffersCreated != parent {
			t.Fatalf("%s: %d allocations, %d other processes, contexts %+v; want the parent's %d and 1", via, tr.Allocations, tr.OtherProcesses, tr.Contexts, parent)
		}
	}
}

// Threads that take turns (a mutex and a condition variable hand the turn on) make their calls in an order
// the program fixes: the first thread's calls go to the fast ring, counted in runs across the other threads'
// turns, the others' to the shared ring. The trace's sequence is the program's own order, call by call:
// the second context (made by a thread of the shared ring) before the first thread's buffers in it, and the
// first thread's run split wherever another thread's call came between.
func TestRelayOrderOnPoCL(t *testing.T) {
	env := pocl(t)
	for _, tc := range []struct {
		name            string
		threads, rounds int
	}{{"two threads", 2, 50}, {"five threads", 5, 40}} {
		for _, via := range []string{ViaLayer, ViaPreload} {
			args := []string{"relay", strconv.Itoa(tc.threads), strconv.Itoa(tc.rounds)}
			tr, out := traced(t, env, via, time.Minute, args...)
			if want := 2 + tc.threads*tc.rounds; strings.Count(out, "\n") != want {
				t.Fatalf("%s: the program printed %d lines, want %d:\n%s", tc.name, strings.Count(out, "\n"), want, out)
			}
			var seq strings.Builder
			for _, st := range tr.Sequence {
				for range st.Count {
					switch st.Call {
					case "clCreateContext":
						fmt.Fprintf(&seq, "context %d\n", st.Context)
					case "clCreateBuffer":
						fmt.Fprintf(&seq, "buffer context %d size %d\n", st.Context, st.Size)
					default:
						fmt.Fprintf(&seq, "%s\n", st.Call)
					}
				}
			}
			if seq.String() != out || tr.RecordsDropped != 0 {
				t.Fatalf("%s via %s: %d records dropped; the trace's sequence\n%s\nthe program's\n%s", tc.name, via, tr.RecordsDropped, seq.String(), out)
			}
		}
	}
}

// Threads that create and release at once, more of them than the layer has counter shards (31 of their
// own, then one shared with atomic operations): the counts stay exact.
func TestThreadsOnPoCL(t *testing.T) {
	env := pocl(t)
	for _, tc := range []struct{ threads, each int }{{8, 1001}, {40, 101}} {
		tr, out := traced(t, env, ViaLayer, time.Minute, "threads", strconv.Itoa(tc.threads), strconv.Itoa(tc.each))
		live := uint64(tc.threads * ((tc.each + 1) / 2))
		if want := fmt.Sprintf("live %d bytes %d\n", live, live*4096); out != want {
			t.Fatalf("the program printed %q, want %q", out, want)
		}
		c := tr.Contexts[0]
		if tr.Allocations != uint64(tc.threads*tc.each) || c.LiveBuffers != live || c.LiveBytes != live*4096 || tr.CreatesFailed != 0 ||
			(tr.RecordsDropped == 0 && c.BuffersCreated != tr.Allocations) {
			t.Fatalf("%d threads: allocations %d, context %+v, dropped %d", tc.threads, tr.Allocations, c, tr.RecordsDropped)
		}
	}
}

// The layer asks each device's PCI bus id once (cl_khr_pci_bus_info where the device lists it): faultcl
// answers it when told to, device i at bus 0x17 device i; listed but not answered, or not listed (PoCL's
// CPU devices, faultcl by default), the id is empty and the trace is whole, its device memory not measured
// and why.
func TestPCIBusIDs(t *testing.T) {
	const bus = 0x17
	for _, tc := range []struct {
		name    string
		env     []string
		want    []string
		sampler string
	}{
		{"answered", faultcl(t, "FAULTCL_PCI_BUS="+strconv.Itoa(bus)), []string{fmt.Sprintf("0000:%02x:00.0", bus), fmt.Sprintf("0000:%02x:01.0", bus)},
			"DRM fdinfo: the program has no DRM client with drm-total-* counters for its devices"},
		{"listed, not answered", faultcl(t, "FAULTCL_EXTENSIONS=cl_khr_pci_bus_info"), []string{"", ""}, "DRM fdinfo: traced device 1 has no PCI bus id"},
		{"not listed", faultcl(t), []string{"", ""}, "DRM fdinfo: traced device 1 has no PCI bus id"},
		{"PoCL", pocl(t), []string{"", ""}, "DRM fdinfo: traced device 1 has no PCI bus id"},
	} {
		tr, out := traced(t, tc.env, ViaAuto, time.Minute, "loop", "1048576", "20")
		var got []string
		for _, d := range tr.Devices {
			got = append(got, d.PCIBusID)
		}
		if out != "no failure\n" || tr.Allocations != 20 || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: printed %q, %d allocations, PCI ids %q; want %q", tc.name, out, tr.Allocations, got, tc.want)
		}
		if string(tr.DeviceSampler) != result.DeviceNotAvailable+tc.sampler || tr.DeviceMeasured() {
			t.Errorf("%s: device sampler %q, want %q", tc.name, tr.DeviceSampler, result.DeviceNotAvailable+tc.sampler)
		}
		for _, s := range tr.Samples {
			if len(s.DeviceSamples) != 0 || len(s.ProgramDevices) != 0 {
				t.Errorf("%s: a sample with device figures %+v", tc.name, s)
			}
		}
	}
}
