package report

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/table"
)

// check names a job one way in its one line and in -v's lines: strategy, size, flags and "variant NAME".
func TestCheckNamesAJobOneWay(t *testing.T) {
	const variant, flags = "as", "alloc-host-ptr"
	h := &comparison.Health{Healthy: true, Tolerance: 0.1, Budget: 50, Jobs: []comparison.HealthJob{
		{Strategy: result.Shared, SizeBytes: 1 << 20, Variant: variant, Flags: flags, Healthy: true, Outcome: result.OutcomeFailed,
			AllocationsOK: 100, ExpectedAllocs: 100, ExpectedOutcome: result.OutcomeFailed}}}
	want := fmt.Sprintf("%s %s %s variant %s", result.Shared, units.Size(1<<20), flags, variant)
	var line, verbose bytes.Buffer
	if err := table.WriteHealthText(&line, h, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := table.WriteHealthJobs(&verbose, h); err != nil {
		t.Fatal(err)
	}
	if got := table.HealthJobName(&h.Jobs[0]); got != want {
		t.Errorf("the job is named %q, want %q", got, want)
	}
	// Both outputs name it so: the golden files.
	golden(t, "check-job-name.line", line.Bytes())
	golden(t, "check-job-name.verbose", verbose.Bytes())
}
