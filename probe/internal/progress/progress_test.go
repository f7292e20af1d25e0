package progress

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// helperEnv names the variable that turns this test binary, re-executed, into a helper process: the child
// that writes a cell it inherited, or a process whose file size limit makes every write fail.
const helperEnv = "PROGRESS_TEST_HELPER"

// TestMain runs the helper instead of the tests when this binary was re-executed as one.
func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(helperEnv); ok {
		os.Exit(helperMain(mode))
	}
	os.Exit(m.Run())
}

// helperMain is the helper process. "write" maps the cell on descriptor 3, as a worker child maps the file
// its parent passed, and stores COUNT and STAGE. "full" forbids this process to grow any file (RLIMIT_FSIZE
// 0, the way a full file system refuses a write) and prints what Create(DIR) returned.
func helperMain(mode string) int {
	switch mode {
	case "write":
		count, err1 := strconv.ParseUint(os.Getenv("COUNT"), 10, 64)
		stage, err2 := strconv.ParseUint(os.Getenv("STAGE"), 10, 64)
		c, err3 := Map(os.NewFile(3, "progress"))
		if err := errors.Join(err1, err2, err3); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		c.SetStage(stage)
		c.SetCount(count)
		return 0 // exits without Close, as a crashing child would
	case "full":
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		lim.Cur = 0
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		c, f, err := Create(os.Getenv("DIR"))
		fmt.Printf("efbig=%t nil=%t\n%v", errors.Is(err, syscall.EFBIG), c == nil && f == nil, err)
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 3
}

// runHelper re-executes this test binary as the helper of the given mode and returns what it printed.
func runHelper(t *testing.T, mode string, env []string, files ...*os.File) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), helperEnv+"="+mode), env...)
	cmd.ExtraFiles = files
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper %q: %v\n%s", mode, err, stderr.String())
	}
	return string(out)
}

// newCell creates a cell in a fresh folder and closes it and its file when the test ends.
func newCell(t *testing.T) (*Cell, *os.File, string) {
	t.Helper()
	dir := t.TempDir()
	c, f, err := Create(dir)
	if err != nil {
		t.Fatalf("Create(%q): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		f.Close()
	})
	return c, f, dir
}

// mapCell maps f as the child does and unmaps it when the test ends.
func mapCell(t *testing.T, f *os.File) *Cell {
	t.Helper()
	c, err := Map(f)
	if err != nil {
		t.Fatalf("Map: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close of the second mapping: %v", err)
		}
	})
	return c
}

// TestCreateLeavesNothingOnDisk holds that Create unlinks its backing file at once, sizes it to the whole
// page, and that a cell nobody wrote yet reports zero steps in stage zero.
func TestCreateLeavesNothingOnDisk(t *testing.T) {
	c, f, dir := newCell(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("folder %s holds %d entries after Create, want none (the file is unlinked at once)", dir, len(entries))
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != size {
		t.Errorf("cell file is %d bytes, want the whole page of %d", st.Size(), size)
	}
	if got := c.Count(); got != 0 {
		t.Errorf("fresh cell Count() = %d, want 0", got)
	}
	if got := c.Stage(); got != 0 {
		t.Errorf("fresh cell Stage() = %d, want 0", got)
	}
}

// TestTwoMappingsShareTheCell holds that what the child's mapping stores, the parent's mapping of the same
// file reads, each word on its own and over all 64 bits.
func TestTwoMappingsShareTheCell(t *testing.T) {
	parent, f, _ := newCell(t)
	child := mapCell(t, f)
	tests := []struct {
		name         string
		count, stage uint64
	}{
		{name: "zero", count: 0, stage: 0},
		{name: "first step", count: 1, stage: 2},
		{name: "count only", count: 17, stage: 0},
		{name: "stage only", count: 0, stage: 5},
		{name: "above 32 bits", count: 1<<32 + 3, stage: 1 << 40},
		{name: "largest", count: ^uint64(0), stage: ^uint64(0) - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			child.SetStage(tt.stage)
			child.SetCount(tt.count)
			if got := parent.Count(); got != tt.count {
				t.Errorf("parent Count() = %d, want %d", got, tt.count)
			}
			if got := parent.Stage(); got != tt.stage {
				t.Errorf("parent Stage() = %d, want %d", got, tt.stage)
			}
			if got := child.Count(); got != tt.count {
				t.Errorf("child Count() = %d, want %d", got, tt.count)
			}
			// The other direction: the parent's stores reach the child's view too.
			parent.SetCount(tt.count ^ 1)
			if got := child.Count(); got != tt.count^1 {
				t.Errorf("child Count() after the parent's store = %d, want %d", got, tt.count^1)
			}
			if got := child.Stage(); got != tt.stage {
				t.Errorf("child Stage() = %d after a count store, want %d unchanged", got, tt.stage)
			}
		})
	}
}

// TestConfirmedIsItsOwnWord: a child that confirms nothing leaves the parent no confirmed count (not a
// count of 0), one that confirms 0 gives 0, and the confirmed count is a word of its own beside the count
// and the stage.
func TestConfirmedIsItsOwnWord(t *testing.T) {
	parent, f, _ := newCell(t)
	child := mapCell(t, f)
	child.SetCount(99)
	if n, ok := parent.Confirmed(); ok {
		t.Fatalf("Confirmed() = %d, true before the child confirmed anything", n)
	}
	for _, want := range []uint64{0, 64, 1<<40 + 7} {
		child.SetConfirmed(want)
		if n, ok := parent.Confirmed(); !ok || n != want || parent.Count() != 99 || parent.Stage() != 0 {
			t.Errorf("Confirmed() = %d, %v with count %d and stage %d; want %d, true beside 99 and 0", n, ok, parent.Count(), parent.Stage(), want)
		}
	}
}

// TestMappingOutlivesItsDescriptor holds that a cell mapped from an inherited descriptor keeps working once
// that descriptor is closed, and that the parent still reads the last values after the child's mapping and
// every descriptor are gone (the child crashed).
func TestMappingOutlivesItsDescriptor(t *testing.T) {
	parent, f, _ := newCell(t)
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	inherited := os.NewFile(uintptr(fd), "progress")
	child, err := Map(inherited)
	if err != nil {
		t.Fatalf("Map of the inherited descriptor: %v", err)
	}
	if err := inherited.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	const count, stage = 41, 3
	child.SetStage(stage)
	child.SetCount(count)
	if err := child.Close(); err != nil {
		t.Errorf("Close of the child's mapping: %v", err)
	}
	if got := parent.Count(); got != count {
		t.Errorf("Count() after the child went = %d, want %d", got, count)
	}
	if got := parent.Stage(); got != stage {
		t.Errorf("Stage() after the child went = %d, want %d", got, stage)
	}
}

// TestChildProcessWritesParentReads holds the cell's purpose across a real process boundary: a child
// process maps the file it inherited, stores, and exits without closing; the parent reads its values.
func TestChildProcessWritesParentReads(t *testing.T) {
	parent, f, _ := newCell(t)
	const count, stage uint64 = 1<<33 + 9, 4
	runHelper(t, "write", []string{
		"COUNT=" + strconv.FormatUint(count, 10),
		"STAGE=" + strconv.FormatUint(stage, 10),
	}, f)
	if got := parent.Count(); got != count {
		t.Errorf("Count() = %d, want the child's %d", got, count)
	}
	if got := parent.Stage(); got != stage {
		t.Errorf("Stage() = %d, want the child's %d", got, stage)
	}
}

// TestMapRejectsUnusableDescriptors holds that Map returns a "progress cell" error, and no cell, for a
// descriptor it cannot map shared and writable, instead of panicking.
func TestMapRejectsUnusableDescriptors(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		open func(t *testing.T) *os.File
		want error // nil: any error
	}{
		{name: "closed file", want: os.ErrClosed, open: func(t *testing.T) *os.File {
			_, f, _ := newCell(t)
			f.Close()
			return f
		}},
		{name: "read-only file", want: syscall.EACCES, open: func(t *testing.T) *os.File {
			return open(t, plain, os.O_RDONLY)
		}},
		{name: "directory", open: func(t *testing.T) *os.File { return open(t, dir, os.O_RDONLY) }},
		{name: "pipe", open: func(t *testing.T) *os.File {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close(); w.Close() })
			return r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Map(tt.open(t))
			if err == nil {
				c.Close()
				t.Fatal("Map succeeded, want an error")
			}
			if c != nil {
				t.Errorf("Map returned a cell with its error %v", err)
			}
			if !strings.HasPrefix(err.Error(), "progress cell") {
				t.Errorf("error %q does not say it is about the progress cell", err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want one wrapping %v", err, tt.want)
			}
		})
	}
}

// open opens name with flag and closes it when the test ends.
func open(t *testing.T, name string, flag int) *os.File {
	t.Helper()
	f, err := os.OpenFile(name, flag, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestMapRejectsShortFile holds that a file shorter than the cell's page is refused by Map with an error,
// not mapped so that the first store faults.
func TestMapRejectsShortFile(t *testing.T) {
	tests := []struct {
		name string
		size int
	}{
		{name: "empty", size: 0},
		{name: "one word", size: 8},
		{name: "one byte short", size: size - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "short")
			if err := os.WriteFile(name, make([]byte, tt.size), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := Map(open(t, name, os.O_RDWR))
			if err == nil {
				c.Close()
				t.Fatalf("Map of a %d-byte file succeeded, want an error", tt.size)
			}
			if !strings.HasPrefix(err.Error(), "progress cell") {
				t.Errorf("error %q does not say it is about the progress cell", err)
			}
		})
	}
}

// TestCreateRejectsMissingFolder holds that Create in a folder that does not exist, or in a path that is a
// file, returns a "progress cell" error and neither cell nor file.
func TestCreateRejectsMissingFolder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
		want error // nil: any error
	}{
		{name: "missing folder", dir: filepath.Join(dir, "missing"), want: fs.ErrNotExist},
		{name: "a file, not a folder", dir: file, want: syscall.ENOTDIR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, f, err := Create(tt.dir)
			if err == nil {
				c.Close()
				f.Close()
				t.Fatalf("Create(%q) succeeded, want an error", tt.dir)
			}
			if c != nil || f != nil {
				t.Errorf("Create returned a cell or file with its error %v", err)
			}
			if !strings.HasPrefix(err.Error(), "progress cell") {
				t.Errorf("error %q does not say it is about the progress cell", err)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %v, want one wrapping %v", err, tt.want)
			}
		})
	}
}

// TestCreateReportsFullFileSystem holds that when the page cannot be written, Create fails with an error
// that wraps the write's, names the folder it tried and suggests a remedy, and leaves no file behind.
func TestCreateReportsFullFileSystem(t *testing.T) {
	tests := []struct {
		name string
		dir  bool // Create in a folder of its own rather than "" (the temporary folder)
	}{
		{name: "temporary folder"},
		{name: "folder given", dir: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp, where := t.TempDir(), ""
			if tt.dir {
				where = t.TempDir()
			}
			out := runHelper(t, "full", []string{"TMPDIR=" + tmp, "DIR=" + where})
			flags, msg, _ := strings.Cut(out, "\n")
			if flags != "efbig=true nil=true" {
				t.Errorf("helper reports %q, want the write's EFBIG wrapped and no cell or file (message %q)", flags, msg)
			}
			folder := tmp
			if tt.dir {
				folder = where
			}
			if !strings.HasPrefix(msg, "progress cell in "+folder+":") {
				t.Errorf("error %q does not name the folder %s", msg, folder)
			}
			if !strings.Contains(msg, "free some space") {
				t.Errorf("error %q suggests no remedy", msg)
			}
			if entries, err := os.ReadDir(folder); err != nil || len(entries) != 0 {
				t.Errorf("folder %s after the failed Create: %d entries (err %v), want none", folder, len(entries), err)
			}
		})
	}
}
