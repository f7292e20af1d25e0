package worker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// describe is the describing child: load, enumerate, answer.
func (c *child) describe() *wire.DescribeAnswer {
	inv, _, err := c.inventory()
	if err != nil {
		return &wire.DescribeAnswer{Error: err.Error(), NoOpenCL: true, NoPlatform: errors.Is(err, cl.ErrNoPlatform)}
	}
	return &wire.DescribeAnswer{Inventory: inv}
}

// inventory loads the library and lists everything, as plain data and as the binding's devices, with a hint
// of what to do when it cannot.
func (c *child) inventory() (result.Inventory, [][]*cl.Device, error) {
	switch err := c.open(); {
	case errors.Is(err, cl.ErrNotOpenCL), errors.Is(err, cl.ErrIncomplete):
		// A library was found and it is the wrong one: installing a runtime is not the answer.
		return nil, nil, err
	case err != nil:
		return nil, nil, fmt.Errorf("%v; install an OpenCL runtime and the ICD loader (Debian/Ubuntu: apt-get install ocl-icd-libopencl1 pocl-opencl-icd), or name the library with --opencl-lib or %s", err, cl.LibraryEnv)
	}
	ps, devs, err := c.lib.AllDevices()
	if errors.Is(err, cl.ErrNoPlatform) {
		return nil, nil, fmt.Errorf("%w: %s loaded but reports no platform", cl.ErrNoPlatform, c.spec.Library)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("enumerating platforms and devices failed: %v", err)
	}
	inv := make(result.Inventory, 0, len(ps))
	for i, p := range ps {
		pl := result.PlatformListing{Platform: result.Platform{Index: p.Index, Name: p.Name, Vendor: p.Vendor, Version: p.Version},
			Extensions: p.Extensions, Devices: []result.Device{}}
		for _, d := range devs[i] {
			pl.Devices = append(pl.Devices, result.Device{Index: d.PlatformIndex, Platform: p.Index, Name: d.Name, Vendor: d.Vendor,
				Type: d.Type, Version: d.Version, DriverVersion: d.DriverVersion, GlobalMemBytes: d.GlobalMem, MaxAllocBytes: d.MaxAlloc,
				HostUnified: d.HostUnified, ComputeUnits: d.ComputeUnits, PCIBusID: d.PCIBusID, Extensions: d.Extensions})
		}
		inv = append(inv, pl)
	}
	return inv, devs, nil
}

// askLayers is the loader-asking child: load the library (with the trace layer in OPENCL_LAYERS, which the
// parent set) and list the platforms, which is when a loader initialises its layers. The layer itself tells
// the parent whether it was initialised; this answer says what the loader did besides.
func (c *child) askLayers() *wire.LayersAnswer {
	if err := c.open(); err != nil {
		return &wire.LayersAnswer{Error: err.Error()}
	}
	ps, err := c.lib.Platforms()
	switch {
	case errors.Is(err, cl.ErrNoPlatform):
		return &wire.LayersAnswer{}
	case err != nil:
		return &wire.LayersAnswer{Error: err.Error()}
	}
	return &wire.LayersAnswer{Platforms: len(ps), Loader: mappedLoader("/proc/self/maps")}
}

// mappedLoader is the one file named libOpenCL.so* mapped into this process, as maps lists it ("" where
// none or more than one is: the parent then keeps no answer).
func mappedLoader(maps string) string {
	b, err := os.ReadFile(maps)
	if err != nil {
		return ""
	}
	found := ""
	for line := range strings.Lines(string(b)) {
		// address perms offset dev inode path: the path is the sixth field, and may hold spaces.
		f := strings.SplitN(strings.TrimSpace(line), " ", 6)
		if len(f) < 6 {
			continue
		}
		path := strings.TrimSpace(f[5])
		if !strings.HasPrefix(path, "/") || !strings.HasPrefix(filepath.Base(path), "libOpenCL.so") {
			continue
		}
		if found != "" && found != path {
			return ""
		}
		found = path
	}
	return found
}

// loadICD is the ICD-diagnosing child: the runtime's library loaded on its own (RTLD_LOCAL, so nothing of
// it is seen by what comes after), where the dynamic linker names what is missing; then the loader, which
// the parent pointed at that runtime alone, listing its platforms and devices.
func (c *child) loadICD() *wire.ICDAnswer {
	var a wire.ICDAnswer
	if err := cl.ProbeICD(c.spec.ICDLibrary); err != nil {
		a.LoadError, a.Missing, a.NotICD = err.Error(), errors.Is(err, cl.ErrLibraryNotFound), errors.Is(err, cl.ErrNotOpenCL)
		return &a
	}
	if err := c.open(); err != nil {
		a.Error = err.Error()
		return &a
	}
	_, devs, err := c.lib.AllDevices()
	switch {
	case errors.Is(err, cl.ErrNoPlatform):
		return &a
	case err != nil:
		a.Error = err.Error()
		return &a
	}
	for _, d := range devs {
		a.Devices = append(a.Devices, len(d))
	}
	return &a
}
