package system

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// tree writes a fixture tree: files by path, and symlinks where the content starts with "->".
func tree(t *testing.T, files map[string]string) sample.Root {
	t.Helper()
	dir := t.TempDir()
	for path, body := range files {
		full := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(body, "->"); ok {
			err = os.Symlink(target, full)
		} else {
			err = os.WriteFile(full, []byte(body), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return sample.Under(dir)
}

// An H200 as sysfs shows it: a 3D controller bound to nvidia, a 64 GiB prefetchable BAR 1 and a 32 MiB one.
var h200 = map[string]string{
	"sys/bus/pci/devices/0000:18:00.0/class":              "0x030200\n",
	"sys/bus/pci/devices/0000:18:00.0/vendor":             "0x10de\n",
	"sys/bus/pci/devices/0000:18:00.0/device":             "0x2335\n",
	"sys/bus/pci/devices/0000:18:00.0/subsystem_vendor":   "0x10de\n",
	"sys/bus/pci/devices/0000:18:00.0/subsystem_device":   "0x18be\n",
	"sys/bus/pci/devices/0000:18:00.0/revision":           "0xa1\n",
	"sys/bus/pci/devices/0000:18:00.0/current_link_speed": "32.0 GT/s PCIe\n",
	"sys/bus/pci/devices/0000:18:00.0/current_link_width": "16\n",
	"sys/bus/pci/devices/0000:18:00.0/max_link_speed":     "32.0 GT/s PCIe\n",
	"sys/bus/pci/devices/0000:18:00.0/max_link_width":     "16\n",
	"sys/bus/pci/devices/0000:18:00.0/numa_node":          "0\n",
	"sys/bus/pci/devices/0000:18:00.0/driver":             "->../../../bus/pci/drivers/nvidia",
	"sys/bus/pci/devices/0000:18:00.0/resource": "0x00000000d0000000 0x00000000d3ffffff 0x0000000000040200\n" +
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n" +
		"0x0000200000000000 0x0000200fffffffff 0x000000000014220c\n" +
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n" +
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n" +
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n" +
		"0x00000000d4000000 0x00000000d407ffff 0x0000000000046200\n",
	"sys/bus/pci/devices/0000:00:01.0/class":           "0x060400\n", // a bridge: not a GPU
	"proc/driver/nvidia/gpus/0000:18:00.0/information": "Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-0f0e0d0c-aaaa-bbbb-cccc-000011112222\nVideo BIOS: \t 96.00.af.00.01\n",
	"proc/driver/nvidia/version":                       "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22-I3-AE18-23-3)  Thu Sep 11 2025\nGCC version:  gcc version 12.3.0\n",
	"proc/modules":                                     "nvidia_uvm 2076672 0 - Live 0x0000000000000000 (O)\nnvidia 11583488 2 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (O)\next4 1036288 1 - Live 0x0000000000000000\n",
	"sys/module/nvidia/version":                        "580.159.04\n",
	"proc/cmdline":                                     "BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=1234 ro iommu=pt token=hunter2\n",
	"proc/sys/kernel/version":                          "#1 SMP PREEMPT_DYNAMIC Debian 6.1.129-1\n",
	"etc/os-release":                                   "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n",
	"dev/dri/by-path/pci-0000:18:00.0-render":          "->../renderD128",
	"var/lib/dpkg/status":                              dpkgStatus,
	"var/lib/dpkg/info/ocl-icd-libopencl1:amd64.list":  "/.\n/usr\n/usr/lib/x86_64-linux-gnu/libOpenCL.so.1\n/usr/lib/x86_64-linux-gnu/libOpenCL.so.1.0.0\n",
	"var/lib/dpkg/info/nvidia-opencl-icd.list":         "/etc/OpenCL/vendors/nvidia.icd\n/usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1\n",
	"var/lib/dpkg/info/libc6:amd64.list":               "/usr/lib/x86_64-linux-gnu/libc.so.6\n",
}

const dpkgStatus = `Package: ocl-icd-libopencl1
Status: install ok installed
Architecture: amd64
Version: 2.3.1-1

Package: nvidia-opencl-icd
Status: install ok installed
Version: 580.159.04-1

Package: nvidia-driver-old
Status: deinstall ok config-files
Version: 470.1-1

Package: libnvidia-ml1
Status: install ok installed
Version: 580.159.04-1

Package: libc6
Status: install ok installed
Version: 2.36-9
`

func TestCollectReadsAnH200Machine(t *testing.T) {
	s := Collect(tree(t, h200), []string{"libOpenCL.so.1", "libnvidia-opencl.so.1", "/usr/local/nvidia/lib64/libcuda.so.1"})
	if len(s.Unread) != 0 {
		t.Errorf("unread: %v", s.Unread)
	}
	if len(s.PCI) != 1 {
		t.Fatalf("PCI devices = %+v, want the one 3D controller", s.PCI)
	}
	d := s.PCI[0]
	if d.Address != "0000:18:00.0" || d.Vendor != "0x10de" || d.Device != "0x2335" || d.Driver != "nvidia" || d.LinkSpeed != "32.0 GT/s PCIe" {
		t.Errorf("device = %+v", d)
	}
	// BAR 0: 0xd0000000..0xd3ffffff is 64 MiB; BAR 2 spans 0x1000000000 bytes (64 GiB), prefetchable, 64-bit.
	want := []result.PCIBar{{Index: 0, Bytes: 0xd3ffffff - 0xd0000000 + 1}, {Index: 2, Bytes: 0x200fffffffff - 0x200000000000 + 1, Prefetchable: true, Bits64: true}}
	if len(d.BARs) != len(want) || d.BARs[0] != want[0] || d.BARs[1] != want[1] {
		t.Errorf("BARs = %+v, want %+v (the ROM, region 6, is not a BAR)", d.BARs, want)
	}
	if d.Firmware["video_bios"] != "96.00.af.00.01" {
		t.Errorf("firmware = %v", d.Firmware)
	}
	if s.NVIDIADriver != "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22-I3-AE18-23-3)  Thu Sep 11 2025" {
		t.Errorf("NVIDIA driver = %q", s.NVIDIADriver)
	}
	if len(s.Modules) != 2 || s.Modules[0].Name != "nvidia" || s.Modules[0].Version != "580.159.04" || strings.Join(s.Modules[0].UsedBy, ",") != "nvidia_uvm,nvidia_modeset" {
		t.Errorf("modules = %+v (ext4 is not a GPU module)", s.Modules)
	}
	if s.BootParameters != "BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=1234 ro iommu=pt token="+result.Redacted {
		t.Errorf("boot parameters = %q", s.BootParameters)
	}
	if s.Distribution != "Debian GNU/Linux 12 (bookworm)" || s.KernelBuild != "#1 SMP PREEMPT_DYNAMIC Debian 6.1.129-1" {
		t.Errorf("distribution %q, kernel build %q", s.Distribution, s.KernelBuild)
	}
	if s.DRIByPath["pci-0000:18:00.0-render"] != "renderD128" {
		t.Errorf("DRI by path = %v", s.DRIByPath)
	}
	got := map[string]result.Package{}
	for _, p := range s.Packages {
		got[p.Name] = p
	}
	if p := got["ocl-icd-libopencl1"]; p.Version != "2.3.1-1" || p.Owns != "libOpenCL.so.1" {
		t.Errorf("loader package = %+v", p)
	}
	if p := got["nvidia-opencl-icd"]; p.Version != "580.159.04-1" || p.Owns != "libnvidia-opencl.so.1" {
		t.Errorf("ICD package = %+v", p)
	}
	if p := got["libnvidia-ml1"]; p.Version != "580.159.04-1" || p.Owns != "" {
		t.Errorf("the vendor's usual package = %+v", p)
	}
	if _, ok := got["nvidia-driver-old"]; ok {
		t.Error("a removed package (config-files) was recorded")
	}
	if _, ok := got["libc6"]; ok {
		t.Error("libc6 is not a driver package")
	}
	if len(s.Unowned) != 1 || s.Unowned[0] != "/usr/local/nvidia/lib64/libcuda.so.1" {
		t.Errorf("unowned = %v, want the library no package lists", s.Unowned)
	}
	if s.PackageManager != "dpkg" {
		t.Errorf("package manager = %q", s.PackageManager)
	}
}

// An Intel Arc as sysfs shows it, with a small BAR 2 (256 MiB: no resizable BAR) and two DRM nodes.
func TestCollectReadsAnIntelGPUWithItsDRMNodes(t *testing.T) {
	s := Collect(tree(t, map[string]string{
		"sys/bus/pci/devices/0000:03:00.0/class":              "0x030000\n",
		"sys/bus/pci/devices/0000:03:00.0/vendor":             "0x8086\n",
		"sys/bus/pci/devices/0000:03:00.0/device":             "0x56a0\n",
		"sys/bus/pci/devices/0000:03:00.0/driver":             "->../../../bus/pci/drivers/i915",
		"sys/bus/pci/devices/0000:03:00.0/resource":           "0x00000000a0000000 0x00000000a0ffffff 0x0000000000040200\n0 0 0\n0x0000004000000000 0x000000400fffffff 0x000000000014220c\n",
		"sys/bus/pci/devices/0000:03:00.0/drm/renderD128/dev": "226:128\n",
		"sys/bus/pci/devices/0000:03:00.0/drm/card1/dev":      "226:1\n",
		"sys/bus/pci/devices/0000:03:00.0/drm/controlD64/dev": "226:64\n",
	}), nil)
	if len(s.PCI) != 1 {
		t.Fatalf("PCI = %+v", s.PCI)
	}
	d := s.PCI[0]
	if d.Driver != "i915" || strings.Join(d.DRM, ",") != "card1,renderD128" {
		t.Errorf("driver %q, DRM %v", d.Driver, d.DRM)
	}
	if len(d.BARs) != 2 || d.BARs[1].Bytes != 256<<20 {
		t.Errorf("BARs = %+v, want BAR 2 of 256 MiB", d.BARs)
	}
	// No package database in the tree, no modules file: each collector says so alone.
	for _, c := range []string{"packages", "modules", "kernel", "distribution"} {
		if s.Unread[c] == "" {
			t.Errorf("collector %s said nothing of what it could not read: %v", c, s.Unread)
		}
	}
	if s.Unread["pci"] != "" || s.Unread["dri"] != "" {
		t.Errorf("pci and dri read their parts: %v", s.Unread)
	}
}

// Hostile and broken files: control bytes, oversized lines, a module name that is a path, garbage where
// numbers belong, a folder where a file belongs. Nothing panics, nothing unbounded is kept.
func TestCollectSurvivesHostileFiles(t *testing.T) {
	long := strings.Repeat("A", 3<<20)
	s := Collect(tree(t, map[string]string{
		"etc/os-release":                            "PRETTY_NAME=\"evil\x1b[31mred\x07\"\n",
		"proc/cmdline":                              long,
		"proc/modules":                              "../../etc 1 0 - Live 0x0\nnvidia 1 0 - Live 0x0\n" + long + "\n",
		"sys/module/nvidia/version/x":               "a folder where the version file belongs",
		"sys/bus/pci/devices/0000:01:00.0/class":    "0x030000",
		"sys/bus/pci/devices/0000:01:00.0/vendor":   "\x00\x01\x02",
		"sys/bus/pci/devices/0000:01:00.0/resource": "zz yy xx\n0x10 0x0 0x200\n" + long,
		"var/lib/dpkg/status":                       "Package: pocl-opencl-icd\nStatus: install ok installed\nVersion: 5.0\x1b]0;title\x07\n\n" + long,
	}), []string{"libpocl.so.2"})
	if strings.ContainsAny(s.Distribution, "\x1b\x07") {
		t.Errorf("distribution kept control bytes: %q", s.Distribution)
	}
	if len(s.BootParameters) > maxCmdline+3 {
		t.Errorf("boot parameters kept %d bytes", len(s.BootParameters))
	}
	for _, m := range s.Modules {
		if strings.Contains(m.Name, "/") {
			t.Errorf("a module named %q was read", m.Name)
		}
		if m.Name == "nvidia" && m.Version != "" {
			t.Errorf("a folder gave version %q", m.Version)
		}
	}
	if len(s.PCI) != 1 || len(s.PCI[0].BARs) != 0 || strings.ContainsAny(s.PCI[0].Vendor, "\x00\x01") {
		t.Errorf("PCI = %+v", s.PCI)
	}
	if len(s.Packages) != 1 || strings.ContainsAny(s.Packages[0].Version, "\x1b\x07") {
		t.Errorf("packages = %+v", s.Packages)
	}
}

// Files that cannot be read (a folder where the file belongs) leave their part empty and say so.
func TestCollectSaysWhatItCouldNotRead(t *testing.T) {
	s := Collect(tree(t, map[string]string{
		"etc/os-release/x":      "a folder",
		"var/lib/dpkg/status/x": "a folder",
		"proc/modules/x":        "a folder",
		"sys/bus/pci/x":         "no devices folder",
	}), []string{"libOpenCL.so.1"})
	for _, c := range []string{"distribution", "packages", "modules", "pci"} {
		if !strings.Contains(s.Unread[c], "cannot read") {
			t.Errorf("%s: %q", c, s.Unread[c])
		}
	}
	if s.Distribution != "" || len(s.Packages) != 0 || len(s.Modules) != 0 || len(s.PCI) != 0 {
		t.Errorf("read from nothing: %+v", s)
	}
}

func TestBootParametersHideSecretsQuotedOrNot(t *testing.T) {
	got := redactBootParameters(`ro foo.password="hunter2 s3cr3t-part" Password=Hunter3 quiet`)
	if want := "ro foo.password=" + result.Redacted + " Password=" + result.Redacted + " quiet"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if bars := readBARs(writeFile(t, "0x0 0xffffffffffffffff 0x200\n")); len(bars) != 0 {
		t.Errorf("a region spanning the whole address space: %+v", bars)
	}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestParseRPMList(t *testing.T) {
	got := parseRPMList("intel-opencl\t24.52.32224.5-1.fc41\nkernel\t6.12.4-200.fc41\nbroken line\n")
	if got["intel-opencl"] != "24.52.32224.5-1.fc41" || len(got) != 2 {
		t.Errorf("parsed %v", got)
	}
	pkgs := dpkgPackages(got, map[string]string{"/usr/lib64/libigdrcl.so": "intel-opencl"})
	if len(pkgs) != 1 || pkgs[0].Owns != "/usr/lib64/libigdrcl.so" {
		t.Errorf("packages %+v: the owner once, kernel is not a driver package", pkgs)
	}
}

// The ticket carries the kernel's own parameters: the kernel stops at a "--" word, and what follows is
// init's (a virtual machine's init arguments, a container runtime's). The secret redaction still holds.
func TestBootParametersStopAtInitsSeparator(t *testing.T) {
	cases := []struct {
		name, cmdline, want string
	}{
		{"no separator", "BOOT_IMAGE=/vmlinuz ro quiet\n", "BOOT_IMAGE=/vmlinuz ro quiet"},
		{"a virtual machine's init arguments", "console=ttyS0 reboot=k panic=1 pci=off -- /sbin/guest-init --job 42 --token=abc\n",
			"console=ttyS0 reboot=k panic=1 pci=off"},
		{"a secret before the separator", "ro Password=hunter2 -- init.password=x\n", "ro Password=" + result.Redacted},
		{"a separator at the end", "ro quiet --\n", "ro quiet"},
		{"a quoted separator", `ro "--" single`, "ro"},
		{"a separator inside a quoted value", `ro acpi_osi="Linux -- x" quiet -- init`, `ro acpi_osi="Linux -- x" quiet`},
		{"dashes that are not the separator", "ro --- a--b -x -- init", "ro --- a--b -x"},
		{"only init's", "-- init\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Collect(tree(t, map[string]string{"proc/cmdline": c.cmdline}), []string{"libOpenCL.so.1"})
			if s.BootParameters != c.want {
				t.Errorf("%q: boot parameters %q, want %q", c.cmdline, s.BootParameters, c.want)
			}
			if why := s.Unread["kernel"]; why != "" { // read, even where the kernel has no parameter of its own
				t.Errorf("%q: unread %q", c.cmdline, why)
			}
		})
	}
}
