package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// trace keeps the ICD loader's "it loads layers" between traces and asks again once the loader's file or
// what chooses it changes. The loader here is a copy of the system's, on LD_LIBRARY_PATH, so that the test
// can change it.
func TestTraceKeepsTheLoadersAnswerWhileTheLoaderIsUnchanged(t *testing.T) {
	lib := t.TempDir()
	loader := filepath.Join(lib, "libOpenCL.so.1")
	copyFile(t, systemLoader(t), loader)
	cache := t.TempDir()
	env := append(PoCLEnv(t), "LD_LIBRARY_PATH="+lib, "XDG_CACHE_HOME="+cache)
	prog := Traceprog(t)
	trace := func(env []string) (kept bool) {
		t.Helper()
		dir := t.TempDir()
		res := runTool(t, env, "trace", "-q", "--out", dir, "--", prog, "loop", "4096", "3")
		tr, err := result.LoadTrace(filepath.Join(dir, "trace.json"))
		if err != nil || tr == nil || tr.WayIn != result.WayLayer {
			t.Fatalf("trace: exit %d, stderr %q: %v", res.code, res.stderr, err)
		}
		return tr.WayInKept
	}
	if trace(env) {
		t.Fatal("the first trace in a fresh cache says it kept the loader's answer")
	}
	if !trace(env) {
		t.Fatal("the second trace with the same loader asked the loader again")
	}
	// The loader's file changed (its modification time is enough): asked again, then kept again.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(loader, later, later); err != nil {
		t.Fatal(err)
	}
	if trace(env) {
		t.Fatal("a changed loader file was not asked again")
	}
	if !trace(env) {
		t.Fatal("the answer for the changed loader was not kept")
	}
	// Another runtime folder chooses what the loader loads: asked again.
	if trace(append(env, "OCL_ICD_VENDORS=/etc/OpenCL/vendors/")) {
		t.Fatal("a trace with another OCL_ICD_VENDORS took the answer kept for the first")
	}
}

// systemLoader is the ICD loader the dynamic linker finds for libOpenCL.so.1 on this machine.
func systemLoader(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu"} {
		if p, err := filepath.EvalSymlinks(filepath.Join(dir, "libOpenCL.so.1")); err == nil {
			return p
		}
	}
	skipOrFail(t, "no ICD loader (libOpenCL.so.1) installed (apt-get install ocl-icd-libopencl1)")
	return ""
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
