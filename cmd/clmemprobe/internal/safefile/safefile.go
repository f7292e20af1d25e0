// Package safefile writes files so that a crash, a full disk or a planted symlink costs nothing: every file
// is created new under a temporary name in its final folder, written, synced and then renamed into place
// (google/renameio's PendingFile: O_CREAT|O_EXCL, which never opens an existing name, a symlink included).
// A reader, or a crash, sees the old file or the new one, never part of either, and a symlink where the file
// goes is replaced, never followed. What renameio does not do is here: the mode 0644 whatever the umask,
// with the temporary file removed when it cannot be set; the refusal to rename over a folder, a FIFO or a
// device; the sync of the folder that makes the rename durable; the stream that is renamed into place while
// it is still written; and the advisory lock that keeps two runs out of one folder.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/google/renameio/v2"
)

// Mode is the permission every file gets.
const Mode = 0o644

// tempFile is what the writers use of a temporary file: a *renameio.PendingFile, or in the tests one that
// fails as a full disk or a failing device does.
type tempFile interface {
	io.Writer
	Name() string
	Sync() error
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
	Close() error
	// CloseAtomicallyReplace syncs and closes the file, then renames it into place.
	CloseAtomicallyReplace() error
	// Cleanup closes and removes the file unless it was put in place; it does nothing after that.
	Cleanup() error
}

// newTemp creates every temporary file the writers use; the tests put a failing file in its place.
var newTemp = func(path string) (tempFile, error) {
	f, err := createTemp(path)
	if err != nil {
		return nil, err // not a nil *PendingFile in a non-nil interface
	}
	return f, nil
}

// createTemp creates a new, empty file beside path that no one else can have opened. The temporary folder
// is path's own: renameio would otherwise try $TMPDIR first, whose file a rename can also move where both
// share a file system, and a crash would leave it there.
func createTemp(path string) (*renameio.PendingFile, error) {
	f, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithPermissions(Mode))
	if err != nil {
		return nil, err
	}
	// The umask may have taken bits away: set the mode the tool promises. Set here rather than with
	// renameio's WithStaticPermissions, which leaves its temporary file behind when the chmod fails.
	if err := f.Chmod(Mode); err != nil {
		return nil, errors.Join(err, f.Cleanup())
	}
	return f, nil
}

// Probe creates the temporary file WriteFile would create for path, and removes it: nil when the folder
// takes a new file now. Mode bits cannot tell (root ignores them, a read-only mount or /proc refuses root
// too); only creating one can, so that a command finds out before its work, not after it.
func Probe(path string) error {
	f, err := createTemp(path)
	if err != nil {
		return err
	}
	return f.Cleanup()
}

// WriteFile writes path through a temporary file renamed into place once it is complete and synced. On any
// error the temporary file is removed and whatever was at path stays as it was.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := newTemp(path)
	if err != nil {
		return err
	}
	defer f.Cleanup() // nothing to do once the file is in place
	if err := write(f); err != nil {
		return err
	}
	if err := plainOrNothing(path); err != nil {
		return err
	}
	if err := f.CloseAtomicallyReplace(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// plainOrNothing refuses a name that a rename would replace but that is no old result: a device, a FIFO or
// a folder (commands refuse such a name before they start; this holds for every file written). A symlink
// is replaced by the rename, never followed.
func plainOrNothing(path string) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0 {
		return fmt.Errorf("%s is not a plain file; it is left as it is", path)
	}
	return nil
}

// syncDir makes a rename in dir durable (renameio syncs the file, not its folder).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some file systems cannot sync a directory; the rename is done either way.
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// Stream is a file written record by record over a long time (samples.jsonl): created under a temporary
// name, put in place by Publish, and never left with half a record. Its file stays open through the rename
// (records go on to the file at its final name), which renameio's CloseAtomicallyReplace, closing the file,
// cannot do: Publish renames it itself. It is not safe for concurrent use.
type Stream struct {
	f         tempFile
	path      string
	size      int64 // bytes of whole records written
	published bool
	err       error // the first failed write: later records are dropped
}

// CreateStream starts a stream that will become path.
func CreateStream(path string) (*Stream, error) {
	f, err := newTemp(path)
	if err != nil {
		return nil, err
	}
	return &Stream{f: f, path: path}, nil
}

// Write appends one record. A write that fails (a full disk) is cut back to the last whole record, and the
// stream takes no more records; the first error is returned again by Err.
func (s *Stream) Write(record []byte) error {
	if s.err != nil {
		return s.err
	}
	if _, err := s.f.Write(record); err != nil {
		s.err = err
		// Truncating frees space, so it works on a full disk.
		if terr := s.f.Truncate(s.size); terr == nil {
			_, _ = s.f.Seek(s.size, io.SeekStart)
		}
		return err
	}
	s.size += int64(len(record))
	return nil
}

// Err returns the first failed write, if any.
func (s *Stream) Err() error { return s.err }

// Publish syncs what was written and renames the stream into place; records written later go to the file
// at its final name. Once is enough.
func (s *Stream) Publish() error {
	if s.published {
		return nil
	}
	if err := s.f.Sync(); err != nil {
		return err
	}
	if err := plainOrNothing(s.path); err != nil {
		return err
	}
	if err := os.Rename(s.f.Name(), s.path); err != nil {
		return err
	}
	s.published = true
	return syncDir(filepath.Dir(s.path))
}

// Close syncs and closes the stream; a stream never published is removed.
func (s *Stream) Close() error {
	if !s.published {
		return s.f.Cleanup()
	}
	serr := s.f.Sync()
	return errors.Join(serr, s.f.Close())
}

// ErrLocked is returned by LockDir when another process holds the folder's lock.
var ErrLocked = errors.New("another clmemprobe run is writing into this folder")

// DirLock is an advisory lock on a folder, held until Unlock or the process's end.
type DirLock struct {
	f    *os.File
	path string
}

// LockName is the lock file's name in a locked folder.
const LockName = ".clmemprobe.lock"

// LockDir takes the folder's lock without waiting: ErrLocked when another process has it. The lock file is
// opened without following a symlink and never written. Unlock removes it, so a process may hold a lock on
// a file that is no longer the folder's (it opened it before the holder removed it): the lock counts only
// while the file is still the one under the name, else the new file is locked instead.
func LockDir(dir string) (*DirLock, error) {
	path := filepath.Join(dir, LockName)
	for range 8 {
		f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, Mode)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, ErrLocked
			}
			return nil, err
		}
		held, herr := f.Stat()
		named, nerr := os.Lstat(path)
		if herr == nil && nerr == nil && os.SameFile(held, named) {
			return &DirLock{f: f, path: path}, nil
		}
		f.Close() // the holder removed it meanwhile: take the folder's new lock file
	}
	return nil, ErrLocked
}

// Unlock removes the lock file, while it still holds it, and releases the lock: a result folder keeps no
// trace of the run that wrote it (a fleet's results tree would otherwise hold one per node).
func (l *DirLock) Unlock() error {
	rerr := os.Remove(l.path)
	if errors.Is(rerr, os.ErrNotExist) {
		rerr = nil
	}
	return errors.Join(rerr, l.f.Close())
}
