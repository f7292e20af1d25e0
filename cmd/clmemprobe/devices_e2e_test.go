package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

func TestDevicesListsBothPoCLDevices(t *testing.T) {
	env := PoCLEnv(t)
	res := runTool(t, env, "devices", "--json")
	if res.code != 0 {
		t.Fatalf("devices --json: exit %d: %s", res.code, res.stderr)
	}
	var listing result.Inventory
	if err := json.Unmarshal([]byte(res.stdout), &listing); err != nil {
		t.Fatalf("devices --json is not JSON: %v", err)
	}
	var pocl *result.PlatformListing
	for i := range listing {
		if strings.Contains(listing[i].Name, "Portable Computing Language") {
			pocl = &listing[i]
		}
	}
	if pocl == nil || len(pocl.Devices) != 2 {
		t.Fatalf("want the PoCL platform with 2 devices (POCL_DEVICES has two), got %+v", listing)
	}
	for i, d := range pocl.Devices {
		if d.Index != i || d.Name == "" || d.GlobalMemBytes == 0 || d.MaxAllocBytes == 0 || d.DriverVersion == "" {
			t.Errorf("device %d is missing figures: %+v", i, d)
		}
	}
	table := runTool(t, env, "devices")
	if table.code != 0 || strings.Count(table.stdout, pocl.Devices[0].Name) != 2 {
		t.Fatalf("devices table should list both devices: exit %d\n%s", table.code, table.stdout)
	}
}
