package main

// End-to-end tests of `clmemprobe remedy` on the fault-injection runtime through the real ICD loader,
// modelling a NEO-like multi-device context: -6 after N buffers in a context over two devices.

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/judge"
)

func remedyOf(t *testing.T, env []string, args ...string) *result.Remedy {
	t.Helper()
	res := runTool(t, env, append([]string{"remedy", "--format", "json", "-q"}, args...)...)
	if res.code != 0 {
		t.Fatalf("remedy %v: exit %d: %s", args, res.code, res.stderr)
	}
	var r result.Remedy
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil || r.Kind != result.RemedyKind {
		t.Fatalf("remedy's JSON: %v: %s", err, res.stdout)
	}
	return &r
}

// The shared context fails with -6 at #300; one context per device is the smallest change that lifts it,
// with its reach measured (the budget, 900 buffers); from the flags and from the failing run's run.json.
func TestRemedyRanksOneContextPerDeviceFirst(t *testing.T) {
	env := FaultEnv(t, "FAULTCL_SHARED_LIMIT=300")
	// Buffers of 64 KiB: the limit is a count, and 900 of them are filled in a sixteenth of the time.
	args := []string{"--strategies", "shared", "--max-allocs", "900", "--size", "64KiB", "--touch", "fill"}
	_, _, dir := runOut(t, env, append(args, "-q")...)
	for _, r := range []*result.Remedy{remedyOf(t, env, args...), remedyOf(t, env, dir)} {
		b := r.Baseline
		if b.Outcome != result.OutcomeFailed || b.FirstFailure == nil || b.FirstFailure.Code != -6 || b.AllocationsOK != 300 {
			t.Fatalf("baseline %+v", b)
		}
		first := r.Remedies[0]
		if first.Strategy != result.PerDevice || !first.Lifts || first.AllocationsOK != 900 || first.Gain != 3 {
			t.Errorf("first remedy %+v, want one context per device, lifting it at 900 buffers, 3x", first)
		}
		// The headline is the judge's of this ranking (the smallest change that lifts it, how far, and what did
		// not help: report/findings' tests and report's golden remedy files hold its words).
		helped := 0
		for _, j := range r.Remedies {
			if j.Lifts {
				helped++
			}
		}
		if want := judge.Remedy(r).Verdict(); !slices.Equal(r.Verdict, want) || helped == 0 || helped == len(r.Remedies) {
			t.Errorf("verdict %q, want the judge's %q, of changes some of which lift the failure (%d of %d)", r.Verdict, want, helped, len(r.Remedies))
		}
		for _, j := range r.Remedies {
			if j.Strategy == result.Shared && j.Flags != "" && j.Lifts {
				t.Errorf("a flag change on the shared context lifted a per-context limit: %+v", j)
			}
		}
	}
	oneLineError(t, runTool(t, env, "remedy", "--out", t.TempDir()), exitUsage, "--out")
}
