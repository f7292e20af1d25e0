package probe

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/cl"
	"github.com/clmemprobe/clmemprobe/report"
)

// ErrNoOpenCL wraps every reason the tool cannot reach an OpenCL device: no library, no platform, no device.
var ErrNoOpenCL = errors.New("no OpenCL")

// Inventory is what a runtime reports, as plain data: platforms and their devices.
type Inventory struct {
	Platforms          []report.Platform `json:"platforms"`
	PlatformExtensions [][]string        `json:"platform_extensions"`
	Devices            [][]report.Device `json:"devices"` // per platform
}

// Runtime is an opened OpenCL library with its platforms and devices enumerated, in this process.
type Runtime struct {
	*Inventory
	Lib       *cl.Library
	CLDevices [][]*cl.Device // per platform, as Inventory.Devices
}

// OpenRuntime loads the library in this process and enumerates everything. Failures wrap ErrNoOpenCL and
// say what to do. `run` does not use it: there the runtime is loaded only by child processes.
func OpenRuntime(path string) (*Runtime, error) {
	lib, err := cl.Open(path)
	if err != nil {
		hint := "install an OpenCL runtime and the ICD loader (Debian/Ubuntu: apt-get install ocl-icd-libopencl1 pocl-opencl-icd), or name the library with --opencl-lib or " + cl.LibraryEnv
		return nil, fmt.Errorf("%w: %v; %s", ErrNoOpenCL, err, hint)
	}
	ps, devs, err := lib.AllDevices()
	if errors.Is(err, cl.ErrNoPlatform) {
		return nil, fmt.Errorf("%w: %s loaded but reports no platform: no vendor runtime is registered (check /etc/OpenCL/vendors or OCL_ICD_VENDORS)", ErrNoOpenCL, path)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: enumerating platforms and devices failed: %v", ErrNoOpenCL, err)
	}
	inv := &Inventory{}
	for i, p := range ps {
		inv.Platforms = append(inv.Platforms, ReportPlatform(p))
		inv.PlatformExtensions = append(inv.PlatformExtensions, p.Extensions)
		var ds []report.Device
		for _, d := range devs[i] {
			ds = append(ds, ReportDevice(d))
		}
		inv.Devices = append(inv.Devices, ds)
	}
	return &Runtime{Inventory: inv, Lib: lib, CLDevices: devs}, nil
}

// SelectPlatform finds a platform by index or by a case-insensitive part of its name; "" picks the first
// platform that has devices.
func (rt *Inventory) SelectPlatform(spec string) (int, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		for i := range rt.Platforms {
			if len(rt.Devices[i]) > 0 {
				return i, nil
			}
		}
		return 0, fmt.Errorf("%w: no platform has a device", ErrNoOpenCL)
	}
	if n, err := strconv.Atoi(spec); err == nil {
		if n < 0 || n >= len(rt.Platforms) {
			return 0, &UsageError{fmt.Sprintf("platform %d does not exist (there are %d; see clmemprobe devices)", n, len(rt.Platforms))}
		}
		return n, nil
	}
	for i, p := range rt.Platforms {
		if strings.Contains(strings.ToLower(p.Name), strings.ToLower(spec)) {
			return i, nil
		}
	}
	return 0, &UsageError{fmt.Sprintf("no platform matches %q (see clmemprobe devices)", spec)}
}

// SelectDevices checks device indices against the platform (nil: all of them).
func (rt *Inventory) SelectDevices(platform int, want []int) ([]int, error) {
	have := len(rt.Devices[platform])
	if have == 0 {
		return nil, fmt.Errorf("%w: platform %q has no device", ErrNoOpenCL, rt.Platforms[platform].Name)
	}
	if want == nil {
		for i := 0; i < have; i++ {
			want = append(want, i)
		}
	}
	for _, i := range want {
		if i >= have {
			return nil, &UsageError{fmt.Sprintf("device %d does not exist: platform %q has %d device(s), numbered 0 to %d", i, rt.Platforms[platform].Name, have, have-1)}
		}
	}
	for _, i := range want {
		if d := rt.Devices[platform][i]; d.GlobalMemBytes == 0 {
			return nil, fmt.Errorf("%w: device %d (%q) reports 0 bytes of global memory: the runtime is broken or misconfigured; check its installation (clinfo shows the same figure)", ErrNoOpenCL, i, d.Name)
		}
	}
	return want, nil
}

// UsageError is bad input found once the runtime is known (a device that does not exist, a size over the
// device's limit): the command line must change.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ReportPlatform describes a platform for the result.
func ReportPlatform(p *cl.Platform) report.Platform {
	return report.Platform{Index: p.Index, Name: p.Name, Vendor: p.Vendor, Version: p.Version}
}

// ReportDevice describes a device for the result.
func ReportDevice(d *cl.Device) report.Device {
	return report.Device{Index: d.PlatformIndex, Platform: d.Platform.Index, Name: d.Name, Vendor: d.Vendor, Type: d.Type,
		Version: d.Version, DriverVersion: d.DriverVersion, GlobalMemBytes: d.GlobalMem, MaxAllocBytes: d.MaxAlloc,
		HostUnified: d.HostUnified, ComputeUnits: d.ComputeUnits, PCIBusID: d.PCIBusID, Extensions: d.Extensions}
}

// CheckSizes rejects buffer sizes over a selected device's maximum allocation.
func (rt *Inventory) CheckSizes(platform int, devices []int, sizes []uint64) error {
	for _, i := range devices {
		d := rt.Devices[platform][i]
		for _, s := range sizes {
			if d.MaxAllocBytes > 0 && s > d.MaxAllocBytes {
				return &UsageError{fmt.Sprintf("size %s is over device %d's maximum allocation of %s (%q)", report.FormatBytes(s), i, report.FormatBytes(d.MaxAllocBytes), d.Name)}
			}
		}
	}
	return nil
}
