package icd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Registered reads the folder OCL_ICD_VENDORS names, each file's first line, bounded; a file that is not
// one line of text (a binary, a line longer than any path, a folder named .icd, a link to nothing) gives
// an empty or bounded library name, never an error or a hang.
func TestRegisteredReadsEachFilesFirstLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.icd", "  libA.so  \nsecond line\n")
	write("binary.icd", "\x00\x01\xff\xfe")
	write("long.icd", strings.Repeat("x", 1<<20))
	write("not-icd.txt", "libNot.so\n")
	if err := os.Mkdir(filepath.Join(dir, "folder.icd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nothing"), filepath.Join(dir, "dangling.icd")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OCL_ICD_VENDORS", dir)
	got, files := Registered("/nonexistent-etc")
	if got != dir {
		t.Errorf("read %q, want %q", got, dir)
	}
	libs := map[string]string{}
	for _, f := range files {
		libs[filepath.Base(f.Path)] = f.Library
	}
	if len(libs) != 5 || libs["a.icd"] != "libA.so" || libs["dangling.icd"] != "" || libs["folder.icd"] != "" {
		t.Errorf("files %v", libs)
	}
	if _, ok := libs["not-icd.txt"]; ok {
		t.Error("a file not named .icd was read")
	}
	if len(libs["long.icd"]) > 4096 {
		t.Errorf("a library name of %d bytes was kept", len(libs["long.icd"]))
	}
	// OCL_ICD_VENDORS may name one file; unset, the folder under etc is read.
	t.Setenv("OCL_ICD_VENDORS", filepath.Join(dir, "a.icd"))
	if _, files := Registered("/x"); len(files) != 1 || files[0].Library != "libA.so" {
		t.Errorf("one file: %v", files)
	}
	t.Setenv("OCL_ICD_VENDORS", "")
	etc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(etc, "OpenCL", "vendors"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "OpenCL", "vendors", "b.icd"), []byte("libB.so\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, files := Registered(etc); got != filepath.Join(etc, "OpenCL", "vendors") || len(files) != 1 || files[0].Library != "libB.so" {
		t.Errorf("under etc: %q %v", got, files)
	}
}

// The runtimes that need a GPU's device node are known by their library's name, wherever it is installed;
// PoCL is not among them.
func TestNeedOf(t *testing.T) {
	for lib, vendor := range map[string]string{
		"/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so": "NEO",
		"libamdocl64.so":              "ROCm",
		"libnvidia-opencl.so.1":       "NVIDIA",
		"libRusticlOpenCL.so.1":       "rusticl",
		"libpocl.so.2.10.0":           "",
		"/opt/x/libOpenCL-bundled.so": "",
	} {
		n, ok := NeedOf(lib)
		if ok != (vendor != "") || !strings.Contains(n.Vendor, vendor) {
			t.Errorf("%s: %+v %v, want %q", lib, n, ok, vendor)
		}
	}
}

// Nodes lists the nodes that match a need's patterns under a /dev tree, each with its owning group.
func TestNodesUnderADevTree(t *testing.T) {
	dev := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dev, "dri"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"dri/renderD129", "dri/renderD128", "dri/card0", "kfd"} {
		if err := os.WriteFile(filepath.Join(dev, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	need, _ := NeedOf("libamdocl64.so")
	nodes := Nodes(dev, need)
	var paths []string
	for _, n := range nodes {
		paths = append(paths, strings.TrimPrefix(n.Path, dev+"/"))
		if n.Group == "" {
			t.Errorf("%s: no group", n.Path)
		}
	}
	if strings.Join(paths, " ") != "kfd dri/renderD128 dri/renderD129" {
		t.Errorf("nodes %v", paths)
	}
	if len(Nodes(t.TempDir(), need)) != 0 {
		t.Error("nodes found in an empty /dev")
	}
}
