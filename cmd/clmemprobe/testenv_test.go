// Test helpers that build and find what the end-to-end tests run: the clmemprobe binary, the fault-injection
// runtime, and PoCL with two devices. On CI (CLMEMPROBE_REQUIRE_OPENCL=1, set by .ci/run) a test that needs
// OpenCL fails instead of skipping.
package main

import (
	"bytes"

	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe"
)

// RequireEnv names the variable that turns skips for a missing OpenCL runtime into failures.
const RequireEnv = "CLMEMPROBE_REQUIRE_OPENCL"

// Root returns the repository root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("required by "+RequireEnv+"=1: "+format, args...)
	}
	t.Skipf(format, args...)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  string
	tmpRoot   string
)

func tmp() string {
	if tmpRoot == "" {
		tmpRoot, _ = os.MkdirTemp("", "clmemprobe-test-*")
	}
	return tmpRoot
}

// TestMain removes what the helpers built (the binary, the fault-injection runtime), so the tests leave
// nothing behind in the temporary folder.
func TestMain(m *testing.M) {
	// In-process tests (cli_test.go) run the command line in this process; its children are this test
	// binary, re-executed as the tool's own would be.
	if len(os.Args) > 1 && os.Args[1] == probe.ChildCommand {
		os.Exit(probe.RunChild(os.Stdin))
	}
	code := m.Run()
	if tmpRoot != "" {
		_ = os.RemoveAll(tmpRoot)
	}
	os.Exit(code)
}

// Binary builds clmemprobe once per test process (CGO_ENABLED=0, as shipped) and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binPath = filepath.Join(tmp(), "clmemprobe")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/clmemprobe")
		cmd.Dir = Root()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = string(out) + err.Error()
		}
	})
	if buildErr != "" {
		t.Fatalf("building clmemprobe: %s", buildErr)
	}
	return binPath
}

var (
	faultOnce sync.Once
	faultDir  string
	faultErr  string
)

// FaultCL builds the fault-injection runtime once and returns the folder to name in OCL_ICD_VENDORS.
func FaultCL(t testing.TB) string {
	t.Helper()
	faultOnce.Do(func() {
		out := filepath.Join(tmp(), "faultcl")
		cmd := exec.Command("bash", filepath.Join(Root(), "scripts", "faultcl", "build.sh"), out)
		b, err := cmd.CombinedOutput()
		if err != nil {
			faultErr = string(b) + err.Error()
			return
		}
		faultDir = strings.TrimSpace(string(b[bytes.LastIndexByte(bytes.TrimSpace(b), '\n')+1:]))
	})
	if faultErr != "" {
		skipOrFail(t, "cannot build the fault-injection runtime (needs cc and opencl-c-headers): %s", faultErr)
	}
	return faultDir
}

// PoCLEnv returns the environment for a run on PoCL with two devices, or skips (fails on CI) when PoCL or
// the ICD loader is missing.
func PoCLEnv(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob("/etc/OpenCL/vendors/*pocl*.icd")
	if len(files) == 0 {
		skipOrFail(t, "PoCL is not installed (apt-get install pocl-opencl-icd ocl-icd-libopencl1)")
	}
	return Env("POCL_DEVICES=pthread pthread", "OCL_ICD_VENDORS=/etc/OpenCL/vendors")
}

// FaultEnv returns the environment for a run on the fault-injection runtime with the given settings.
func FaultEnv(t testing.TB, settings ...string) []string {
	t.Helper()
	return Env(append([]string{"OCL_ICD_VENDORS=" + FaultCL(t)}, settings...)...)
}

// Env is the test process's environment without any OpenCL or faultcl setting, and with a UTF-8 locale and
// no terminal settings (so tables come out the same everywhere), plus extra.
func Env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "FAULTCL_") || strings.HasPrefix(kv, "OCL_ICD_") || strings.HasPrefix(kv, "POCL_") ||
			strings.HasPrefix(kv, "CLMEMPROBE_OPENCL_LIB=") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") ||
			strings.HasPrefix(kv, "NO_COLOR=") || strings.HasPrefix(kv, "TERM=") || strings.HasPrefix(kv, "COLUMNS=") {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "LANG=C.UTF-8"), extra...)
}
