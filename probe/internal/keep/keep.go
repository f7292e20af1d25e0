// Package keep keeps small answers between runs of the tool in the user's cache folder (the trace layer's,
// $XDG_CACHE_HOME/clmemprobe): what is slow to find out and changes only with files the tool can check
// (the ICD loader's file, the package database). Each answer is kept with what it holds for, and taken
// again only while that is unchanged; a file that is missing, too long or not what this build writes
// keeps nothing, and a failure to write one is no error: the next run finds out again.
package keep

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Limit bounds what is read of a kept file: a few kilobytes an answer.
const Limit = 256 << 10

// Identity tells a file or folder apart from any other and from itself changed: its device, inode, size,
// and the times of its last change of content and of inode ("" where it cannot be read). A folder's
// content time changes when an entry is added, removed or renamed into it.
func Identity(path string) string {
	var st syscall.Stat_t
	if path == "" || syscall.Stat(path, &st) != nil {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d:%d.%09d:%d.%09d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}

// Read decodes dir/name into v; false where there is nothing to take (missing, not a regular file, a
// link, too long, or not JSON of v's shape).
func Read(dir, name string, v any) bool {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, Limit+1))
	if err != nil || len(b) > Limit {
		return false
	}
	return json.Unmarshal(b, v) == nil
}

// Write writes v to dir/name, whole or not at all: a new file renamed into place. dir is the caller's,
// checked as the layer's cache is (trace.Safe).
func Write(dir, name string, v any) {
	b, err := json.Marshal(v)
	if err != nil || len(b) > Limit {
		return
	}
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(b)
	serr := tmp.Sync()
	if cerr := tmp.Close(); werr != nil || serr != nil || cerr != nil {
		return
	}
	_ = os.Rename(tmp.Name(), filepath.Join(dir, name))
}
