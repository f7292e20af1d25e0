package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
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

// checkSizes rejects buffer sizes over a selected device's maximum allocation, unless every flag set holds
// a vendor flag documented to lift that limit: then the runtime's answer is the result.
func checkSizes(inv result.Inventory, platform int, devices []int, sizes []uint64, flagSets []result.MemFlags) error {
	lifted := len(flagSets) > 0
	for _, f := range flagSets {
		lifted = lifted && f.LiftsMaxAlloc() != nil
	}
	if lifted {
		return nil
	}
	for _, i := range devices {
		d := inv[platform].Devices[i]
		for _, s := range sizes {
			if d.MaxAllocBytes > 0 && s > d.MaxAllocBytes {
				return usageErr("size %s is over device %d's maximum allocation of %s (%q); a vendor flag documented to lift the limit (--flags %s, %s) lets the runtime answer",
					units.Bytes(s), i, units.Bytes(d.MaxAllocBytes), d.Name, liftingFlag().C, fmt.Sprintf("%#x", uint64(liftingFlag().Value)))
			}
		}
	}
	return nil
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
