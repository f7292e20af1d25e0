// Package sample reads host and device memory while the probe runs. Each sampler fails alone: one that does
// not apply says why and never fails a run. The /proc and /sys roots are fields, so tests feed fixture trees.
package sample

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/report"
	"github.com/shirou/gopsutil/v4/mem"
	"github.com/shirou/gopsutil/v4/process"
)

// Host reads the worker's own memory (RSS and VMS through gopsutil, VmHWM from /proc/self/status), the
// system's available memory (gopsutil) and the number of memory mappings, which runtimes that map one
// region per buffer push toward vm.max_map_count.
type Host struct {
	ProcRoot string // "/proc" unless a test says otherwise
	proc     *process.Process
	buf      []byte
}

// NewHost returns a host sampler for the current process.
func NewHost(procRoot string) (*Host, error) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	p, err := process.NewProcess(int32(os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("host sampler: %w", err)
	}
	return &Host{ProcRoot: procRoot, proc: p, buf: make([]byte, 64<<10)}, nil
}

// Read fills the host fields of s. withMappings also counts the mappings, which costs more (the kernel
// writes one line per mapping), so callers do it less often.
func (h *Host) Read(s *report.Sample, withMappings bool) error {
	mi, err := h.proc.MemoryInfo()
	if err != nil {
		return fmt.Errorf("host sampler: %w", err)
	}
	s.RSSBytes, s.VMSBytes = mi.RSS, mi.VMS
	if vm, err := mem.VirtualMemory(); err == nil {
		s.AvailBytes = vm.Available
	}
	if hwm, err := StatusField(filepath.Join(h.ProcRoot, "self", "status"), "VmHWM"); err == nil {
		s.HWMBytes = hwm
	}
	if withMappings {
		if n, err := h.countLines(filepath.Join(h.ProcRoot, "self", "maps")); err == nil {
			s.Mappings = n
		}
	}
	return nil
}

// Available returns the system's available memory, for the host guard.
func Available() (uint64, error) {
	vm, err := mem.VirtualMemory()
	if err != nil {
		return 0, err
	}
	return vm.Available, nil
}

func (h *Host) countLines(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n uint64
	for {
		k, err := f.Read(h.buf)
		n += uint64(bytes.Count(h.buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// StatusField reads a "Name:   123 kB" line of a /proc status file, in bytes.
func StatusField(path, name string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+":") {
			continue
		}
		fields := strings.Fields(line[len(name)+1:])
		if len(fields) == 0 {
			break
		}
		v, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %w", path, name, err)
		}
		if len(fields) > 1 && strings.EqualFold(fields[1], "kB") {
			v *= 1024
		}
		return v, nil
	}
	return 0, fmt.Errorf("%s: no %s", path, name)
}

// ReadUint reads a file holding one unsigned number (sysctl and sysfs files).
func ReadUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// MaxMapCount returns vm.max_map_count under procRoot.
func MaxMapCount(procRoot string) (uint64, error) {
	if procRoot == "" {
		procRoot = "/proc"
	}
	return ReadUint(filepath.Join(procRoot, "sys", "vm", "max_map_count"))
}
