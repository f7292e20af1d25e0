package findings

import (
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A worker its memory cgroup's OOM killer ended is limited by the cgroup, with the cgroup's use and its
// oom_kill counts in the evidence; one that died otherwise while the cgroup's killer ended some process is
// unknown, with those counts, as neither proves what ended it.
func TestCgroupEndsCarryTheirCounts(t *testing.T) {
	r := sentenceRuns(t)["cgroup"]
	j := Judge(r)
	for _, c := range []struct {
		st    result.Strategy
		limit result.Limit
		used  bool
	}{{result.Shared, result.LimitCgroupMemory, true}, {result.PerDevice, result.LimitUnknown, false}} {
		var s *result.JobResult
		for i := range r.Jobs {
			if r.Jobs[i].Strategy == c.st {
				s = &r.Jobs[i]
			}
		}
		cg := s.Resources.Cgroup
		l := limitOf(t, j, c.st, 0)
		if l.Limit != c.limit {
			t.Errorf("%s: limit %q, want %q", c.st, l.Limit, c.limit)
		}
		want := map[string]float64{"cgroup_oom_kills_at_start": float64(cg.OOMKillsAtStart), "cgroup_oom_kills_at_end": float64(cg.OOMKillsAtEnd)}
		if c.used {
			want["cgroup_used_bytes"], want["cgroup_limit_bytes"] = float64(cg.Memory.AtEnd), float64(cg.Memory.Limit)
			want["cgroup_oom_kills"] = float64(cg.OOMKillsAtEnd - cg.OOMKillsAtStart)
		}
		f := findingOf(t, j.Findings(), result.FindingLimit, c.st)
		wantEvidence(t, f, want)
		for k, v := range want {
			if l.Evidence[k] != v {
				t.Errorf("%s: the job's limit evidence %s = %v, want %v as its finding's", c.st, k, l.Evidence[k], v)
			}
		}
	}
}
