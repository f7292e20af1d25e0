package ticket

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
	"github.com/clmemprobe/clmemprobe/report/repro"
)

// TestExpectedComparesOnlyJobsPlacedAlike: the ticket's "expected" holds a failed job against the one that
// went furthest only where both placed their buffers alike. Here (the H100's default run) shared created its
// whole budget and placed nothing, migrate-first placed each buffer and filled the devices: nothing says
// migrate-first should have gone as far as shared. Per-device, placed like migrate-first and further, is
// held against it.
func TestExpectedComparesOnlyJobsPlacedAlike(t *testing.T) {
	const size = 1 << 20
	ok := &result.Fit{OK: true}
	none := map[string]float64{"0": 0, "1": 0}
	placed := map[string]float64{"0": size / 2, "1": size / 2}
	r := &result.Run{Config: result.Config{Touch: result.TouchNone}, Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}, {Index: 1, GlobalMemBytes: 1 << 30}},
		Jobs: []result.JobResult{
			{Strategy: result.Shared, Devices: []int{0, 1}, SizeBytes: size, Outcome: result.OutcomeCompleted, AllocationsOK: 3000, Fit: ok, HostBytesPerBuffer: 600, DeviceBytesPerBuffer: none},
			{Strategy: result.MigrateFirst, Devices: []int{0, 1}, SizeBytes: size, Outcome: result.OutcomeFailed, AllocationsOK: 2048, Fit: ok, HostBytesPerBuffer: 600, DeviceBytesPerBuffer: placed,
				FirstFailure: &result.FirstFailure{Index: 2048, Stage: result.StageMigrate, Code: -4, Name: "CL_MEM_OBJECT_ALLOCATION_FAILURE", Call: "clEnqueueMigrateMemObjects"}},
		}}
	// Not held against shared, which placed nothing.
	golden(t, "expected-placed-apart", []byte(strings.Join(runExpected(findings.Judge(r)), "\n")))
	r.Jobs = append(r.Jobs, result.JobResult{Strategy: result.PerDevice, Devices: []int{0, 1}, SizeBytes: size, Outcome: result.OutcomeFailed, AllocationsOK: 2300, Fit: ok,
		HostBytesPerBuffer: 600, DeviceBytesPerBuffer: placed, FirstFailure: &result.FirstFailure{Index: 2300, Stage: result.StageCreate, Code: -4, Name: "CL_MEM_OBJECT_ALLOCATION_FAILURE", Call: "clCreateBuffer"}})
	// Held against per-device (2300), placed alike and further.
	golden(t, "expected-placed-alike", []byte(strings.Join(runExpected(findings.Judge(r)), "\n")))
}

var update = flag.Bool("update", false, "rewrite the golden files from the renderers' output")

func golden(t *testing.T, name string, got []byte) {
	fixture.Golden(t, name, got, *update, "./report/ticket")
}

// A cgroup's limit is a container's or a batch job's, not the machine's: the Before-filing note of a ticket
// whose limit is cgroup-memory names the cgroup, and says the machine only for the machine's own limits.
func TestLimitNoteNamesTheCgroupNotTheMachine(t *testing.T) {
	for _, c := range []struct {
		limit   result.Limit
		machine bool
	}{{result.LimitCgroupMemory, false}, {result.LimitHostMemory, true}, {result.LimitAddressSpace, true}} {
		note := limitNote(result.JobLimit{Limit: c.limit})
		if strings.Contains(note, "a limit of the machine") != c.machine || strings.Contains(note, "memory cgroup's limit") == c.machine {
			t.Errorf("%s: %q", c.limit, note)
		}
	}
}

// A run ticket is about one job: the title names the job repro.c repeats (the verdict headline's), not the
// first in the run's order that ended, wherever the two differ (a crash listed before the failure the
// headline names). Over generated runs, every ticket whose repro job ended names it in its title.
func TestTheTitleNamesTheJobReproRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	checked := 0
	for n := 0; n < 1500; n++ {
		r := fixture.Random(rng)
		j := findings.Judge(r)
		s, err := repro.ReproJob(j, "", "", "")
		if err != nil || s.Outcome == result.OutcomeCompleted || s.Outcome == result.OutcomeStopped || s.Outcome == result.OutcomeUnsupported {
			continue
		}
		checked++
		_, rest, _ := strings.Cut(string(IssueRun(j, IssueOptions{})), "\n# ")
		title, _, _ := strings.Cut(rest, "\n")
		if want := "(" + ticketJob(s); !strings.Contains(title, want) {
			t.Fatalf("run %d: title %q, want it to name %s, the job repro.c repeats", n, title, ticketJob(s))
		}
	}
	if checked == 0 {
		t.Fatal("no generated run ended a job")
	}
}

// The calls of a job whose worker died with a batch in flight: the buffers the device confirmed, then
// those made and not confirmed, never "1031 calls = CL_SUCCESS" for buffers only 967 of which were.
func TestRunCallsOfAKilledBatchSayTheRange(t *testing.T) {
	c := uint64(967)
	s := &result.JobResult{Strategy: result.Shared, SizeBytes: 1 << 20, Outcome: result.OutcomeCrashed, Signal: "SIGKILL", AllocationsOK: 1031, ConfirmedOK: &c}
	lines, _ := runCalls(s, result.TouchFill)
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "#0..#966: ") || !strings.HasSuffix(lines[0], ": 967 calls") ||
		!strings.HasPrefix(lines[1], "#967..#1030: created and enqueued, not confirmed") || !strings.HasSuffix(lines[1], ": 64 calls") {
		t.Errorf("calls %q", lines)
	}
}
