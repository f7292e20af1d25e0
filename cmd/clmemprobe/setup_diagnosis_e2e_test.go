package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// neoLibrary is where Debian's intel-opencl-icd puts Intel's runtime; scripts/setup.sh --tests installs it
// without registering it, so only these tests' own .icd files name it.
const neoLibrary = "/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so"

// What the diagnosis says of each runtime that gave nothing: the reason, then what to do.
const (
	neoNoPlatform = "loaded, and reported no platform: Intel's compute-runtime (NEO) needs a GPU's device node and none exists " +
		"(no GPU of its vendor, or its kernel driver, i915 or xe, is not loaded)"
	libraryMissing = "the library does not exist; install the runtime's package again, or remove the .icd file"
	libraryOffPath = "the library is not on the library path (ldconfig -p does not list it); install the runtime's package again, or remove the .icd file"
)

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
	res := runTool(t, Env("OCL_ICD_VENDORS="+dir), "devices", "--format", "json")
	var inv result.Inventory
	if err := json.Unmarshal([]byte(res.stdout), &inv); err != nil || res.code != 0 || len(inv) != 1 || inv[0].Platform.Name != "faultcl" || len(inv[0].Devices) == 0 {
		t.Fatalf("exit %d, %v; stdout:\n%s\nstderr:\n%s", res.code, err, res.stdout, res.stderr)
	}
	// One whole line per runtime that gave nothing, in the order of their files, and none for faultcl.
	say := func(file, lib, why string) string {
		return "clmemprobe: a registered runtime gave no device: " + filepath.Join(dir, file) + " (" + lib + "): " + why + "\n"
	}
	want := say("broken.icd", broken, "the dynamic linker refused it: libclmemprobe-gone.so: cannot open shared object file: No such file or directory; "+
		"install the package that provides what it names") +
		say("intel.icd", neoLibrary, neoNoPlatform) + say("missing.icd", "/nonexistent/libclmemprobe-missing.so", libraryMissing)
	if res.stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", res.stderr, want)
	}
}

// With only runtimes that give nothing registered, the error names each and why, one line each, and never
// says that no runtime is registered; exit code 3 as for any missing device.
func TestNoPlatformNamesEachRegisteredRuntime(t *testing.T) {
	needNEO(t)
	dir := registered(t, map[string]string{"missing": "libclmemprobe-missing-opencl.so", "intel": neoLibrary})
	for _, args := range [][]string{{"devices"}, {"run", "--max-allocs", "10"}} {
		res := runTool(t, Env("OCL_ICD_VENDORS="+dir), args...)
		// The error, then one line per registered runtime: its .icd file, its library and why.
		want := "clmemprobe: no OpenCL: libOpenCL.so.1 loaded but reports no platform; what each runtime registered in " + dir + " gave:\n" +
			"  " + filepath.Join(dir, "intel.icd") + " (" + neoLibrary + "): " + neoNoPlatform + "\n" +
			"  " + filepath.Join(dir, "missing.icd") + " (libclmemprobe-missing-opencl.so): " + libraryOffPath + "\n"
		if res.code != exitNoOpenCL || res.stderr != want {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant %d and:\n%s", args, res.code, res.stderr, exitNoOpenCL, want)
		}
	}
	// With none registered at all, that is what it says.
	none := t.TempDir()
	errorLine(t, runTool(t, Env("OCL_ICD_VENDORS="+none), "devices"), exitNoOpenCL, "clmemprobe: no OpenCL: libOpenCL.so.1 loaded but reports no platform: "+
		"no vendor runtime is registered in "+none+"; install one (Debian/Ubuntu: apt-get install pocl-opencl-icd for the CPU, or your GPU vendor's OpenCL package), "+
		"or point OCL_ICD_VENDORS at its .icd file")
}

// A runtime that crashes while it is asked for its platforms is one line, a crash, and the others are
// still asked.
func TestARuntimeThatCrashesIsOneLine(t *testing.T) {
	faultcl := strings.TrimSpace(readFile(t, filepath.Join(FaultCL(t), "faultcl.icd")))
	dir := registered(t, map[string]string{"crashing": faultcl, "missing": "/nonexistent/libclmemprobe-missing.so"})
	res := runTool(t, Env("OCL_ICD_VENDORS="+dir, "FAULTCL_CRASH_IN=clGetPlatformIDs"), "env", "--format", "json")
	var e result.Environment
	if err := json.Unmarshal([]byte(res.stdout), &e); err != nil {
		t.Fatalf("exit %d, %v; stderr:\n%s", res.code, err, res.stderr)
	}
	var got []string
	for _, s := range e.ICDStatus {
		got = append(got, filepath.Base(s.File)+" "+string(s.Outcome))
	}
	// Both asked: the crash is the one runtime's outcome, and the other's is its own.
	if want := []string{"crashing.icd crashed", "missing.icd not-found"}; !slices.Equal(got, want) {
		t.Errorf("runtimes %v, want %v", got, want)
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
