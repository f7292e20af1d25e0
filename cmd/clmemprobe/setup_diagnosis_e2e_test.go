package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// neoLibrary is where Debian's intel-opencl-icd puts Intel's runtime; scripts/setup.sh --tests installs it
// without registering it, so only these tests' own .icd files name it.
const neoLibrary = "/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so"

// registered writes a folder of .icd files, name to the library each names, for OCL_ICD_VENDORS.
func registered(t *testing.T, icds map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, lib := range icds {
		if err := os.WriteFile(filepath.Join(dir, name+".icd"), []byte(lib+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// brokenRuntime builds a library that links a library it then removes: the dynamic linker refuses it and
// names the missing one.
func brokenRuntime(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := map[string]string{"stub.c": "void f(void) {}\n", "rt.c": "void f(void);\nvoid clGetExtensionFunctionAddress(void) { f(); }\n"}
	for name, text := range src {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-o", "libclmemprobe-gone.so", "stub.c"},
		{"-shared", "-fPIC", "-o", "libbroken-runtime.so", "rt.c", "-L.", "-lclmemprobe-gone"},
	} {
		cmd := exec.Command("cc", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			skipOrFail(t, "cannot build the broken runtime (needs cc): %s%v", out, err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "libclmemprobe-gone.so")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "libbroken-runtime.so")
}

func needNEO(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(neoLibrary); err != nil {
		skipOrFail(t, "Intel's runtime is not installed (scripts/setup.sh --tests installs intel-opencl-icd): %v", err)
	}
}

// With a working runtime, a library that does not exist, one the dynamic linker refuses, and Intel's
// runtime on a machine without an Intel GPU registered, devices lists the working one and says on stderr,
// one line each, why every other gave nothing.
func TestDevicesSaysWhyEachRuntimeGaveNothing(t *testing.T) {
	needNEO(t)
	broken := brokenRuntime(t)
	faultcl := strings.TrimSpace(readFile(t, filepath.Join(FaultCL(t), "faultcl.icd")))
	dir := registered(t, map[string]string{"faultcl": faultcl, "missing": "/nonexistent/libclmemprobe-missing.so",
		"broken": broken, "intel": neoLibrary})
	res := runTool(t, Env("OCL_ICD_VENDORS="+dir), "devices")
	if res.code != 0 || !strings.Contains(res.stdout, "faultcl device 0") {
		t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
	want := map[string]string{
		"missing.icd": "the library does not exist",
		"broken.icd":  "libclmemprobe-gone.so: cannot open shared object file",
		"intel.icd":   "reported no platform: Intel's compute-runtime (NEO) needs a GPU's device node",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines on stderr, want one per runtime that gave nothing (%d):\n%s", len(lines), len(want), res.stderr)
	}
	for file, words := range want {
		found := false
		for _, l := range lines {
			found = found || (strings.Contains(l, filepath.Join(dir, file)) && strings.Contains(l, words))
		}
		if !found {
			t.Errorf("no line says %s: %q:\n%s", file, words, res.stderr)
		}
	}
	if strings.Contains(res.stderr, "faultcl.icd") {
		t.Errorf("the runtime that gave devices is said to have given nothing:\n%s", res.stderr)
	}
}

// With only runtimes that give nothing registered, the error names each and why, one line each, and never
// says that no runtime is registered; exit code 3 as for any missing device.
func TestNoPlatformNamesEachRegisteredRuntime(t *testing.T) {
	needNEO(t)
	dir := registered(t, map[string]string{"missing": "libclmemprobe-missing-opencl.so", "intel": neoLibrary})
	for _, args := range [][]string{{"devices"}, {"run", "--max-allocs", "10"}} {
		res := runTool(t, Env("OCL_ICD_VENDORS="+dir), args...)
		if res.code != exitNoOpenCL || strings.Contains(res.stderr, "no vendor runtime is registered") {
			t.Errorf("%v: exit %d, stderr:\n%s", args, res.code, res.stderr)
		}
		lines := strings.Split(strings.TrimSpace(res.stderr), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "clmemprobe: no OpenCL: ") {
			t.Fatalf("%v: want the error and one line per registered runtime:\n%s", args, res.stderr)
		}
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, "  "+dir) {
				t.Errorf("%v: a runtime's line does not start with its .icd file: %q", args, l)
			}
		}
		if !strings.Contains(res.stderr, "is not on the library path") || !strings.Contains(res.stderr, "none exists") {
			t.Errorf("%v: the reasons are not said:\n%s", args, res.stderr)
		}
	}
	// With none registered at all, that is what it says.
	res := runTool(t, Env("OCL_ICD_VENDORS="+t.TempDir()), "devices")
	if res.code != exitNoOpenCL || !strings.Contains(res.stderr, "no vendor runtime is registered in") {
		t.Errorf("none registered: exit %d, stderr:\n%s", res.code, res.stderr)
	}
}

// A runtime that crashes while it is asked for its platforms is one line, a crash, and the others are
// still asked.
func TestARuntimeThatCrashesIsOneLine(t *testing.T) {
	faultcl := strings.TrimSpace(readFile(t, filepath.Join(FaultCL(t), "faultcl.icd")))
	dir := registered(t, map[string]string{"crashing": faultcl, "missing": "/nonexistent/libclmemprobe-missing.so"})
	res := runTool(t, Env("OCL_ICD_VENDORS="+dir, "FAULTCL_CRASH_IN=clGetPlatformIDs"), "env")
	if !strings.Contains(res.stdout, "crashing.icd") || !strings.Contains(res.stdout, "crashed with SIGSEGV") ||
		!strings.Contains(res.stdout, "the library does not exist") {
		t.Errorf("exit %d; stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
