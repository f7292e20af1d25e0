package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// selectPlatform finds a platform by index or by a case-insensitive part of its name; "" picks the first
// platform that has devices.
func selectPlatform(inv result.Inventory, spec string) (int, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		for i := range inv {
			if len(inv[i].Devices) > 0 {
				return i, nil
			}
		}
		return 0, fmt.Errorf("%w: no platform has a device", probe.ErrNoOpenCL)
	}
	if n, err := strconv.Atoi(spec); err == nil {
		if n < 0 || n >= len(inv) {
			return 0, usageErr("platform %d does not exist (there are %d; see clmemprobe devices)", n, len(inv))
		}
		return n, nil
	}
	for i, p := range inv {
		if strings.Contains(strings.ToLower(p.Name), strings.ToLower(spec)) {
			return i, nil
		}
	}
	return 0, usageErr("no platform matches %q (see clmemprobe devices)", spec)
}

// selectDevices checks device indices against the platform (nil: all of them).
func selectDevices(inv result.Inventory, platform int, want []int) ([]int, error) {
	p := inv[platform]
	have := len(p.Devices)
	if have == 0 {
		return nil, fmt.Errorf("%w: platform %q has no device", probe.ErrNoOpenCL, p.Name)
	}
	if want == nil {
		for i := 0; i < have; i++ {
			want = append(want, i)
		}
	}
	for _, i := range want {
		if i >= have {
			return nil, usageErr("--devices: device %d does not exist: platform %q has %d device(s), numbered 0 to %d", i, p.Name, have, have-1)
		}
	}
	for _, i := range want {
		if d := p.Devices[i]; d.GlobalMemBytes == 0 {
			return nil, fmt.Errorf("%w: device %d (%q) reports 0 bytes of global memory: the runtime is broken or misconfigured; check its installation (clinfo shows the same figure)", probe.ErrNoOpenCL, i, d.Name)
		}
	}
	return want, nil
}

// sizeNotes are the lines said before a run whose buffer sizes are over a selected device's reported
// maximum allocation: such a size is tried, not refused (some runtimes take buffers far over what they
// report), and the runtime's answer is the result. A vendor flag documented to lift the limit is named only
// where the platform is that vendor's, and only where no flag set already holds it.
func sizeNotes(inv result.Inventory, platform int, devices []int, sizes []uint64, flagSets []result.MemFlags) []string {
	lifted := len(flagSets) > 0
	for _, f := range flagSets {
		lifted = lifted && f.LiftsMaxAlloc() != nil
	}
	var notes []string
	pl := inv[platform].Platform
	for _, i := range devices {
		d := inv[platform].Devices[i]
		for _, s := range sizes {
			if d.MaxAllocBytes == 0 || s <= d.MaxAllocBytes {
				continue
			}
			note := fmt.Sprintf("size %s is over device %d's reported maximum allocation of %s (%q): tried all the same; the runtime may refuse it (-61, CL_INVALID_BUFFER_SIZE), and clmemprobe largest finds what it really takes",
				units.Size(s), i, units.Bytes(d.MaxAllocBytes), d.Name)
			if f := liftingFlag(); !lifted && f.C != "" && result.VendorOf(pl, d).Is(f.Vendor) {
				note += fmt.Sprintf("; %s documents %s (--flags %#x) to lift it", f.Vendor, f.C, uint64(f.Value))
			}
			return append(notes, note) // once: the first device and size say it for all
		}
	}
	return notes
}

// liftingFlag is a vendor flag documented to lift the maximum allocation, for the refusal to name.
func liftingFlag() result.VendorFlag {
	for _, v := range result.VendorFlags {
		if v.LiftsMaxAlloc {
			return v
		}
	}
	return result.VendorFlag{}
}
