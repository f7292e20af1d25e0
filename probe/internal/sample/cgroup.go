package sample

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/procfs"
)

// Cgroup is the memory cgroup a process runs in: a container's limit (a Kubernetes pod's memory limit) or a
// batch job's (Slurm's ConstrainRAMSpace). Its OOM killer ends a process long before the machine's
// MemAvailable runs low, so the host guard and the findings read it beside the system's figures.
//
// procfs parses /proc/self/cgroup and /proc/self/mountinfo (the formats with corner cases: optional fields,
// escaped mount points); the cgroup's own files are single numbers or short key-value lists, read here
// without allocation on the guard's 5 ms cadence. containerd/cgroups and opencontainers/cgroups were
// weighed: both manage cgroups (create, move, freeze) and bring systemd and D-Bus bindings with them, which a
// reader of four files does not need.
type Cgroup struct {
	Version int    // 1 or 2
	Path    string // as /proc/self/cgroup names it
	dir     string // the cgroup's folder under the sampler's root
	top     string // the hierarchy's mount point: limits are looked for from dir up to it

	mu  sync.Mutex // the guard and the sampler read from their own goroutines
	buf []byte
}

// FindCgroup finds the memory cgroup of this process under root, or says why there is none: no memory
// controller mounted (cgroup v1) or enabled (v2), or files it cannot read.
func FindCgroup(root Root) (*Cgroup, string) {
	fs, err := procfs.NewFS(root.Proc)
	if err != nil {
		return nil, err.Error()
	}
	self, err := fs.Self()
	if err != nil {
		return nil, err.Error()
	}
	groups, err := self.Cgroups()
	if err != nil {
		return nil, fmt.Sprintf("%s/self/cgroup: %v", root.Proc, err)
	}
	mounts, err := self.MountInfo()
	if err != nil {
		return nil, fmt.Sprintf("%s/self/mountinfo: %v", root.Proc, err)
	}
	for _, g := range groups { // v1: the hierarchy that has the memory controller
		if g.HierarchyID == 0 || !slices.Contains(g.Controllers, "memory") {
			continue
		}
		for _, m := range mounts {
			if m.FSType == "cgroup" && hasOption(m, "memory") {
				return newCgroup(root, 1, g.Path, m), ""
			}
		}
		return nil, "cgroup v1 memory controller listed but not mounted"
	}
	for _, g := range groups { // v2: the unified hierarchy, where memory is among its controllers
		if g.HierarchyID != 0 {
			continue
		}
		for _, m := range mounts {
			if m.FSType != "cgroup2" {
				continue
			}
			c := newCgroup(root, 2, g.Path, m)
			if controllers, err := os.ReadFile(filepath.Join(c.top, "cgroup.controllers")); err == nil &&
				slices.Contains(strings.Fields(string(controllers)), "memory") {
				return c, ""
			}
		}
	}
	return nil, "no memory cgroup (no cgroup v1 memory controller, no cgroup v2 hierarchy with the memory controller)"
}

func hasOption(m *procfs.MountInfo, opt string) bool {
	_, ok := m.SuperOptions[opt]
	if !ok {
		_, ok = m.Options[opt]
	}
	return ok
}

// newCgroup places the cgroup's folder: the mount point (moved under the sampler's root where that is not
// /) joined with the path less the mount's own root (a container sees its cgroup as the root of a mount).
func newCgroup(root Root, version int, path string, m *procfs.MountInfo) *Cgroup {
	top := m.MountPoint
	if rest, ok := strings.CutPrefix(top, "/sys/"); ok && root.Sys != "/sys" {
		top = filepath.Join(root.Sys, rest)
	}
	rel := path
	if m.Root != "/" {
		rel = strings.TrimPrefix(path, m.Root)
	}
	return &Cgroup{Version: version, Path: path, dir: filepath.Join(top, rel), top: top, buf: make([]byte, 8<<10)}
}

// noLimit is what cgroup v1 writes for "no limit" (a page-rounded LONG_MAX); anything at or above it, and
// v2's "max", is no limit.
const noLimit = math.MaxInt64 &^ 4095

// Limit is the cgroup's memory limit in bytes, the lowest on the way from it up to its hierarchy's top
// (a parent's limit binds its children); 0 when there is none.
func (c *Cgroup) Limit() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	file := "memory.max"
	if c.Version == 1 {
		file = "memory.limit_in_bytes"
	}
	var lowest uint64
	for dir := c.dir; ; dir = filepath.Dir(dir) {
		if v, ok := c.number(filepath.Join(dir, file)); ok && v > 0 && v < noLimit && (lowest == 0 || v < lowest) {
			lowest = v
		}
		if dir == c.top || len(dir) <= len(c.top) {
			return lowest
		}
	}
}

// WorkingSet is the cgroup's charged memory less its inactive file pages: what its OOM killer cannot
// reclaim first (the kubelet's working set).
func (c *Cgroup) WorkingSet() (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	usage, stat, inactive := "memory.current", "memory.stat", "inactive_file"
	if c.Version == 1 {
		usage, inactive = "memory.usage_in_bytes", "total_inactive_file"
	}
	u, ok := c.number(filepath.Join(c.dir, usage))
	if !ok {
		return 0, fmt.Errorf("%s: no usage", filepath.Join(c.dir, usage))
	}
	file, _ := c.keyed(filepath.Join(c.dir, stat), inactive)
	return u - min(u, file), nil
}

// OOMKills is how many processes the cgroup's OOM killer has ended (v2 memory.events, which counts the
// cgroup's descendants too; v1 memory.oom_control), and whether the count could be read.
func (c *Cgroup) OOMKills() (uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	file := "memory.events"
	if c.Version == 1 {
		file = "memory.oom_control"
	}
	return c.keyed(filepath.Join(c.dir, file), "oom_kill")
}

// read reads a small file into the cgroup's buffer; the caller holds mu.
func (c *Cgroup) read(path string) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	n, _ := f.Read(c.buf)
	return c.buf[:n], n > 0
}

// number reads a file that holds one number ("max" is no limit).
func (c *Cgroup) number(path string) (uint64, bool) {
	b, ok := c.read(path)
	if !ok {
		return 0, false
	}
	b = bytes.TrimSpace(b)
	if string(b) == "max" {
		return noLimit, true
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	return v, err == nil
}

// keyed reads the value of key in a file of "key value" lines.
func (c *Cgroup) keyed(path, key string) (uint64, bool) {
	b, ok := c.read(path)
	if !ok {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), " ")
		if found && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
