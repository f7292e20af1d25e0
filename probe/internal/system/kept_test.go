package system

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The package database's answer is kept in the cache folder and taken again while dpkg's status file, its
// folder of file lists and the libraries asked about are unchanged, and read again when one changes.
func TestPackagesAreKeptWhileTheDatabaseIsUnchanged(t *testing.T) {
	root := tree(t, h200)
	cache := t.TempDir()
	libs := []string{"libOpenCL.so.1", "libnvidia-opencl.so.1"}
	fresh := Collect(root, libs)
	first := CollectKeeping(root, libs, cache)
	if !reflect.DeepEqual(first.Packages, fresh.Packages) || !reflect.DeepEqual(first.Unowned, fresh.Unowned) || first.PackageManager != "dpkg" {
		t.Fatalf("kept collection differs from a fresh one: %+v against %+v", first, fresh)
	}
	// A list rewritten in place (dpkg never does: it renames a new one in, which changes the folder) is not
	// seen: the answer was kept. This is what tells a kept answer from one read again.
	list := filepath.Join(root.Var, "lib/dpkg/info/nvidia-opencl-icd.list")
	if err := os.WriteFile(list, []byte("/elsewhere/libnvidia-opencl.so.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if kept := CollectKeeping(root, libs, cache); !reflect.DeepEqual(kept.Packages, first.Packages) || !reflect.DeepEqual(kept.Unowned, first.Unowned) {
		t.Fatalf("second collection was read again: %+v", kept)
	}
	// Other libraries asked about: read again (the in-place change shows: the NVIDIA library is unowned).
	other := CollectKeeping(root, libs[1:], cache)
	if len(other.Unowned) != 1 || other.Unowned[0] != "libnvidia-opencl.so.1" {
		t.Errorf("with other libraries: unowned %v, want the NVIDIA library the changed list no longer holds", other.Unowned)
	}
	// The status file changed: read again.
	status := filepath.Join(root.Var, "lib/dpkg/status")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(status, later, later); err != nil {
		t.Fatal(err)
	}
	if again := CollectKeeping(root, libs, cache); len(again.Unowned) != 1 {
		t.Errorf("after the status file changed: unowned %v, want the library the changed list no longer holds", again.Unowned)
	}
}
