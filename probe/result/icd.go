package result

import (
	"cmp"
	"fmt"
	"strings"
)

// ICDOutcome is what became of one registered runtime when it was loaded on its own.
type ICDOutcome string

// The outcomes of loading one registered runtime, worst first.
const (
	ICDNotFound    ICDOutcome = "not-found"    // the library the .icd file names does not exist
	ICDNotLoadable ICDOutcome = "not-loadable" // it exists, and the dynamic linker refused it (a missing dependency)
	ICDNotAnICD    ICDOutcome = "not-an-icd"   // it loads, and lacks clIcdGetPlatformIDsKHR
	ICDCrashed     ICDOutcome = "crashed"      // loading or asking it killed or hung the child
	ICDNoPlatform  ICDOutcome = "no-platform"  // it loads, and reports no platform (no supported device)
	ICDNoDevices   ICDOutcome = "no-devices"   // it reports platforms without devices
	ICDOK          ICDOutcome = "ok"
)

// ICDStatus is what one registered runtime gave when the loader was pointed at it alone.
type ICDStatus struct {
	File    string     `json:"file"`
	Library string     `json:"library"`
	Outcome ICDOutcome `json:"outcome"`
	// Detail is the dynamic linker's or the loader's own words, where it said something.
	Detail    string `json:"detail,omitempty"`
	Platforms int    `json:"platforms"`
	Devices   int    `json:"devices"`
	// Vendor and Nodes are, for a runtime known to need a GPU's device node, whose runtime it is and the
	// nodes that exist, with whether this user can open them.
	Vendor string       `json:"vendor,omitempty"`
	Nodes  []DeviceNode `json:"device_nodes,omitempty"`
	// Drivers are the kernel drivers that make the nodes it needs.
	Drivers string `json:"drivers,omitempty"`
	// User is who ran the diagnosis (the nodes' access is this user's).
	User string `json:"-"`
}

// DeviceNode is a device node a runtime needs, the group that owns it and whether this user can open it.
type DeviceNode struct {
	Path   string `json:"path"`
	Group  string `json:"group,omitempty"`
	Usable bool   `json:"usable"`
}

// Gave reports whether the runtime gave a device.
func (s ICDStatus) Gave() bool { return s.Outcome == ICDOK }

// Line says in one line what the runtime gave and, where it gave nothing, why and what to do.
func (s ICDStatus) Line() string {
	who := fmt.Sprintf("%s (%s)", s.File, s.Library)
	switch s.Outcome {
	case ICDNotFound:
		if !strings.Contains(s.Library, "/") {
			return fmt.Sprintf("%s: the library is not on the library path (ldconfig -p does not list it); install the runtime's package again, or remove the .icd file", who)
		}
		return fmt.Sprintf("%s: the library does not exist; install the runtime's package again, or remove the .icd file", who)
	case ICDNotLoadable:
		return fmt.Sprintf("%s: the dynamic linker refused it: %s; install the package that provides what it names", who, s.Detail)
	case ICDNotAnICD:
		return fmt.Sprintf("%s: the library loads but is no OpenCL runtime (it exports neither clIcdGetPlatformIDsKHR nor clGetExtensionFunctionAddress); remove the .icd file", who)
	case ICDCrashed:
		return fmt.Sprintf("%s: loading it %s; report it to the runtime's vendor, or move the .icd file away to use the others", who, s.Detail)
	case ICDNoPlatform:
		return who + ": loaded, and reported no platform: " + s.noPlatformWhy()
	case ICDNoDevices:
		line := fmt.Sprintf("%s: %d platform(s), none with a device: the runtime supports no device on this machine", who, s.Platforms)
		if s.Vendor != "" {
			line += fmt.Sprintf("; %s drives a device through %s", s.Vendor, s.Drivers)
		}
		return line
	}
	return fmt.Sprintf("%s: %d platform(s), %d device(s)", who, s.Platforms, s.Devices)
}

// noPlatformWhy is why a runtime that loaded reported no platform, from the device nodes it needs.
func (s ICDStatus) noPlatformWhy() string {
	if s.Vendor == "" {
		return "the runtime found no device it supports"
	}
	var usable, refused []string
	groups := map[string]bool{}
	for _, n := range s.Nodes {
		if n.Usable {
			usable = append(usable, n.Path)
		} else {
			refused = append(refused, n.Path)
			if n.Group != "" {
				groups[n.Group] = true
			}
		}
	}
	switch {
	case len(s.Nodes) == 0:
		return fmt.Sprintf("%s needs a GPU's device node and none exists (no GPU of its vendor, or its kernel driver, %s, is not loaded)", s.Vendor, s.Drivers)
	case len(usable) == 0:
		var names []string
		for g := range groups {
			names = append(names, g)
		}
		what := "the group that owns them"
		if len(names) == 1 {
			what = "group " + names[0] + fmt.Sprintf(" (sudo usermod -aG %s %s, then log in again)", names[0], cmp.Or(s.User, "$USER"))
		}
		return fmt.Sprintf("%s cannot be opened by this user: join %s", strings.Join(refused, ", "), what)
	}
	return fmt.Sprintf("%s can be opened, so the runtime supports none of the GPUs behind them (see its documentation for the supported devices)", strings.Join(usable, ", "))
}
