package trace

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed" // the layer's C source
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

//go:embed layer/clmemprobe_layer.c
var layerSource []byte

// cflags build the layer; they are part of the cache key. On amd64, -mprfchw lets the ring's prefetch be a
// prefetch for writing (PREFETCHW, a no-op where the processor lacks it).
var cflags = append([]string{"-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-pthread", "-Wall"}, archFlags[runtime.GOARCH]...)

var archFlags = map[string][]string{"amd64": {"-mprfchw"}}

// ErrNoCompiler and ErrNoHeaders say what the machine lacks to build the layer; their messages say what to
// install.
var (
	ErrNoCompiler = errors.New("no C compiler to build the trace layer: install gcc (Debian/Ubuntu: apt-get install gcc libc6-dev)")
	ErrNoHeaders  = errors.New("no OpenCL headers to build the trace layer: install them (Debian/Ubuntu: apt-get install opencl-c-headers)")
)

// CacheDir is the user's own cache folder for the layer: $XDG_CACHE_HOME/clmemprobe, else
// ~/.cache/clmemprobe (os.UserCacheDir).
func CacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for the trace layer: %w (set XDG_CACHE_HOME or HOME)", err)
	}
	return filepath.Join(d, "clmemprobe"), nil
}

// Layer returns the path of the layer built from this source with this machine's compiler, building it into
// dir first where it is not there yet. dir is made 0700; a dir, a file or a folder above them that another
// user can write (or that someone else owns) is refused: a layer there could be swapped under the tool, and
// it runs inside the user's program.
func Layer(ctx context.Context, dir string) (string, error) {
	cc, ident, err := compiler(ctx)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("trace layer cache %s: %w", dir, err)
	}
	if err := Safe(dir); err != nil {
		return "", err
	}
	sum := sha256.New()
	sum.Write(layerSource)
	fmt.Fprintf(sum, "\x00%s\x00%s", ident, strings.Join(cflags, " "))
	path := filepath.Join(dir, "clmemprobe-layer-"+hex.EncodeToString(sum.Sum(nil))[:24]+".so")
	if _, err := os.Lstat(path); err == nil {
		return path, Safe(path)
	}
	if err := build(ctx, cc, dir, path); err != nil {
		return "", err
	}
	return path, Safe(path)
}

// compiler finds $CC (else cc) and its identity: its resolved path and what it says of its version.
func compiler(ctx context.Context) (string, string, error) {
	name := os.Getenv("CC")
	if name == "" {
		name = "cc"
	}
	cc, err := exec.LookPath(name)
	if err != nil {
		return "", "", ErrNoCompiler
	}
	real, err := filepath.EvalSymlinks(cc)
	if err != nil {
		real = cc
	}
	out, err := exec.CommandContext(ctx, cc, "--version").Output()
	if err != nil {
		return "", "", fmt.Errorf("%w (%s --version: %v)", ErrNoCompiler, cc, err)
	}
	first, _, _ := bytes.Cut(out, []byte("\n"))
	return cc, real + "\x00" + string(first), nil
}

// build compiles the layer under a temporary name in dir and renames it into place, so that a build that
// fails or races another leaves either no layer or a whole one.
func build(ctx context.Context, cc, dir, path string) error {
	src, err := os.CreateTemp(dir, ".layer-*.c")
	if err != nil {
		return fmt.Errorf("trace layer cache %s: %w", dir, err)
	}
	defer os.Remove(src.Name())
	if _, err := src.Write(layerSource); err != nil {
		src.Close()
		return fmt.Errorf("trace layer cache %s: %w", dir, err)
	}
	if err := src.Close(); err != nil {
		return fmt.Errorf("trace layer cache %s: %w", dir, err)
	}
	tmp := strings.TrimSuffix(src.Name(), ".c") + ".so"
	defer os.Remove(tmp)
	args := append(append([]string{}, cflags...), "-o", tmp, src.Name(), "-ldl", "-lm")
	out, err := exec.CommandContext(ctx, cc, args...).CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("CL/cl")) && bytes.Contains(out, []byte("No such file")) {
			return ErrNoHeaders
		}
		return fmt.Errorf("building the trace layer with %s failed: %v: %s", cc, err, firstError(out))
	}
	if err := os.Chmod(tmp, 0o700); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// firstError is the compiler's first error line, which names the cause (the lines after it quote the
// source), else its last line.
func firstError(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, l := range lines {
		if strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return lines[len(lines)-1]
}

// Safe says whether path and every folder above it can be changed by this user and root only: owned by one
// of them and not writable by group or others, except a sticky folder (such as /tmp), where others may
// add entries but not replace ours.
func Safe(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	uid := uint32(os.Getuid())
	for p := abs; ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("trace layer: %w", err)
		}
		if err := safeEntry(p, fi, uid, p == abs); err != nil {
			return err
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

func safeEntry(p string, fi fs.FileInfo, uid uint32, leaf bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("trace layer: cannot tell who owns %s", p)
	}
	if st.Uid != uid && st.Uid != 0 {
		return fmt.Errorf("trace layer: %s belongs to user %d, not to you: the layer is not loaded from there", p, st.Uid)
	}
	if fi.Mode()&fs.ModeSymlink != 0 && leaf {
		return fmt.Errorf("trace layer: %s is a symbolic link: the layer is not loaded through one", p)
	}
	sticky := fi.IsDir() && fi.Mode()&fs.ModeSticky != 0
	if fi.Mode().Perm()&0o022 != 0 && !sticky {
		return fmt.Errorf("trace layer: %s can be written by other users (mode %04o): the layer is not loaded from there", p, fi.Mode().Perm())
	}
	return nil
}
