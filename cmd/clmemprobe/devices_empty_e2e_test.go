package main

import (
	"testing"
)

// A platform that has no devices is listed with "(no devices)", not with a table of headers alone.
func TestDevicesListsAPlatformWithoutDevices(t *testing.T) {
	res := runTool(t, FaultEnv(t, "FAULTCL_DEVICES=0", "COLUMNS=80"), "devices")
	if res.stdout != "Platform 0: faultcl (clmemprobe tests), OpenCL 3.0 faultcl\n(no devices)\n" {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
}
