package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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

// devices loads each registered runtime on its own only where the listing cannot tell what each gave: with
// one runtime registered and listing devices it adds nothing, with a second registered beside it (here one
// whose library is missing) it is asked, and its line says what is wrong.
func TestDevicesDiagnosesARuntimeBesideAWorkingOne(t *testing.T) {
	vendors := t.TempDir()
	pocl, err := os.ReadFile("/etc/OpenCL/vendors/pocl.icd")
	if err != nil {
		skipOrFail(t, "PoCL is not installed (apt-get install pocl-opencl-icd ocl-icd-libopencl1): %v", err)
	}
	writeICD := func(name, library string) {
		if err := os.WriteFile(filepath.Join(vendors, name), []byte(library), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeICD("pocl.icd", string(pocl))
	env := Env("POCL_DEVICES=pthread pthread", "OCL_ICD_VENDORS="+vendors)
	alone := runTool(t, env, "devices")
	if alone.code != 0 || alone.stderr != "" {
		t.Fatalf("devices with PoCL alone: exit %d, stderr %q", alone.code, alone.stderr)
	}
	writeICD("missing.icd", "libclmemprobe-missing-runtime.so.1\n")
	both := runTool(t, env, "devices")
	if both.code != 0 || !strings.Contains(both.stderr, "libclmemprobe-missing-runtime.so.1") || both.stdout != alone.stdout {
		t.Fatalf("devices with a missing runtime beside PoCL: exit %d, stderr %q; the table changed: %v", both.code, both.stderr, both.stdout != alone.stdout)
	}
}
