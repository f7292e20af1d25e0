package sample

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/nvml"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// DeviceSampler reads used and free memory of the probed devices.
type DeviceSampler interface {
	// Name says which source the figures come from (for the report).
	Name() string
	// Read returns one entry per device it can see, numbered as the run numbers devices.
	Read() ([]result.DeviceSample, error)
}

// Every device sampler implements DeviceSampler.
var (
	_ DeviceSampler = (*nvmlSampler)(nil)
	_ DeviceSampler = (*clQuerySampler)(nil)
	_ DeviceSampler = (*amdgpuSysfsSampler)(nil)
	_ DeviceSampler = (*fdinfoSampler)(nil)
)

// Target is one probed device as a sampler needs it.
type Target struct {
	Index    int    // the device's number in the run
	PCIBusID string // "" when the runtime does not tell
	// FreeMemory is the OpenCL vendor query for free memory (CL_DEVICE_GLOBAL_FREE_MEMORY_AMD), nil if absent.
	FreeMemory func() (uint64, error)
	GlobalMem  uint64
}

// TargetsFor describes OpenCL devices as sampler targets.
func TargetsFor(devs []*cl.Device, indices []int) []Target {
	ts := make([]Target, len(devs))
	for i, d := range devs {
		ts[i] = Target{Index: indices[i], PCIBusID: strings.ToLower(d.PCIBusID), FreeMemory: d.FreeMemoryAMD, GlobalMem: d.GlobalMem}
	}
	return ts
}

// DeviceSamplerFor picks the run's device sampler: the first source of this process's chain that applies
// to every target, in order: NVML, the OpenCL free-memory query, amdgpu sysfs, the process's DRM fdinfo
// counters. When none applies it returns nil and an Unavailable with the reason each gave.
func DeviceSamplerFor(ts []Target, root Root) (DeviceSampler, error) {
	return NewChain(ChainSpec{Root: root}).Pick(ts)
}

// Why a device sampler does not apply, for errors.Is; the error's text says it for the run's
// DeviceSampler ("not available: ...") and names the device. An NVML that could not be opened is NVML's
// own error (nvml.Return: nvml.ErrorLibraryNotFound, ...).
var (
	ErrNoPCIBusID = errors.New("the OpenCL device has no PCI bus id to match")
	ErrNotThere   = errors.New("the source has nothing for the device")
)

// Unavailable is why no device sampler applies: each sampler's reason, in the order they were tried.
type Unavailable []error

func (u Unavailable) Error() string {
	parts := make([]string, len(u))
	for i, err := range u {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (u Unavailable) Unwrap() []error { return u }

// reason is one sampler's reason, its text as the run records it, matching kind for errors.Is.
type reason struct {
	kind error
	text string
}

func (r *reason) Error() string { return r.text }
func (r *reason) Unwrap() error { return r.kind }

func unavailable(kind error, format string, args ...any) error {
	return &reason{kind: kind, text: fmt.Sprintf(format, args...)}
}

// nvmlSampler reads NVIDIA devices, matched to OpenCL devices by PCI bus id, never by position.
type nvmlSampler struct {
	n     *nvml.NVML
	order []int         // the run's device indices
	devs  []nvml.Device // the NVML device of each, in that order
	root  Root          // where the processes' names are read (Processes)
}

// OpenNVML opens NVML, or says in one line why it cannot, as every user of NVML reports it ("NVML:
// libnvidia-ml.so.1 not found"): the worker's sampler, and the GPU memory child of a trace. The error
// wraps NVML's own (errors.Is(err, nvml.ErrorLibraryNotFound)).
func OpenNVML() (*nvml.NVML, error) {
	n, err := nvml.Open()
	if errors.Is(err, nvml.ErrorLibraryNotFound) {
		return nil, unavailable(err, "NVML: %s not found", nvml.Library)
	}
	if err != nil {
		return nil, unavailable(err, "NVML: %v", err)
	}
	return n, nil
}

func newNVMLSampler(ts []Target, root Root) (DeviceSampler, error) {
	n, err := OpenNVML()
	if err != nil {
		return nil, err
	}
	s := &nvmlSampler{n: n, root: root}
	for _, t := range ts {
		if t.PCIBusID == "" {
			n.Close()
			return nil, unavailable(ErrNoPCIBusID, "NVML: OpenCL device %d has no PCI bus id to match", t.Index)
		}
		found := false
		for _, d := range n.Devices {
			if SamePCI(d.PCIBusID, t.PCIBusID) {
				found = true
				s.order, s.devs = append(s.order, t.Index), append(s.devs, d)
			}
		}
		if !found {
			n.Close()
			return nil, unavailable(ErrNotThere, "NVML: no NVML device at PCI %s (OpenCL device %d)", t.PCIBusID, t.Index)
		}
	}
	return s, nil
}

// SamePCI compares bus ids ignoring case and the function number, which vendors report inconsistently.
func SamePCI(a, b string) bool { return pciKey(a) == pciKey(b) }

func (s *nvmlSampler) Name() string { return "NVML (nvmlDeviceGetMemoryInfo, device-wide)" }

func (s *nvmlSampler) Read() ([]result.DeviceSample, error) {
	got, err := ReadNVML(s.n, s.devs, false)
	out := make([]result.DeviceSample, 0, len(got))
	for _, m := range got {
		out = append(out, result.DeviceSample{Device: s.order[m.Of], UsedBytes: m.UsedBytes, FreeBytes: m.FreeBytes})
	}
	return out, err
}

// NVMLMemory is one device's memory as ReadNVML reads it; Of is the device's position in those read.
type NVMLMemory struct {
	Of int
	wire.GPUMemory
}

// ReadNVML reads the memory of each of devs through n (nvmlDeviceGetMemoryInfo) and, with processes, the
// compute and graphics processes holding it: what a run's NVML sampler reads every sample, and trace's GPU
// memory child every period. A device that cannot be read is left out, the first such failure being the
// error; a process list that cannot be read is said beside its device's memory.
func ReadNVML(n *nvml.NVML, devs []nvml.Device, processes bool) ([]NVMLMemory, error) {
	mem, err := n.Memory(devs)
	out := make([]NVMLMemory, 0, len(mem))
	for _, m := range mem {
		d := devs[m.Of]
		g := NVMLMemory{Of: m.Of, GPUMemory: wire.GPUMemory{PCIBusID: d.PCIBusID, UsedBytes: m.Used, TotalBytes: m.Total, FreeBytes: m.Free}}
		if processes {
			procs, perr := n.Processes(d)
			if perr != nil {
				g.ProcessesError = perr.Error()
			}
			for _, p := range procs {
				g.Processes = append(g.Processes, wire.GPUProcess{PID: p.PID, Bytes: p.UsedBytes, Known: p.UsedKnown})
			}
		}
		out = append(out, g)
	}
	return out, err
}

// clQuerySampler asks the runtime itself (CL_DEVICE_GLOBAL_FREE_MEMORY_AMD); used = global - free.
type clQuerySampler struct{ ts []Target }

func newCLQuerySampler(ts []Target) (DeviceSampler, error) {
	for _, t := range ts {
		if t.FreeMemory == nil {
			return nil, unavailable(ErrNotThere, "CL_DEVICE_GLOBAL_FREE_MEMORY_AMD: not available")
		}
		if _, err := t.FreeMemory(); err != nil {
			return nil, unavailable(err, "CL_DEVICE_GLOBAL_FREE_MEMORY_AMD: device %d: %v", t.Index, err)
		}
	}
	return &clQuerySampler{ts: ts}, nil
}

func (s *clQuerySampler) Name() string { return "OpenCL CL_DEVICE_GLOBAL_FREE_MEMORY_AMD" }

func (s *clQuerySampler) Read() ([]result.DeviceSample, error) {
	out := make([]result.DeviceSample, 0, len(s.ts))
	for _, t := range s.ts {
		free, err := t.FreeMemory()
		if err != nil {
			return out, err
		}
		used := uint64(0)
		if t.GlobalMem > free {
			used = t.GlobalMem - free
		}
		out = append(out, result.DeviceSample{Device: t.Index, UsedBytes: used, FreeBytes: free})
	}
	return out, nil
}

// amdgpuSysfsSampler reads mem_info_vram_used, mem_info_vram_total and mem_info_gtt_used of the DRM card
// at the device's PCI address (device-wide, all processes).
type amdgpuSysfsSampler struct {
	dirs map[int]string
	ts   []Target
	root Root // where the processes holding the devices are read (Processes)
}

func newAMDGPUSysfsSampler(ts []Target, root Root) (DeviceSampler, error) {
	s := &amdgpuSysfsSampler{dirs: map[int]string{}, ts: ts, root: root}
	cards, _ := filepath.Glob(filepath.Join(root.Sys, "class", "drm", "card[0-9]*"))
	for _, t := range ts {
		if t.PCIBusID == "" {
			return nil, unavailable(ErrNoPCIBusID, "amdgpu sysfs: OpenCL device %d has no PCI bus id", t.Index)
		}
		for _, c := range cards {
			dev := filepath.Join(c, "device")
			link, err := filepath.EvalSymlinks(dev)
			if err != nil || !SamePCI(filepath.Base(link), t.PCIBusID) {
				continue
			}
			if _, err := os.Stat(filepath.Join(dev, "mem_info_vram_used")); err == nil {
				s.dirs[t.Index] = dev
			}
		}
		if s.dirs[t.Index] == "" {
			return nil, unavailable(ErrNotThere, "amdgpu sysfs: no card with mem_info_vram_used at PCI %s", t.PCIBusID)
		}
	}
	return s, nil
}

func (s *amdgpuSysfsSampler) Name() string {
	return "amdgpu sysfs mem_info_vram_used and mem_info_gtt_used (device-wide)"
}

func (s *amdgpuSysfsSampler) Read() ([]result.DeviceSample, error) {
	out := make([]result.DeviceSample, 0, len(s.ts))
	for _, t := range s.ts {
		dir := s.dirs[t.Index]
		used, err := ReadUint(filepath.Join(dir, "mem_info_vram_used"))
		if err != nil {
			return out, err
		}
		ds := result.DeviceSample{Device: t.Index, UsedBytes: used}
		if total, err := ReadUint(filepath.Join(dir, "mem_info_vram_total")); err == nil && total > used {
			ds.FreeBytes = total - used
		}
		// GTT: system memory the GPU maps, where buffers land when VRAM is full or they are host-visible.
		ds.GTTUsedBytes, _ = ReadUint(filepath.Join(dir, "mem_info_gtt_used"))
		out = append(out, ds)
	}
	return out, nil
}

// fdinfoSampler sums a process's DRM memory counters (drm-total-<region>) per device, from its
// /proc/<pid>/fdinfo: the per-process figure that i915, xe and amdgpu publish, which also counts memory
// that VmRSS does not show. Each DRM client is counted once, however many descriptors refer to it. For
// Intel GPUs it is the only source: xe and i915 publish a device's total memory in sysfs (xe's
// tile*/physical_vram_size_bytes) but its use only through their query ioctls.
type fdinfoSampler struct {
	proc  string         // the root's /proc, where the processes holding the devices are read (Processes)
	dir   string         // the process's own folder in it
	byPCI map[string]int // lower-case PCI id without function -> run index
	words drmWords
}

// drmWords are the DRM source's name and reasons, for this process (a run's words) or a traced program.
type drmWords struct {
	name      string
	noPCI     string // a device without a PCI bus id (its index)
	noDevices string // a program's chain before any device was seen
	none      string // no DRM client with counters for the devices
}

var (
	selfDRM = drmWords{name: "DRM fdinfo drm-total-* (this process)",
		noPCI: "DRM fdinfo: OpenCL device %d has no PCI bus id",
		none:  "DRM fdinfo: this process has no DRM client with drm-total-* counters for these devices"}
	programDRM = drmWords{name: "DRM fdinfo drm-total-* (the program's process)",
		noPCI:     "DRM fdinfo: traced device %d has no PCI bus id",
		noDevices: "DRM fdinfo: the program has no device the layer saw",
		none:      "DRM fdinfo: the program has no DRM client with drm-total-* counters for its devices"}
)

// drmSource is the DRM fdinfo source of process pid (0: this process). Where devices may appear later it
// keys the devices that have a PCI bus id and leaves out the rest; elsewhere every device must have one.
func drmSource(root Root, pid int, later bool) source {
	dir, w := filepath.Join(root.Proc, "self"), selfDRM
	if pid != 0 {
		dir, w = filepath.Join(root.Proc, strconv.Itoa(pid)), programDRM
	}
	src := source{idle: unavailable(ErrNotThere, "%s", w.none), open: func(ts []Target) (DeviceSampler, error) {
		byPCI, why := w.keys(ts, later)
		if why != nil && (!later || len(byPCI) == 0) {
			return nil, why
		}
		return &fdinfoSampler{proc: root.Proc, dir: dir, byPCI: byPCI, words: w}, nil
	}}
	if later {
		// At the end, the reason is said for the devices there were: one without a bus id, or none at all,
		// is why before the counters are.
		src.end = func(ts []Target, _ error) error {
			if _, why := w.keys(ts, true); why != nil {
				return why
			}
			return unavailable(ErrNotThere, "%s", w.none)
		}
	}
	return src
}

// keys keys the targets by PCI bus id to their indices, and says why one cannot be keyed: the first such
// target where every one must be, else the last, or that there is none at all.
func (w drmWords) keys(ts []Target, partial bool) (map[string]int, error) {
	byPCI := map[string]int{}
	var why error
	for _, t := range ts {
		if t.PCIBusID == "" {
			why = unavailable(ErrNoPCIBusID, w.noPCI, t.Index)
			if !partial {
				return nil, why
			}
			continue
		}
		byPCI[pciKey(t.PCIBusID)] = t.Index
	}
	if partial && len(ts) == 0 {
		why = unavailable(ErrNotThere, "%s", w.noDevices)
	}
	return byPCI, why
}

// pciKey is a bus id in lower case without the function number.
func pciKey(id string) string {
	id = strings.ToLower(id)
	if i := strings.LastIndexByte(id, '.'); i > 0 {
		id = id[:i]
	}
	return id
}

func (s *fdinfoSampler) Name() string { return s.words.name }

// Read is the process's DRM memory per device; none at all is ErrNotThere, which is why the chain passes
// over a process that holds no DRM client of its devices.
func (s *fdinfoSampler) Read() ([]result.DeviceSample, error) {
	got := drmUsed(s.dir, s.byPCI)
	if len(got) == 0 {
		return got, unavailable(ErrNotThere, "%s", s.words.none)
	}
	return got, nil
}

// own is the process's share of each device: all of what its own counters say it uses.
func (s *fdinfoSampler) own(got []result.DeviceSample) []result.TraceDeviceUse {
	out := make([]result.TraceDeviceUse, 0, len(got))
	for _, g := range got {
		out = append(out, result.TraceDeviceUse{Device: g.Device, Bytes: g.UsedBytes})
	}
	return out
}

// drmUsed sums the DRM clients of the process whose /proc folder is dir per device (byPCI: PCI key to the
// device's index), each client once however many descriptors refer to it, in device order.
func drmUsed(dir string, byPCI map[string]int) []result.DeviceSample {
	used := map[int]uint64{}
	eachDRMClient(filepath.Join(dir, "fdinfo"), byPCI, map[string]bool{}, func(idx int, c DRMClient) {
		used[idx] += c.TotalBytes
	})
	out := make([]result.DeviceSample, 0, len(used))
	for idx, u := range used {
		out = append(out, result.DeviceSample{Device: idx, UsedBytes: u})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out
}

// eachDRMClient calls visit, in descriptor order, for each DRM client in the fdinfo folder dir whose device
// byPCI knows (PCI key to the device's index) and that seen (drm-pdev/drm-client-id) does not hold yet, and
// adds it to seen: a client that several descriptors refer to (dup), or several processes (fork), counts once
// over every folder walked with the same seen. A folder it may not read (another user's process, or one that
// has ended) holds no client it can see, which is no error: the kernel shows only what it lets us read.
func eachDRMClient(dir string, byPCI map[string]int, seen map[string]bool, visit func(idx int, c DRMClient)) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		c, ok := ParseFdinfo(filepath.Join(dir, e.Name()))
		if !ok {
			continue // not a DRM client: a file, a pipe, a socket
		}
		idx, mine := byPCI[pciKey(c.PDev)]
		if !mine || seen[c.PDev+"/"+c.ClientID] {
			continue
		}
		seen[c.PDev+"/"+c.ClientID] = true
		visit(idx, c)
	}
}

// DRMClient is what one fdinfo file says about a DRM client.
type DRMClient struct {
	PDev, ClientID, Driver string
	TotalBytes             uint64 // sum of drm-total-<region>
	ResidentBytes          uint64 // sum of drm-resident-<region>
}

// ParseFdinfo reads one /proc/<pid>/fdinfo/<fd> file; ok is false for descriptors that are not DRM clients.
func ParseFdinfo(path string) (DRMClient, bool) {
	f, err := os.Open(path)
	if err != nil {
		return DRMClient{}, false
	}
	defer f.Close()
	var c DRMClient
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch {
		case k == "drm-pdev":
			c.PDev = v
		case k == "drm-client-id":
			c.ClientID = v
		case k == "drm-driver":
			c.Driver = v
		case strings.HasPrefix(k, "drm-total-"):
			c.TotalBytes += parseMemValue(v)
		case strings.HasPrefix(k, "drm-resident-"):
			c.ResidentBytes += parseMemValue(v)
		}
	}
	return c, c.PDev != "" && c.Driver != ""
}

// parseMemValue reads "123 KiB" (units B, KiB, MiB, GiB) as bytes.
func parseMemValue(v string) uint64 {
	f := strings.Fields(v)
	if len(f) == 0 {
		return 0
	}
	n, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0
	}
	if len(f) > 1 {
		switch f[1] {
		case "KiB":
			n <<= 10
		case "MiB":
			n <<= 20
		case "GiB":
			n <<= 30
		}
	}
	return n
}
