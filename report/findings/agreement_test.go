package findings

import (
	"fmt"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A sentence written of one job ("was stopped", "the host guard stopped it") that several strategies
// share agrees with its subject: "Each of shared and per-device was stopped", never "shared and per-device
// was stopped" or "shared and per-device: the host guard stopped it"; one strategy keeps its plain name.
func TestGuardSentencesAgreeWithTheirSubject(t *testing.T) {
	guarded := job(result.Shared, result.OutcomeStopped, 40, 0, 1)
	guarded.Guard, guarded.Reason = result.GuardSystem, "host guard: system available memory fell below the reserve"
	var verdicts []string
	for _, stopped := range []int{1, 2} {
		r := &result.Run{Config: result.Config{Touch: result.TouchFill, HostReserveByte: 3 << 30}, Environment: &result.Environment{HostMemBytes: 64 << 30},
			Devices: []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}, {Index: 1, GlobalMemBytes: 1 << 30}}}
		var who []result.Strategy
		for _, st := range []result.Strategy{result.Shared, result.PerDevice}[:stopped] {
			j := guarded
			j.Strategy = st
			r.Jobs, who = append(r.Jobs, j), append(who, st)
		}
		r.Jobs = append(r.Jobs, job(result.MigrateFirst, result.OutcomeCompleted, 100, 0, 1))
		j := Judge(r)
		// The claims: the guard's limit of each stopped strategy, after its buffers; their words agree with
		// their subject in the golden file.
		for _, st := range who {
			if l := limitOf(t, j, st, 0); l.Limit != result.LimitHostMemory || l.Evidence["allocations_ok"] != float64(guarded.AllocationsOK) {
				t.Errorf("%d stopped: %s's limit %+v, want the host's after %d buffers", stopped, st, l, guarded.AllocationsOK)
			}
		}
		verdicts = append(verdicts, fmt.Sprintf("%d stopped:", stopped), verdictOf(r))
	}
	goldenLines(t, "guard-agreement", verdicts)
}
