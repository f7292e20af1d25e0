// Package sample reads host and device memory while the probe runs. Each sampler fails alone: one that does
// not apply says why and never fails a run. Everything is read under a Root, so tests feed fixture trees.
package sample

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Host reads the worker's own memory (VmRSS, VmSize, VmHWM, VmLck) and open descriptors, the system's
// available and committed memory and the number of memory mappings.
//
// It keeps /proc/self/status and /proc/self/fd open from the start and reads them again in place (pread,
// lseek and getdents): a runtime that runs out of descriptors fills the table, and a sampler that opened its
// files anew would see nothing at the very point it is needed. Both stay open for the process's life and are
// counted among its descriptors, as any descriptor is.
type Host struct {
	root   Root
	buf    []byte
	status *os.File // nil where it could not be opened: read anew each time
	fdDir  int      // -1 where it could not be opened
	proc   string   // "self", or the pid of the process read
	// Cgroup, where set, is the process's memory cgroup: each sample reads its working set too.
	Cgroup *Cgroup
}

// NewHost returns a host sampler for the current process.
func NewHost(root Root) *Host { return newHost(root, "self") }

// NewHostOf returns a host sampler for another process of this user (the program trace runs): its
// status and descriptors under /proc/PID, the system's memory as NewHost's.
func NewHostOf(root Root, pid int) *Host { return newHost(root, strconv.Itoa(pid)) }

func newHost(root Root, proc string) *Host {
	h := &Host{root: root, buf: make([]byte, 64<<10), fdDir: -1, proc: proc}
	h.status, _ = os.Open(filepath.Join(root.Proc, proc, "status"))
	if fd, err := openDir(filepath.Join(root.Proc, proc, "fd")); err == nil {
		h.fdDir = fd
	}
	return h
}

// selfMemory reads the process's status through the descriptor kept open, else anew.
func (h *Host) selfMemory() (ProcessMemory, error) {
	if h.status == nil && h.proc != "self" {
		return ProcessMemory{}, os.ErrNotExist
	}
	if h.status == nil {
		return h.root.SelfMemory()
	}
	n, err := h.status.ReadAt(h.buf, 0)
	if n == 0 && err != nil {
		return ProcessMemory{}, err
	}
	return parseStatus(h.buf[:n], h.status.Name())
}

// openFDs counts the open descriptors through the directory kept open, else anew.
func (h *Host) openFDs() (uint64, error) {
	if h.fdDir < 0 && h.proc != "self" {
		return 0, os.ErrNotExist
	}
	if h.fdDir < 0 {
		return h.root.OpenFDs(h.buf)
	}
	return countEntries(h.fdDir, h.buf)
}

// Read fills the host fields of s. withMappings also counts the mappings, which costs more (the kernel
// writes one line per mapping), so callers do it less often.
func (h *Host) Read(s *result.Sample, withMappings bool) error {
	pm, err := h.selfMemory()
	if err != nil {
		return err
	}
	s.RSSBytes, s.VMSBytes, s.HWMBytes, s.LockedBytes = pm.RSS, pm.VMS, pm.HWM, pm.Locked
	if n, err := h.openFDs(); err == nil {
		s.OpenFDs = n
	}
	if mi, err := h.root.Meminfo(); err == nil {
		s.AvailBytes, s.CommittedBytes = mi.Available, mi.Committed
	}
	if h.Cgroup != nil {
		if ws, err := h.Cgroup.WorkingSet(); err == nil {
			s.CgroupBytes = ws
		}
	}
	if withMappings {
		if n, err := h.root.Mappings(h.buf); err == nil {
			s.Mappings = n
		}
	}
	return nil
}

// Close closes what the sampler keeps open; a sampler of another process is closed when that process is
// done with, the tool's own is kept for its life.
func (h *Host) Close() error {
	var err error
	if h.status != nil {
		err = h.status.Close()
		h.status = nil
	}
	if h.fdDir >= 0 {
		err = errors.Join(err, syscall.Close(h.fdDir))
		h.fdDir = -1
	}
	return err
}
