// Package icd reads what the ICD loader reads, the .icd files that register vendor runtimes, and what a
// runtime needs from the machine before it reports a platform: the device nodes of its GPUs, and the
// right to open them. It only reads files; loading a runtime is the diagnosing child's job.
package icd

import (
	"bufio"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"golang.org/x/sys/unix"
)

// File is one registered runtime: the .icd file and the library it names.
type File struct {
	Path, Library string
}

// Registered is the .icd files the loader reads: OCL_ICD_VENDORS (a folder, or one file) where it is set,
// else etc/OpenCL/vendors; dir is the folder (or file) read. A file's first line names its library.
func Registered(etc string) (dir string, files []File) {
	dir = os.Getenv("OCL_ICD_VENDORS")
	if dir == "" {
		dir = filepath.Join(etc, "OpenCL", "vendors")
	}
	var paths []string
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		paths = []string{dir}
	} else {
		paths, _ = filepath.Glob(filepath.Join(dir, "*.icd"))
	}
	for _, p := range paths {
		files = append(files, File{Path: p, Library: firstLine(p)})
	}
	return dir, files
}

// firstLine is a file's first line, trimmed and bounded: an .icd file is one line naming a library.
func firstLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 4096), 4096)
	if s.Scan() {
		return strings.TrimSpace(s.Text())
	}
	return ""
}

// Need is what a kind of runtime needs before it reports a platform: device nodes (glob patterns under
// /dev), the kernel drivers that make them, and the vendor's name.
type Need struct {
	Vendor  string
	Nodes   []string // globs under /dev: "dri/renderD*"
	Drivers string   // "i915 or xe"
}

// needs are the runtimes known to need a GPU's device node, by their library's name (the names Debian's,
// Intel's, AMD's and NVIDIA's packages install). PoCL's CPU devices and Mesa's llvmpipe need none.
var needs = []struct {
	library string
	need    Need
}{
	{"libigdrcl", Need{Vendor: "Intel's compute-runtime (NEO)", Nodes: []string{"dri/renderD*"}, Drivers: "i915 or xe"}},
	{"libamdocl", Need{Vendor: "AMD's ROCm", Nodes: []string{"kfd", "dri/renderD*"}, Drivers: "amdgpu"}},
	{"libnvidia-opencl", Need{Vendor: "NVIDIA's driver", Nodes: []string{"nvidia[0-9]*", "nvidiactl"}, Drivers: "nvidia"}},
	{"libRusticlOpenCL", Need{Vendor: "Mesa's rusticl", Nodes: []string{"dri/renderD*"}, Drivers: "a driver RUSTICL_ENABLE names (RUSTICL_ENABLE=llvmpipe for the CPU, radeonsi or iris for a GPU)"}},
	{"libMesaOpenCL", Need{Vendor: "Mesa's Clover", Nodes: []string{"dri/renderD*"}, Drivers: "amdgpu, radeon or nouveau"}},
}

// NeedOf is what the runtime whose library is named needs; ok is false for a runtime not known to need a
// device node.
func NeedOf(library string) (Need, bool) {
	base := filepath.Base(library)
	for _, n := range needs {
		if strings.HasPrefix(base, n.library) {
			return n.need, true
		}
	}
	return Need{}, false
}

// Nodes lists the device nodes under dev that match the need's patterns, in order.
func Nodes(dev string, n Need) []result.DeviceNode {
	var out []result.DeviceNode
	for _, pattern := range n.Nodes {
		paths, _ := filepath.Glob(filepath.Join(dev, pattern))
		slices.Sort(paths)
		for _, p := range paths {
			node := result.DeviceNode{Path: p, Usable: unix.Access(p, unix.R_OK|unix.W_OK) == nil}
			var st syscall.Stat_t
			if syscall.Stat(p, &st) == nil {
				node.Group = groupName(st.Gid)
			}
			out = append(out, node)
		}
	}
	return out
}

// groupName is the name of group gid, else its number.
func groupName(gid uint32) string {
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	return id
}
