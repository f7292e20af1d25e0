package sample

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shirou/gopsutil/v4/common"
)

// Root is where the host's /proc, /sys, /dev and /etc are: the real ones, or a fixture tree in tests. It is
// the one layer through which clmemprobe reads the host: its own parsers for the files read while a loop
// runs (fast, no allocation to speak of), and gopsutil, pointed at the same root, for the environment block.
type Root struct{ Proc, Sys, Dev, Etc string }

// System is the real host.
var System = Root{Proc: "/proc", Sys: "/sys", Dev: "/dev", Etc: "/etc"}

// Under is a fixture tree laid out as dir/proc, dir/sys, dir/dev and dir/etc.
func Under(dir string) Root {
	return Root{Proc: filepath.Join(dir, "proc"), Sys: filepath.Join(dir, "sys"), Dev: filepath.Join(dir, "dev"), Etc: filepath.Join(dir, "etc")}
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
}

// SelfMemory reads /proc/self/status.
func (r Root) SelfMemory() (ProcessMemory, error) {
	var m ProcessMemory
	err := r.fields(filepath.Join(r.Proc, "self", "status"), map[string]*uint64{"VmRSS": &m.RSS, "VmSize": &m.VMS, "VmHWM": &m.HWM})
	return m, err
}

// fields reads "Name:   123 kB" lines of a /proc file into the named counters, in bytes. Names that the file
// lacks keep their value.
func (r Root) fields(path string, want map[string]*uint64) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		name, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		p, ok := want[string(name)]
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", path, name, err)
		}
		if len(f) > 1 && strings.EqualFold(string(f[1]), "kB") {
			v *= 1024
		}
		*p = v
	}
	return nil
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
