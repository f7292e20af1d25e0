package system

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// isGPUClass says whether a PCI class code is a display controller (0x03xxxx: VGA, 3D, other) or a
// processing accelerator (0x1200xx), the classes GPUs and compute cards use.
func isGPUClass(class string) bool {
	return strings.HasPrefix(class, "0x03") || strings.HasPrefix(class, "0x1200")
}

// The resource flags of a PCI region (include/linux/ioport.h).
const (
	ioresourceMem      = 0x200
	ioresourcePrefetch = 0x2000
	ioresourceMem64    = 0x100000
)

// collectPCI reads every GPU-class PCI function under /sys/bus/pci/devices.
func collectPCI(root sample.Root, _ []string, s *result.System) string {
	dir := filepath.Join(root.Sys, "bus/pci/devices")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "cannot read " + dir + ": " + errText(err)
	}
	for _, e := range entries {
		if len(s.PCI) >= maxItems {
			break
		}
		dev := filepath.Join(dir, e.Name())
		class := readField(filepath.Join(dev, "class"))
		if !isGPUClass(class) {
			continue
		}
		s.PCI = append(s.PCI, readPCIDevice(root, dev, clean(e.Name()), class))
	}
	return ""
}

func readPCIDevice(root sample.Root, dev, address, class string) result.PCIDevice {
	field := func(name string) string { return readField(filepath.Join(dev, name)) }
	d := result.PCIDevice{Address: address, Class: class, Vendor: field("vendor"), Device: field("device"),
		SubsystemVendor: field("subsystem_vendor"), SubsystemDevice: field("subsystem_device"), Revision: field("revision"),
		LinkSpeed: field("current_link_speed"), LinkWidth: field("current_link_width"), MaxLinkSpeed: field("max_link_speed"),
		MaxLinkWidth: field("max_link_width"), NUMANode: field("numa_node")}
	// The driver is the name of the link's target; the link itself is not followed.
	if link, err := os.Readlink(filepath.Join(dev, "driver")); err == nil {
		d.Driver = clean(filepath.Base(link))
	}
	d.BARs = readBARs(filepath.Join(dev, "resource"))
	if nodes, err := os.ReadDir(filepath.Join(dev, "drm")); err == nil {
		for _, n := range nodes {
			if name := n.Name(); strings.HasPrefix(name, "card") || strings.HasPrefix(name, "renderD") {
				d.DRM = append(d.DRM, clean(name))
			}
		}
		sort.Strings(d.DRM)
	}
	firmware := map[string]string{}
	if v := field("vbios_version"); v != "" { // amdgpu
		firmware["vbios_version"] = v
	}
	// The NVIDIA driver's own file for the GPU: its "Video BIOS" line (the file's UUID is an identity and is
	// not read).
	_ = lines(filepath.Join(root.Proc, "driver/nvidia/gpus", address, "information"), func(line string) bool {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "Video BIOS" {
			firmware["video_bios"] = clean(v)
			return true
		}
		return false
	})
	if len(firmware) > 0 {
		d.Firmware = firmware
	}
	return d
}

// readBARs reads a PCI device's resource file: one "start end flags" line per region, the first six its
// BARs. Unused regions (all zero) and I/O ports are left out.
func readBARs(path string) []result.PCIBar {
	var bars []result.PCIBar
	i := 0
	_ = lines(path, func(line string) bool {
		defer func() { i++ }()
		if i >= 6 {
			return true
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return false
		}
		start, err1 := strconv.ParseUint(f[0], 0, 64)
		end, err2 := strconv.ParseUint(f[1], 0, 64)
		flags, err3 := strconv.ParseUint(f[2], 0, 64)
		if err1 != nil || err2 != nil || err3 != nil || end <= start || end-start == math.MaxUint64 || flags&ioresourceMem == 0 {
			return false
		}
		bars = append(bars, result.PCIBar{Index: i, Bytes: end - start + 1, Prefetchable: flags&ioresourcePrefetch != 0,
			Bits64: flags&ioresourceMem64 != 0})
		return false
	})
	return bars
}

// collectDRI maps /dev/dri/by-path's names to the nodes they point at (the link's target's name; the link
// is not followed).
func collectDRI(root sample.Root, _ []string, s *result.System) string {
	dir := filepath.Join(root.Dev, "dri/by-path")
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return "" // no DRM devices: nothing to map
	}
	if err != nil {
		return "cannot read " + dir + ": " + errText(err)
	}
	for _, e := range entries {
		if len(s.DRIByPath) >= maxItems {
			break
		}
		if link, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil {
			if s.DRIByPath == nil {
				s.DRIByPath = map[string]string{}
			}
			s.DRIByPath[clean(e.Name())] = clean(filepath.Base(link))
		}
	}
	return ""
}
