package sample

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/shirou/gopsutil/v4/common"
)

// Root is where the host's /proc, /sys, /dev, /etc and /var are: the real ones, or a fixture tree in tests.
// It is the one layer through which clmemprobe reads the host: its own parsers for the files read while a
// loop runs (fast, no allocation to speak of), and gopsutil, pointed at the same root, for the environment
// block. Var holds the package database (var/lib/dpkg).
type Root struct{ Proc, Sys, Dev, Etc, Var string }

// System is the real host.
var System = Root{Proc: "/proc", Sys: "/sys", Dev: "/dev", Etc: "/etc", Var: "/var"}

// Under is a fixture tree laid out as dir/proc, dir/sys, dir/dev, dir/etc and dir/var.
func Under(dir string) Root {
	return Root{Proc: filepath.Join(dir, "proc"), Sys: filepath.Join(dir, "sys"), Dev: filepath.Join(dir, "dev"), Etc: filepath.Join(dir, "etc"),
		Var: filepath.Join(dir, "var")}
}

// Context returns ctx carrying the root for gopsutil, whose readers then look under it too.
func (r Root) Context(ctx context.Context) context.Context {
	return context.WithValue(ctx, common.EnvKey, common.EnvMap{common.HostProcEnvKey: r.Proc, common.HostSysEnvKey: r.Sys,
		common.HostEtcEnvKey: r.Etc, common.HostDevEnvKey: r.Dev})
}

// Meminfo is what /proc/meminfo says about the system's memory, in bytes.
type Meminfo struct {
	Total, Available, Committed, SwapTotal uint64
}

// Meminfo reads /proc/meminfo.
func (r Root) Meminfo() (Meminfo, error) {
	var m Meminfo
	err := r.fields(filepath.Join(r.Proc, "meminfo"), map[string]*uint64{"MemTotal": &m.Total, "MemAvailable": &m.Available,
		"Committed_AS": &m.Committed, "SwapTotal": &m.SwapTotal})
	if err == nil && m.Total == 0 {
		err = fmt.Errorf("%s: no MemTotal", filepath.Join(r.Proc, "meminfo"))
	}
	return m, err
}

// ProcessMemory is what /proc/self/status says about this process's memory, in bytes.
type ProcessMemory struct {
	RSS, VMS, HWM uint64
	// VMPeak is VmPeak: the most address space the process has had mapped at once.
	VMPeak uint64
	// Locked is VmLck: memory the process locked (mlock, a runtime pinning host buffers), which
	// RLIMIT_MEMLOCK bounds. HasLocked says the file has the line at all: a kernel that leaves it out (gVisor's
	// /proc, say) has told nothing, which is not 0.
	Locked    uint64
	HasLocked bool
}

// SelfMemory reads /proc/self/status.
func (r Root) SelfMemory() (ProcessMemory, error) {
	path := filepath.Join(r.Proc, "self", "status")
	b, err := os.ReadFile(path)
	if err != nil {
		return ProcessMemory{}, err
	}
	return parseStatus(b, path)
}

// notRead marks a field that a file did not have (no /proc figure comes near it).
const notRead = math.MaxUint64

func parseStatus(b []byte, path string) (ProcessMemory, error) {
	m := ProcessMemory{Locked: notRead}
	err := parseFields(b, path, map[string]*uint64{"VmRSS": &m.RSS, "VmSize": &m.VMS, "VmHWM": &m.HWM, "VmPeak": &m.VMPeak, "VmLck": &m.Locked})
	if m.HasLocked = m.Locked != notRead; !m.HasLocked {
		m.Locked = 0
	}
	return m, err
}

// fields reads "Name:   123 kB" lines of a /proc file into the named counters, in bytes. Names that the file
// lacks keep their value.
func (r Root) fields(path string, want map[string]*uint64) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return parseFields(b, path, want)
}

// parseFields is fields on the file's contents b.
func parseFields(b []byte, path string, want map[string]*uint64) error {
	var err error
	eachField(b, func(name, rest []byte) bool {
		p, ok := want[string(name)]
		if !ok {
			return true
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return true
		}
		v, perr := strconv.ParseUint(string(f[0]), 10, 64)
		if perr != nil {
			err = fmt.Errorf("%s: %s: %w", path, name, perr)
			return false
		}
		if len(f) > 1 && strings.EqualFold(string(f[1]), "kB") {
			v *= 1024
		}
		*p = v
		return true
	})
	return err
}

// eachField calls f with the name and the rest of every "name: rest" line of b, until f returns false.
func eachField(b []byte, f func(name, rest []byte) bool) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if name, rest, ok := bytes.Cut(line, []byte{':'}); ok && !f(name, rest) {
			return
		}
	}
}

// Mappings counts this process's memory mappings (lines of /proc/self/maps), which runtimes that map one
// region per buffer push toward vm.max_map_count. buf is scratch space for the read.
func (r Root) Mappings(buf []byte) (uint64, error) {
	f, err := os.Open(filepath.Join(r.Proc, "self", "maps"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n uint64
	for {
		k, err := f.Read(buf)
		n += uint64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// OpenFDs counts this process's open descriptors: the entries of /proc/self/fd, the one it opens to read
// them among them. buf is scratch space for getdents (see countEntries).
func (r Root) OpenFDs(buf []byte) (uint64, error) {
	fd, err := openDir(filepath.Join(r.Proc, "self", "fd"))
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	return countEntries(fd, buf)
}

func openDir(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// countEntries counts the entries of the open directory fd from its start, "." and ".." left out. It reads
// the kernel's records (linux_dirent64) straight from buf, which holds a few thousand of them: a process
// with 100,000 descriptors costs some thirty getdents calls and no allocation, where os.File.Readdirnames
// would make a string of every name on a sampler that runs every 10 ms.
func countEntries(fd int, buf []byte) (uint64, error) {
	if _, err := syscall.Seek(fd, 0, io.SeekStart); err != nil {
		return 0, err
	}
	var n uint64
	for {
		k, err := syscall.Getdents(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if k <= 0 {
			return n, nil
		}
		n += countDirents(buf[:k])
	}
}

// The layout of a linux_dirent64 record: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), then the
// name, NUL-terminated; a record is at least 24 bytes long.
const (
	direntReclen = 16
	direntName   = 19
)

// countDirents counts the records of one getdents buffer other than "." and "..".
func countDirents(b []byte) uint64 {
	var n uint64
	for len(b) > direntName+2 {
		reclen := int(binary.NativeEndian.Uint16(b[direntReclen:]))
		if reclen <= direntName+2 || reclen > len(b) {
			break // not a record the kernel writes: count no further
		}
		name := b[direntName:]
		dot := name[0] == '.' && (name[1] == 0 || name[1] == '.' && name[2] == 0)
		if !dot {
			n++
		}
		b = b[reclen:]
	}
	return n
}

// MaxMapCount returns vm.max_map_count.
func (r Root) MaxMapCount() (uint64, error) {
	return ReadUint(filepath.Join(r.Proc, "sys", "vm", "max_map_count"))
}

// ReadUint reads a file holding one unsigned number (sysctl and sysfs files).
func ReadUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// ReadTrim reads a small text file, "" when it cannot be read.
func ReadTrim(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(bufio.NewReader(f), 64<<10))
	return strings.TrimSpace(string(b))
}

// OOMKills is how many processes the kernel's OOM killer has ended since boot, machine-wide and in every
// memory cgroup (oom_kill in /proc/vmstat, Linux 4.13 and later).
func (r Root) OOMKills() (uint64, error) {
	b, err := os.ReadFile(filepath.Join(r.Proc, "vmstat"))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if name, value, ok := strings.Cut(strings.TrimSpace(line), " "); ok && name == "oom_kill" {
			return strconv.ParseUint(value, 10, 64)
		}
	}
	return 0, fmt.Errorf("%s/vmstat has no oom_kill (a kernel before 4.13)", r.Proc)
}
