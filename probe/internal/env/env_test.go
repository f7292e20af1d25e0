package env

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

func TestCollectFromFixtures(t *testing.T) {
	t.Setenv("OCL_ICD_VENDORS", "")
	t.Setenv("NEOReadDebugKeys", "1")
	t.Setenv("POCL_DEVICES", "pthread pthread")
	t.Setenv("HOME_UNRELATED", "x")
	t.Setenv("NVIDIA_API_KEY", "nvapi-secret")        // not a runtime variable: left out
	t.Setenv("POCL_AUTH_TOKEN", "secret-in-a-prefix") // recorded by its prefix, but a secret: redacted
	t.Setenv("CLMEMPROBE_password", "lower-case")     // the same, in lower case
	e := Collect(sample.Under("testdata"), "libOpenCL.so.1", "")
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
	for _, k := range []string{"HOME_UNRELATED", "NVIDIA_API_KEY"} {
		if _, ok := e.EnvVars[k]; ok {
			t.Errorf("%s is not a runtime variable but was kept: %v", k, e.EnvVars)
		}
	}
	for _, k := range []string{"POCL_AUTH_TOKEN", "CLMEMPROBE_password"} {
		if v := e.EnvVars[k]; v != result.Redacted {
			t.Errorf("%s = %q, want %s", k, v, result.Redacted)
		}
	}
	// Every figure comes from the fixture tree, none from the real host.
	if e.HostMemBytes != 8000000<<10 || e.SwapBytes != 1000000<<10 || e.CPU != "Fixture CPU @ 1.00GHz" ||
		e.Kernel != "6.1.0-fixture" || e.OS != "debian 12.99" {
		t.Errorf("host figures not from the fixtures: memory %d, swap %d, CPU %q, kernel %q, OS %q", e.HostMemBytes, e.SwapBytes, e.CPU, e.Kernel, e.OS)
	}
}

// The README lists every recorded variable: the list users read is the list the code keeps.
func TestREADMEListsTheRecordedVariables(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for n := range envNames {
		if !strings.Contains(string(b), "`"+n+"`") {
			t.Errorf("README does not list %s", n)
		}
	}
	for _, p := range envPrefixes {
		if !strings.Contains(string(b), "`"+p+"*`") && !strings.Contains(string(b), "`"+p+"`") {
			t.Errorf("README does not list %s*", p)
		}
	}
}
