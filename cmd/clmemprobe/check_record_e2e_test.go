package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// check --record refuses a run whose thresholds are not the runtime's: an interrupted one, or one with a
// job the host guard stopped. One line, exit 2, naming what is wrong; a complete run still records.
func TestCheckRecordRefusesAnInconclusiveRun(t *testing.T) {
	r, res, _ := runOut(t, FaultEnv(t, hostBudget(64)), "--strategies", "shared,per-device", "--max-allocs", "20")
	if res.code != 0 {
		t.Fatalf("run: exit %d: %s", res.code, res.stderr)
	}
	write := func(name string, change func(*result.Run)) string {
		b, _ := json.Marshal(r)
		var c result.Run
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		change(&c)
		path := filepath.Join(t.TempDir(), name)
		if b, err := json.Marshal(&c); err != nil || os.WriteFile(path, b, 0o644) != nil {
			t.Fatal(err)
		}
		return path
	}
	complete := write("run.json", func(*result.Run) {})
	res = runTool(t, Env(), "check", "--record", complete)
	if res.code != 0 {
		t.Fatalf("a complete run: exit %d: %s", res.code, res.stderr)
	}
	// Its jobs reached the budget (20 buffers, the 64 MiB staging budget far off): the record says what
	// such expectations hold.
	completed := 0
	for _, s := range r.Jobs {
		if s.Outcome == result.OutcomeCompleted {
			completed++
		}
	}
	if want := fmt.Sprintf("%d of %d jobs reached the budget of 20 buffers without a failure", completed, len(r.Jobs)); completed == 0 ||
		res.stderr != "clmemprobe: "+want+": for them the check tests only that the budget is reached again; record a run with a larger --max-allocs (or --max-bytes) "+
			"to hold them to where the runtime fails\n" {
		t.Errorf("check --record of a run whose jobs reached the budget: stderr %q, want %q", res.stderr, want)
	}
	partial := write("run.json", func(c *result.Run) { c.Partial = true })
	oneLineError(t, runTool(t, Env(), "check", "--record", partial), exitUsage, "interrupted")
	guarded := write("run.json", func(c *result.Run) {
		s := &c.Jobs[len(c.Jobs)-1]
		s.Outcome, s.Guard, s.Reason = result.OutcomeStopped, result.GuardSystem, "host guard: system available memory fell below the reserve"
	})
	oneLineError(t, runTool(t, Env(), "check", "--record", "--output", filepath.Join(t.TempDir(), "e.json"), guarded), exitUsage,
		string(r.Jobs[len(r.Jobs)-1].Strategy)+" "+units.Size(r.Jobs[len(r.Jobs)-1].SizeBytes)+" (host guard)")
	// A crash or a hang is below expectation in every check, whatever was recorded: a baseline holding one
	// would fail every later check, so it is refused, naming the job.
	for _, outcome := range []result.Outcome{result.OutcomeCrashed, result.OutcomeHung} {
		broken := write("run.json", func(c *result.Run) { c.Jobs[0].Outcome = outcome })
		s := r.Jobs[0]
		oneLineError(t, runTool(t, Env(), "check", "--record", broken), exitUsage,
			string(s.Strategy)+" "+units.Size(s.SizeBytes)+" ("+string(outcome)+")")
	}
}
