package markdown

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/units"
)

// TestEvidenceListInWordsAndUnits: a limit's evidence, as the per-strategy list writes it.
func TestEvidenceListInWordsAndUnits(t *testing.T) {
	// A limit's evidence, as the per-strategy list writes it: in words and units, a key this build does not
	// know as words too.
	ev := map[string]float64{"allocations_ok": 1031, "cgroup_limit_bytes": 1 << 30, "host_available_bytes": 22796900000, "some_new_count": 12345678}
	want := strings.Join([]string{
		fmt.Sprintf("%d buffers that succeeded", int(ev["allocations_ok"])),
		"cgroup limit " + units.Bytes(uint64(ev["cgroup_limit_bytes"])),
		"system available memory " + units.Bytes(uint64(ev["host_available_bytes"])),
		fmt.Sprintf("some new count %d", int(ev["some_new_count"])),
	}, ", ")
	if got, want := evidenceList(ev), " ("+want+")"; got != want {
		t.Errorf("evidence %q, want %q: in words and units, a key this build does not know as words too", got, want)
	}
}
