package findings

import (
	"fmt"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A sentence written of one job ("was stopped", "the host guard stopped it") that several strategies
// share agrees with its subject: "Each of shared and per-device was stopped", never "shared and per-device
// was stopped" or "shared and per-device: the host guard stopped it"; one strategy keeps its plain name.
func TestGuardSentencesAgreeWithTheirSubject(t *testing.T) {
	guarded := job(result.Shared, result.OutcomeStopped, 40, 0, 1)
	guarded.Guard, guarded.Reason = result.GuardSystem, "host guard: system available memory fell below the reserve"
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
		v := verdictOf(r)
		subject := names(who)
		if stopped > 1 {
			subject = "Each of " + subject
		}
		for _, want := range []string{
			fmt.Sprintf("%s was stopped after %d buffers", subject, guarded.AllocationsOK),
			subject + ": the host guard stopped it before",
		} {
			if !strings.Contains(v, want) {
				t.Errorf("%d stopped: want %q in\n%s", stopped, want, v)
			}
		}
	}
}
