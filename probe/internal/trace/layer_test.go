package trace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The layer is built once per source and compiler: a second call finds it and builds nothing (the file's
// modification time stays), and it is named by the hash, in a 0700 folder.
func TestLayerCached(t *testing.T) {
	built(t)
	dir := filepath.Join(t.TempDir(), "cache")
	first, err := Layer(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	fi1, _ := os.Stat(first)
	again, err := Layer(context.Background(), dir)
	fi2, _ := os.Stat(again)
	if err != nil || again != first || !fi1.ModTime().Equal(fi2.ModTime()) {
		t.Fatalf("second call: %s (%v), first %s; modified %v -> %v", again, err, first, fi1.ModTime(), fi2.ModTime())
	}
	d, _ := os.Stat(dir)
	if d.Mode().Perm() != 0o700 || !strings.HasPrefix(filepath.Base(first), "clmemprobe-layer-") {
		t.Fatalf("cache %s mode %04o, layer %s", dir, d.Mode().Perm(), first)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("the cache holds %d entries, want the layer alone (no temporary file left)", len(entries))
	}
}

// A layer or folder others can write is never used.
func TestUnsafePlacesRefused(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil { // MkdirAll's mode passes through the umask
		t.Fatal(err)
	}
	if _, err := Layer(context.Background(), filepath.Join(open, "cache")); err == nil || err.Error() != "trace layer: "+open+" can be written by other users (mode 0777): the layer is not loaded from there" {
		t.Fatalf("a cache under a world-writable folder: %v", err)
	}
	lib := filepath.Join(dir, "lib.so")
	if err := os.WriteFile(lib, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(lib, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := Safe(lib); err == nil {
		t.Fatal("a group- and world-writable layer file passed")
	}
	link := filepath.Join(dir, "link.so")
	if err := os.Symlink(lib, link); err != nil {
		t.Fatal(err)
	}
	if err := Safe(link); err == nil || err.Error() != "trace layer: "+link+" is a symbolic link: the layer is not loaded through one" {
		t.Fatalf("a symbolic link: %v", err)
	}
	if err := Safe(dir); err != nil {
		t.Fatalf("the test's own folder under the sticky temporary folder: %v", err)
	}
}

// Without a compiler, or without the headers, the error says what to install.
func TestWhatToInstall(t *testing.T) {
	t.Setenv("CC", filepath.Join(t.TempDir(), "no-such-cc"))
	if _, err := Layer(context.Background(), t.TempDir()); !errors.Is(err, ErrNoCompiler) ||
		err.Error() != "no C compiler to build the trace layer: install gcc (Debian/Ubuntu: apt-get install gcc libc6-dev)" {
		t.Fatalf("no compiler: %v", err)
	}
	fake := filepath.Join(t.TempDir(), "cc")
	script := "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'fake cc 1.0'; exit 0; }\necho 'x.c:1:10: fatal error: CL/cl.h: No such file or directory' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CC", fake)
	if _, err := Layer(context.Background(), t.TempDir()); !errors.Is(err, ErrNoHeaders) ||
		err.Error() != "no OpenCL headers to build the trace layer: install them (Debian/Ubuntu: apt-get install opencl-c-headers)" {
		t.Fatalf("no headers: %v", err)
	}
}
