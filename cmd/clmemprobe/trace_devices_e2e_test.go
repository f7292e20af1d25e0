package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A trace samples device memory as run does, NVML first (in a child of the tool), then the program's DRM
// fdinfo: on a machine without NVML, over faultcl's devices (which give PCI ids when told, at a bus no real
// GPU here sits at), the trace says device memory was not measured and why, NVML's absence first, in the
// trace, its verdict and its table.
func TestTraceDeviceMemoryNotMeasured(t *testing.T) {
	if out, _ := exec.Command("ldconfig", "-p").Output(); slices.ContainsFunc(strings.Split(string(out), "\n"), func(l string) bool {
		f := strings.Fields(l)
		return len(f) > 0 && f[0] == "libnvidia-ml.so.1"
	}) {
		t.Skip("this machine has NVML: the trace measures its GPUs (see the GPU machine's check)")
	}
	const devMem, bus = 32 << 20, 0xfd
	env := FaultEnv(t, "FAULTCL_MODEL=lazy", fmt.Sprintf("FAULTCL_DEVICE_MEM=%d", devMem), "FAULTCL_PCI_BUS="+strconv.Itoa(bus))
	prog := Traceprog(t)
	tr, _ := traceOut(t, env, "--", prog, "fill", strconv.Itoa(mib), "1000")
	const why = "NVML: libnvidia-ml.so.1 not found; DRM fdinfo: the program has no DRM client with drm-total-* counters for its devices"
	if tr.DeviceSampler != result.DeviceNotAvailable+why {
		t.Errorf("device sampler %q, want %q", tr.DeviceSampler, result.DeviceNotAvailable+why)
	}
	for i, d := range tr.Devices {
		if want := fmt.Sprintf("0000:%02x:%02x.0", bus, i); d.PCIBusID != want {
			t.Errorf("device %d: PCI %q, want %q", i, d.PCIBusID, want)
		}
	}
	if tr.FirstFailure == nil || !containsLine(tr.Verdict, "Device memory not measured: "+why+".") {
		t.Errorf("first failure %+v, verdict %q: want it to say device memory was not measured and why", tr.FirstFailure, tr.Verdict)
	}
	res := runTool(t, traceEnv(env), "trace", "--", prog, "fill", strconv.Itoa(mib), "1000")
	if !containsLine(strings.Split(res.stdout, "\n"), "Device memory not measured: "+why+".") {
		t.Errorf("the table (exit %d):\n%s\nwant the line %q", res.code, res.stdout, "Device memory not measured: "+why+".")
	}
}
