package env

import (
	"path/filepath"
	"testing"
)

func TestCollectFromFixtures(t *testing.T) {
	t.Setenv("OCL_ICD_VENDORS", "")
	t.Setenv("NEOReadDebugKeys", "1")
	t.Setenv("POCL_DEVICES", "pthread pthread")
	t.Setenv("HOME_UNRELATED", "x")
	roots := Roots{Proc: "testdata/proc", Sys: "testdata/sys", Dev: "testdata/dev", Etc: "testdata/etc"}
	e := Collect(roots, "libOpenCL.so.1")
	if e.Overcommit != "2" || e.OvercommitPct != "80" || e.MaxMapCount != 262144 {
		t.Errorf("memory policy: overcommit %q ratio %q max_map_count %d", e.Overcommit, e.OvercommitPct, e.MaxMapCount)
	}
	icd := filepath.Join("testdata/etc/OpenCL/vendors", "amdocl64.icd")
	if e.ICDFiles[icd] != "libamdocl64.so" {
		t.Errorf("ICD files: %v", e.ICDFiles)
	}
	if len(e.DRIDevices) != 1 || e.DRIDevices[0] != "/dev/dri/renderD128 (amdgpu)" {
		t.Errorf("DRI devices: %v", e.DRIDevices)
	}
	if e.EnvVars["NEOReadDebugKeys"] != "1" || e.EnvVars["POCL_DEVICES"] != "pthread pthread" {
		t.Errorf("runtime variables missing: %v", e.EnvVars)
	}
	if _, ok := e.EnvVars["HOME_UNRELATED"]; ok {
		t.Errorf("unrelated variable kept: %v", e.EnvVars)
	}
	if e.HostMemBytes == 0 || e.CPUs == 0 {
		t.Errorf("host figures missing: %+v", e)
	}
}
