package findings

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/result"
)

func loadFixture(t *testing.T) *result.Run {
	t.Helper()
	r, err := result.Load(filepath.Join("..", "result", "testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The verdict is computed from the numbers of the fixture: budgets of 64 MiB host and 256 MiB per device.
func TestVerdictsFromNumbers(t *testing.T) {
	r := loadFixture(t)
	v := strings.Join(Verdicts(r), "\n")
	var sh, pd *result.StrategyResult
	for i := range r.Strategies {
		switch r.Strategies[i].Strategy {
		case "shared":
			sh = &r.Strategies[i]
		case "per-device":
			pd = &r.Strategies[i]
		}
	}
	for _, want := range []string{
		"shared failed first: buffer #64 (after 64 MiB) got CL_OUT_OF_HOST_MEMORY (-6) at create",
		"per-device reached 512 buffers, 8.00x as many buffers as shared (64)",
		fmt.Sprintf("the shared context costs %.2fx the device memory per buffer", *sh.ReplicationFactor / *pd.ReplicationFactor),
		"device-list is not supported here",
		"CL_OUT_OF_HOST_MEMORY (shared, migrate-first, per-device) does not prove host memory ran out",
		// 64 buffers of 1 MiB on each of the two devices of the shared context: a quarter of 256 MiB.
		"shared: when it failed, device 0 held 64 MiB, 25.0% of its 256 MiB global memory: far below",
		"per-device: when it failed, device 0 held 256 MiB, 100.0% of its 256 MiB global memory: the device's memory ran out",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict lacks %q:\n%s", want, v)
		}
	}
}

// A loop that ends near vm.max_map_count is told apart from one that ran out of memory.
func TestVerdictNamesTheMappingLimit(t *testing.T) {
	r := &result.Run{Config: result.Config{Touch: "fill"}, Strategies: []result.StrategyResult{{Strategy: "shared", SizeBytes: 1 << 20, Outcome: result.OutcomeFailed,
		AllocationsOK: 65000, MaxMappings: 65400, MaxMapCount: 65530,
		FirstFailure: &result.FirstFailure{Index: 65000, Stage: result.StageTouch, Code: -5, Name: "CL_OUT_OF_RESOURCES"}}}}
	v := strings.Join(Verdicts(r), "\n")
	if !strings.Contains(v, "65400 memory mappings, 100% of vm.max_map_count (65530)") {
		t.Errorf("verdict does not name the mapping limit:\n%s", v)
	}
}
