package system

import (
	"bufio"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/keep"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// driverPackages are name prefixes of the packages GPU drivers and OpenCL runtimes ship as, per vendor:
// what their trackers ask a reporter to list.
var driverPackages = []string{
	// Intel: the OpenCL runtime, its compiler (IGC), memory manager (GMM), Level Zero, firmware
	"intel-opencl-icd", "intel-igc", "libigc", "libigdfcl", "libigdgmm", "intel-level-zero-gpu", "libze-intel-gpu", "libze1",
	"level-zero", "intel-gsc", "intel-metrics-discovery", "intel-ocloc",
	// AMD: ROCm's OpenCL and its runtime, the kernel driver
	"rocm-opencl", "rocm-ocl-icd", "rocm-core", "hsa-rocr", "hsa-runtime", "comgr", "amdgpu-dkms", "rocm-hip-runtime",
	// NVIDIA: the driver and its OpenCL, compute and management libraries, the kernel modules
	"nvidia-driver", "nvidia-opencl", "nvidia-kernel", "nvidia-dkms", "nvidia-open", "nvidia-utils", "nvidia-compute",
	"libnvidia-compute", "libnvidia-ml", "libnvidia-gl", "libcuda1", "cuda-drivers", "nvidia-fabricmanager",
	// CUDA's user-space driver pieces: cuda-compat carries a driver's libraries of its own version, which may
	// differ from the kernel module's
	"cuda-compat", "cuda-opencl", "cuda-driver", "cuda-nvml", "cuda-cudart",
	// PoCL, Mesa (rusticl, clover)
	"pocl-opencl-icd", "libpocl", "mesa-opencl-icd", "libgl1-mesa-dri", "mesa-libopencl", "mesa-vulkan-drivers",
	// ICD loaders and clinfo
	"ocl-icd", "khronos-opencl-icd-loader", "opencl-icd-loader", "clinfo",
	// the kernel's firmware for GPUs
	"firmware-misc-nonfree", "firmware-amd-graphics", "linux-firmware",
}

func isDriverPackage(name string) bool {
	name = strings.ToLower(name)
	for _, p := range driverPackages {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// collectPackages reads the package database: dpkg's status file and file lists, else rpm's answers.
func collectPackages(root sample.Root, libs []string, s *result.System) string {
	status := filepath.Join(root.Var, dpkgStatusFile)
	f, err := os.Open(status)
	if err == nil {
		defer f.Close()
		installed, err := parseDpkgStatus(io.LimitReader(f, 64<<20))
		s.PackageManager = "dpkg"
		owners := dpkgOwners(filepath.Join(root.Var, dpkgListsDir), libs)
		s.Packages, s.Unowned = dpkgPackages(installed, owners), unowned(libs, owners)
		if err != nil { // what was read before the error is kept
			return "cannot read all of " + status + ": " + errText(err)
		}
		return ""
	}
	if root.Var != sample.System.Var {
		return "no package database under " + root.Var + " (" + errText(err) + ")"
	}
	if _, lerr := exec.LookPath("rpm"); lerr == nil {
		pkgs, owners, why := rpmPackages(libs)
		s.PackageManager, s.Packages, s.Unowned = "rpm", pkgs, unowned(libs, owners)
		return why
	}
	return "no package database: neither " + status + " nor rpm (list the driver's packages with your package manager)"
}

// parseDpkgStatus reads dpkg's status file: the installed packages' versions, by name (an architecture
// qualified name, libfoo:amd64, keeps its plain name).
func parseDpkgStatus(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	var name, version, state string
	flush := func() {
		if name != "" && version != "" && strings.HasSuffix(state, " installed") {
			out[name] = version
		}
		name, version, state = "", "", ""
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "Package: "):
			name = clean(strings.TrimPrefix(line, "Package: "))
		case strings.HasPrefix(line, "Version: "):
			version = clean(strings.TrimPrefix(line, "Version: "))
		case strings.HasPrefix(line, "Status: "):
			state = strings.TrimSpace(strings.TrimPrefix(line, "Status: "))
		}
	}
	flush()
	return out, sc.Err()
}

// dpkgOwners finds which package's file list holds each library: the exact path for an absolute one,
// any path ending in /NAME for a bare name (the dynamic linker's search). It returns library -> package.
func dpkgOwners(infoDir string, libs []string) map[string]string {
	owners := map[string]string{}
	want := map[string]string{} // a path or "/"+name -> the library as given
	for _, l := range libs {
		if l == "" {
			continue
		}
		if filepath.IsAbs(l) {
			want[filepath.Clean(l)] = l
		} else {
			want["/"+filepath.Base(l)] = l
		}
	}
	if len(want) == 0 {
		return owners
	}
	lists, _ := filepath.Glob(filepath.Join(infoDir, "*.list"))
	for _, list := range lists {
		pkg, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(list), ".list"), ":")
		_ = lines(list, func(path string) bool {
			for key, lib := range want {
				if _, done := owners[lib]; done {
					continue
				}
				if path == key || (strings.HasPrefix(key, "/") && !strings.Contains(key[1:], "/") && strings.HasSuffix(path, key) && isLibDir(filepath.Dir(path))) {
					owners[lib] = pkg
				}
			}
			return len(owners) == len(want)
		})
		if len(owners) == len(want) {
			break
		}
	}
	return owners
}

// isLibDir says whether a folder is one the dynamic linker searches by default or through ld.so.conf.d
// on Debian and Fedora.
func isLibDir(dir string) bool {
	return strings.HasPrefix(dir, "/usr/lib") || strings.HasPrefix(dir, "/lib") || strings.HasPrefix(dir, "/opt/")
}

// dpkgPackages is the recorded list: the owners of the run's libraries first, then the vendors' usual
// packages, each once, at most maxItems.
func dpkgPackages(installed map[string]string, owners map[string]string) []result.Package {
	var out []result.Package
	seen := map[string]bool{}
	for _, lib := range slices.Sorted(maps.Keys(owners)) {
		pkg := owners[lib]
		if v, ok := installed[pkg]; ok && !seen[pkg] {
			out = append(out, result.Package{Name: pkg, Version: v, Owns: clean(lib)})
			seen[pkg] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(installed)) {
		if len(out) >= maxItems {
			break
		}
		if !seen[name] && isDriverPackage(name) {
			out = append(out, result.Package{Name: name, Version: installed[name]})
			seen[name] = true
		}
	}
	return out
}

// rpmTimeout bounds each rpm query: a locked or broken database must not hold the run.
const rpmTimeout = 10 * time.Second

// unowned are the run's OpenCL files no package owns: installed by hand, by a vendor's installer or by a
// container runtime (NVIDIA's mounts its driver's libraries), which a ticket should say.
func unowned(libs []string, owners map[string]string) []string {
	var out []string
	for _, l := range libs {
		if _, ok := owners[l]; !ok && l != "" && !slices.Contains(out, clean(l)) && len(out) < maxItems {
			out = append(out, clean(l))
		}
	}
	return out
}

// rpmPackages asks rpm for the installed driver packages and the owners of the run's libraries.
func rpmPackages(libs []string) ([]result.Package, map[string]string, string) {
	query := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), rpmTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, "rpm", args...).Output()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", errors.New("rpm did not answer in 10 s")
		}
		return string(out), err
	}
	all, err := query("-qa", "--qf", `%{NAME}\t%{VERSION}-%{RELEASE}\n`)
	if err != nil {
		return nil, nil, "rpm -qa failed: " + clean(err.Error())
	}
	installed := parseRPMList(all)
	owners := map[string]string{}
	for _, l := range libs {
		if !filepath.IsAbs(l) {
			continue
		}
		if out, err := query("-qf", "--qf", `%{NAME}\n`, l); err == nil {
			if name := clean(strings.TrimSpace(out)); name != "" && !strings.Contains(name, " ") {
				owners[l] = name
			}
		}
	}
	return dpkgPackages(installed, owners), owners, ""
}

// parseRPMList reads rpm -qa's "NAME\tVERSION-RELEASE" lines.
func parseRPMList(out string) map[string]string {
	installed := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if name, version, ok := strings.Cut(line, "\t"); ok && name != "" {
			installed[clean(name)] = clean(version)
		}
	}
	return installed
}

// Reading dpkg's database (its status file and every package's file list) took 40 ms of the 60 ms an
// environment block took on this project's VM, at the end of every short traced program. Its answer
// changes only with the status file, the folder of file lists (dpkg renames a new list into it) and the
// libraries asked about, so it is kept in the user's cache folder with them (keptPackagesFile, the newest
// keptPackageAnswers answers: run and trace ask about different libraries).
const (
	keptPackagesFile             = "packages.json"
	keptPackageAnswers           = 4
	dpkgStatusFile, dpkgListsDir = "lib/dpkg/status", "lib/dpkg/info"
)

// keptPackages is one kept answer of collectPackages and what it holds for.
type keptPackages struct {
	Key      string           `json:"key"`
	Why      string           `json:"why,omitempty"`
	Manager  string           `json:"manager"`
	Packages []result.Package `json:"packages,omitempty"`
	Unowned  []string         `json:"unowned,omitempty"`
}

// collectPackagesKept is collectPackages with its dpkg answer kept in dir.
func collectPackagesKept(root sample.Root, libs []string, dir string, s *result.System) string {
	status := keep.Identity(filepath.Join(root.Var, dpkgStatusFile))
	if status == "" {
		return collectPackages(root, libs, s)
	}
	key := strings.Join(append([]string{root.Var, status, keep.Identity(filepath.Join(root.Var, dpkgListsDir))}, libs...), "\x00")
	var kept []keptPackages
	keep.Read(dir, keptPackagesFile, &kept)
	for _, k := range kept {
		if k.Key == key {
			s.PackageManager, s.Packages, s.Unowned = k.Manager, k.Packages, k.Unowned
			return k.Why
		}
	}
	why := collectPackages(root, libs, s)
	if s.PackageManager != "dpkg" || why != "" { // only a whole answer is kept
		return why
	}
	fresh := []keptPackages{{Key: key, Why: why, Manager: s.PackageManager, Packages: s.Packages, Unowned: s.Unowned}}
	for _, k := range kept {
		if k.Key != key && len(fresh) < keptPackageAnswers {
			fresh = append(fresh, k)
		}
	}
	keep.Write(dir, keptPackagesFile, fresh)
	return why
}
