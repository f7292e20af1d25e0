package result

import (
	"strings"
	"testing"
)

// Every outcome of a registered runtime is one line that names its .icd file and library, says why it
// gave nothing, and what to do.
func TestICDStatusLines(t *testing.T) {
	neo := ICDStatus{File: "/etc/OpenCL/vendors/intel.icd", Library: "/usr/lib/libigdrcl.so", Outcome: ICDNoPlatform,
		Vendor: "Intel's compute-runtime (NEO)", Drivers: "i915 or xe", User: "ana"}
	noNode := neo
	locked := neo
	locked.Nodes = []DeviceNode{{Path: "/dev/dri/renderD128", Group: "render"}, {Path: "/dev/dri/renderD129", Group: "render"}}
	open := neo
	open.Nodes = []DeviceNode{{Path: "/dev/dri/renderD128", Group: "render", Usable: true}}
	for _, c := range []struct {
		s    ICDStatus
		want []string
	}{
		{ICDStatus{File: "f.icd", Library: "/opt/libx.so", Outcome: ICDNotFound}, []string{"f.icd (/opt/libx.so)", "does not exist"}},
		{ICDStatus{File: "f.icd", Library: "libx.so", Outcome: ICDNotFound}, []string{"not on the library path"}},
		{ICDStatus{File: "f.icd", Library: "libx.so", Outcome: ICDNotLoadable, Detail: "libgmm.so.12: cannot open shared object file"},
			[]string{"the dynamic linker refused it: libgmm.so.12", "install the package"}},
		{ICDStatus{File: "f.icd", Library: "libx.so", Outcome: ICDNotAnICD}, []string{"no OpenCL runtime", "remove the .icd file"}},
		{ICDStatus{File: "f.icd", Library: "libx.so", Outcome: ICDCrashed, Detail: "crashed with SIGSEGV"}, []string{"loading it crashed with SIGSEGV"}},
		{ICDStatus{File: "f.icd", Library: "libpocl.so", Outcome: ICDNoPlatform}, []string{"reported no platform: the runtime found no device it supports"}},
		{noNode, []string{"needs a GPU's device node and none exists", "i915 or xe"}},
		{locked, []string{"/dev/dri/renderD128, /dev/dri/renderD129 cannot be opened by this user", "group render", "usermod -aG render ana"}},
		{open, []string{"/dev/dri/renderD128 can be opened, so the runtime supports none of the GPUs"}},
		{ICDStatus{File: "f.icd", Library: "libx.so", Outcome: ICDNoDevices, Platforms: 2}, []string{"2 platform(s), none with a device"}},
		{ICDStatus{File: "f.icd", Library: "libRusticlOpenCL.so.1", Outcome: ICDNoDevices, Platforms: 1, Vendor: "Mesa's rusticl",
			Drivers: "a Mesa GPU driver (or RUSTICL_ENABLE=llvmpipe for the CPU)"}, []string{"RUSTICL_ENABLE=llvmpipe"}},
		{ICDStatus{File: "f.icd", Library: "libx.so", Outcome: ICDOK, Platforms: 1, Devices: 2}, []string{"1 platform(s), 2 device(s)"}},
	} {
		line := c.s.Line()
		if strings.Contains(line, "\n") {
			t.Errorf("%s: not one line: %q", c.s.Outcome, line)
		}
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%s: %q lacks %q", c.s.Outcome, line, w)
			}
		}
		if c.s.Gave() != (c.s.Outcome == ICDOK) {
			t.Errorf("%s: Gave() %v", c.s.Outcome, c.s.Gave())
		}
	}
}
