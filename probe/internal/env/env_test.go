package env

import (
	"path/filepath"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
)

func TestCollectFromFixtures(t *testing.T) {
	t.Setenv("OCL_ICD_VENDORS", "")
	t.Setenv("NEOReadDebugKeys", "1")
	t.Setenv("POCL_DEVICES", "pthread pthread")
	t.Setenv("HOME_UNRELATED", "x")
	e := Collect(sample.Under("testdata"), "libOpenCL.so.1")
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
	// Every figure comes from the fixture tree, none from the real host.
	if e.HostMemBytes != 8000000<<10 || e.SwapBytes != 1000000<<10 || e.CPU != "Fixture CPU @ 1.00GHz" ||
		e.Kernel != "6.1.0-fixture" || e.OS != "debian 12.99" {
		t.Errorf("host figures not from the fixtures: memory %d, swap %d, CPU %q, kernel %q, OS %q", e.HostMemBytes, e.SwapBytes, e.CPU, e.Kernel, e.OS)
	}
}
