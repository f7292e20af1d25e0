// Package safefile writes files so that a crash, a full disk or a planted symlink costs nothing: every file
// is created new under a temporary name in its final folder (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0644 whatever
// the umask), written, synced and then renamed into place. A reader, or a crash, sees the old file or the
// new one, never part of either, and a symlink where the file goes is replaced, never followed. It also
// holds the advisory lock that keeps two runs out of one folder.
package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Mode is the permission every file gets.
const Mode = 0o644

// tempFile is what the writers use of a temporary file: an *os.File, or in the tests one that fails as a
// full disk or a failing device does.
type tempFile interface {
	io.Writer
	Name() string
	Sync() error
	Close() error
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
}

// newTemp creates every temporary file the writers use; the tests put a failing file in its place.
var newTemp = func(path string) (tempFile, error) {
	f, err := createTemp(path)
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil interface
	}
	return f, nil
}

// tempSuffix makes the random part of a temporary file's name; the tests make it name a file already there.
var tempSuffix = func() (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// createTemp creates a new, empty file beside path that no one else can have opened: O_EXCL refuses any
// existing name, a symlink included, and O_NOFOLLOW says so twice.
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for try := 0; try < 100; try++ {
		suffix, err := tempSuffix()
		if err != nil {
			return nil, err
		}
		name := filepath.Join(dir, "."+base+".tmp-"+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, Mode)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		// The umask may have taken bits away: set the mode the tool promises.
		if err := f.Chmod(Mode); err != nil {
			f.Close()
			os.Remove(name)
			return nil, err
		}
		return f, nil
	}
	return nil, fmt.Errorf("cannot create a temporary file in %s", dir)
}

// Probe creates the temporary file WriteFile would create for path, and removes it: nil when the folder
// takes a new file now. Mode bits cannot tell (root ignores them, a read-only mount or /proc refuses root
// too); only creating one can, so that a command finds out before its work, not after it.
func Probe(path string) error {
	f, err := createTemp(path)
	if err != nil {
		return err
	}
	name := f.Name()
	return errors.Join(f.Close(), os.Remove(name))
}

// WriteFile writes path through a temporary file renamed into place once it is complete and synced. On any
// error the temporary file is removed and whatever was at path stays as it was.
func WriteFile(path string, write func(io.Writer) error) error {
	f, err := newTemp(path)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := rename(f.Name(), path); err != nil {
		return err
	}
	ok = true
	return syncDir(filepath.Dir(path))
}

// rename puts the temporary file in place. A rename replaces whatever has the name: never a device, a
// FIFO or a folder (commands refuse such a name before they start; this holds for every file written).
func rename(temp, path string) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0 {
		return fmt.Errorf("%s is not a plain file; it is left as it is", path)
	}
	return os.Rename(temp, path)
}

// syncDir makes a rename in dir durable.
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
// name, put in place by Publish, and never left with half a record. It is not safe for concurrent use.
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
	if err := rename(s.f.Name(), s.path); err != nil {
		return err
	}
	s.published = true
	return syncDir(filepath.Dir(s.path))
}

// Close syncs and closes the stream; a stream never published is removed.
func (s *Stream) Close() error {
	if !s.published {
		s.f.Close()
		return os.Remove(s.f.Name())
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
