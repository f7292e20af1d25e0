package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/renameio/v2"
)

// content writes s, as a renderer would.
func content(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// read is the file's content, or why there is none.
func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return string(b)
}

// noTemporaryFiles fails when a temporary file is left in dir: a hidden name, as renameio gives them
// ("." and the file's name before its random part), other than a lock's.
func noTemporaryFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != LockName {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// A file is written new, with mode 0644 whatever the umask, and replaces the one before it.
func TestWriteFileCreatesAndReplaces(t *testing.T) {
	for _, umask := range []int{0o000, 0o077} {
		old := syscall.Umask(umask)
		t.Cleanup(func() { syscall.Umask(old) })
		dir := t.TempDir()
		path := filepath.Join(dir, "run.json")
		for _, want := range []string{"first", "second, longer than the first"} {
			if err := WriteFile(path, content(want)); err != nil {
				t.Fatal(err)
			}
			if got := read(t, path); got != want {
				t.Errorf("umask %03o: %q, want %q", umask, got, want)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != Mode {
				t.Errorf("umask %03o: mode %v (%v), want %v", umask, fi.Mode().Perm(), err, fs.FileMode(Mode))
			}
		}
		noTemporaryFiles(t, dir)
	}
}

// A symlink where the file goes is replaced by the file; what it pointed to is left as it was.
func TestWriteFileReplacesASymlinkWithoutFollowingIt(t *testing.T) {
	dir := t.TempDir()
	victim, path := filepath.Join(dir, "victim"), filepath.Join(dir, "run.json")
	if err := os.WriteFile(victim, []byte("someone's file"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, content("result")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, victim); got != "someone's file" {
		t.Errorf("the link was followed: its target holds %q", got)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || read(t, path) != "result" {
		t.Errorf("%s is %v (%v), want a plain file with the result", path, fi.Mode(), err)
	}
}

// The temporary file is made in the file's own folder, never in $TMPDIR (renameio's first choice where a
// rename from there works): a crash leaves it beside the result, where the next write's folder is.
func TestTemporaryFileIsInTheFilesFolder(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	path := filepath.Join(dir, "run.json")
	if err := WriteFile(path, func(w io.Writer) error {
		for _, d := range []struct {
			dir  string
			want int
		}{{dir, 1}, {tmp, 0}} {
			if entries, err := os.ReadDir(d.dir); err != nil || len(entries) != d.want {
				t.Errorf("%s holds %d files while the file is written (%v), want %d", d.dir, len(entries), err, d.want)
			}
		}
		_, err := io.WriteString(w, "result")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "result" {
		t.Errorf("%q, want the result", got)
	}
}

// A folder or a FIFO where the file goes is not replaced: the write fails and leaves it, and no temporary
// file, behind.
func TestWriteFileRefusesWhatIsNotAPlainFile(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(path string) error
	}{
		{name: "a folder", make: func(path string) error { return os.Mkdir(path, 0o755) }},
		{name: "a FIFO", make: func(path string) error { return syscall.Mkfifo(path, 0o644) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "run.json")
			if err := c.make(path); err != nil {
				t.Skip(err)
			}
			before, _ := os.Lstat(path)
			err := WriteFile(path, content("result"))
			if err == nil || !strings.Contains(err.Error(), "not a plain file") {
				t.Errorf("error %v, want it to say the name is not a plain file", err)
			}
			if after, lerr := os.Lstat(path); lerr != nil || after.Mode() != before.Mode() {
				t.Errorf("%s was replaced: %v (%v)", c.name, after.Mode(), lerr)
			}
			noTemporaryFiles(t, dir)
		})
	}
}

// failing is a temporary file on a disk that fails: writes past room bytes fail as a full disk does (the
// bytes that fit are written), and a sync fails where syncErr is set. ops records the writes, syncs and
// commits in order. It has only tempFile's methods, so no write can go around it.
type failing struct {
	f       *renameio.PendingFile
	room    int
	syncErr error
	ops     *[]string
}

func (f *failing) Write(p []byte) (int, error) {
	*f.ops = append(*f.ops, "write")
	if len(p) <= f.room {
		f.room -= len(p)
		return f.f.Write(p)
	}
	n, _ := f.f.Write(p[:f.room])
	f.room = 0
	return n, &fs.PathError{Op: "write", Path: f.f.Name(), Err: syscall.ENOSPC}
}

func (f *failing) Sync() error {
	*f.ops = append(*f.ops, "sync")
	if f.syncErr != nil {
		return f.syncErr
	}
	return f.f.Sync()
}

// CloseAtomicallyReplace is renameio's, whose first step is the sync: where syncErr is set it fails as
// renameio's does when that sync fails, before the rename, with the file still open.
func (f *failing) CloseAtomicallyReplace() error {
	*f.ops = append(*f.ops, "commit")
	if f.syncErr != nil {
		return f.syncErr
	}
	return f.f.CloseAtomicallyReplace()
}

func (f *failing) Cleanup() error                            { return f.f.Cleanup() }
func (f *failing) Name() string                              { return f.f.Name() }
func (f *failing) Close() error                              { return f.f.Close() }
func (f *failing) Truncate(size int64) error                 { return f.f.Truncate(size) }
func (f *failing) Seek(off int64, whence int) (int64, error) { return f.f.Seek(off, whence) }

// onFailingDisk makes the writers' temporary files failing ones, for the test.
func onFailingDisk(t *testing.T, room int, syncErr error) *[]string {
	ops := &[]string{}
	orig := newTemp
	t.Cleanup(func() { newTemp = orig })
	newTemp = func(path string) (tempFile, error) {
		f, err := createTemp(path)
		if err != nil {
			return nil, err
		}
		return &failing{f: f, room: room, syncErr: syncErr, ops: ops}, nil
	}
	return ops
}

// A write that fails (a full disk, a renderer's error) or a sync that fails leaves the old file as it was,
// and no temporary file.
func TestFailedWriteLeavesTheOldFile(t *testing.T) {
	for _, c := range []struct {
		name    string
		room    int
		syncErr error
		write   func(io.Writer) error
	}{
		{name: "a full disk", room: 4, write: content("the new result")},
		{name: "a renderer's error", room: 1 << 20, write: func(w io.Writer) error {
			_, _ = io.WriteString(w, "half a res")
			return errors.New("cannot draw the chart")
		}},
		{name: "a failed sync", room: 1 << 20, syncErr: syscall.EIO, write: content("the new result")},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "run.json")
			if err := WriteFile(path, content("the old result")); err != nil {
				t.Fatal(err)
			}
			onFailingDisk(t, c.room, c.syncErr)
			if err := WriteFile(path, c.write); err == nil {
				t.Fatal("the write did not fail")
			}
			if got := read(t, path); got != "the old result" {
				t.Errorf("%q, want the old result", got)
			}
			noTemporaryFiles(t, dir)
		})
	}
}

// The new file is put in place only once it is whole, by one commit after its last write (renameio's, which
// syncs it before the rename): a crash after the rename finds it whole.
func TestWriteFileCommitsOnlyAWholeFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.json")
	ops := onFailingDisk(t, 1<<20, nil)
	if err := WriteFile(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, "result"); err != nil {
			return err
		}
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is in place before it was written whole (%v)", path, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(*ops, ","); got != "write,commit" || read(t, path) != "result" {
		t.Errorf("calls %s and content %q, want write,commit and the result", got, read(t, path))
	}
}

// A stream on a disk that fills keeps its whole records, takes no more, and says why; unpublished, it
// leaves nothing behind.
func TestStreamKeepsWholeRecordsOnAFullDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "samples.jsonl")
	onFailingDisk(t, 10, nil)
	s, err := CreateStream(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]byte("record 1\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]byte("record 2\n")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the write past the disk's room: %v, want ENOSPC", err)
	}
	if err := s.Write([]byte("3\n")); !errors.Is(err, syscall.ENOSPC) || !errors.Is(s.Err(), syscall.ENOSPC) {
		t.Errorf("after a failed write: %v and Err %v, want the first error again", err, s.Err())
	}
	if err := s.Publish(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "record 1\n" {
		t.Errorf("%q, want the one whole record", got)
	}
	unpublished, err := CreateStream(filepath.Join(dir, "other.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := unpublished.Close(); err != nil {
		t.Fatal(err)
	}
	noTemporaryFiles(t, dir)
}

// A folder's lock is held by one at a time, and its lock file is never a symlink followed.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	first, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(dir); !errors.Is(err, ErrLocked) {
		t.Errorf("a second lock: %v, want ErrLocked", err)
	}
	if err := first.Unlock(); err != nil {
		t.Fatal(err)
	}
	again, err := LockDir(dir)
	if err != nil {
		t.Fatalf("after Unlock: %v", err)
	}
	_ = again.Unlock()
	linked := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, LockName), filepath.Join(linked, LockName)); err != nil {
		t.Fatal(err)
	}
	if l, err := LockDir(linked); err == nil {
		_ = l.Unlock()
		t.Error("a lock file that is a symlink was followed")
	}
}

// The lock file goes with the lock, so that a result folder holds only the result, and the folder can be
// locked again after.
func TestLockFileRemovedAtUnlock(t *testing.T) {
	dir := t.TempDir()
	first, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(dir); !errors.Is(err, ErrLocked) {
		t.Errorf("a second lock while the first is held: %v, want ErrLocked", err)
	}
	if err := first.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, LockName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file is still there after Unlock: %v", err)
	}
	second, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Unlock()
	if _, err := LockDir(dir); !errors.Is(err, ErrLocked) {
		t.Errorf("a lock beside the second: %v, want ErrLocked", err)
	}
}

// Probe creates a file where WriteFile would and leaves nothing behind: nil in a folder that takes one, the
// error of the create where none can be made (a missing folder, a file where the folder goes, /proc, which
// refuses root too).
func TestProbe(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		path string
		want error // nil: the folder takes a file
	}{
		{"a folder", filepath.Join(dir, "run.json"), nil},
		{"a missing folder", filepath.Join(dir, "missing", "run.json"), syscall.ENOENT},
		{"a file where the folder goes", filepath.Join(file, "run.json"), syscall.ENOTDIR},
		{"/proc", "/proc/clmemprobe-probe.json", syscall.ENOENT},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Probe(c.path)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("Probe(%s) = %v, want %v", c.path, err, c.want)
			}
			noTemporaryFiles(t, dir)
			if _, err := os.Stat(c.path); !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				t.Errorf("Probe left %s behind (%v)", c.path, err)
			}
		})
	}
}
