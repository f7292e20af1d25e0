package findings

import (
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// TestOutsideRSSNeedsTheRunsOwnCgroup: system available memory fell by 1.6 MiB per 1 MiB buffer while the
// worker's RSS grew by 1 MiB. Where the run's own memory cgroup grew by 1.6 MiB too, the buffers held
// 600 KiB outside the process; where it grew as the RSS did, the machine's other processes took the rest,
// and the judge says that instead (in a 1 GiB cgroup the tool had said "420-540 KiB outside RSS" while the
// cgroup grew as RSS). The root cgroup without a limit is the machine's, no witness of its own; with a
// limit it is a container's, named "/" in its own cgroup namespace.
//
// The cgroup is the witness of the figure too: where the machine lost 27 MiB a buffer beside another
// suite and the cgroup grew 95 KiB more than the RSS, within the RSS's noise, nothing is said to be held
// outside (oclgrind: "27.15 MiB per buffer is host memory held outside the process"); where the cgroup
// grew 0.3 MiB more, that is the figure, not the machine's 0.6 MiB.
func TestOutsideRSSNeedsTheRunsOwnCgroup(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		path           string
		limit          uint64
		cgroup, sys    float64
		outside, other bool
	}{
		{"/pod/job", 0, 1.6 * mib, 1.6 * mib, true, false},
		{"/pod/job", 0, 1.3 * mib, 1.6 * mib, true, false},
		{"/pod/job", 0, 1.0 * mib, 1.6 * mib, false, true},
		{"/walk6", 4 << 30, 1.0*mib + 95<<10, 28 * mib, false, true},
		{"/", 1 << 30, 1.0 * mib, 1.6 * mib, false, true}, // a container's, named "/" in its cgroup namespace
		{"/", 0, 1.0 * mib, 1.6 * mib, true, false},
	} {
		r := fixture.Run(t)
		r.Jobs = r.Jobs[:1]
		j := &r.Jobs[0]
		sys, cg := c.sys, c.cgroup
		j.SizeBytes, j.HostBytesPerBuffer, j.SystemBytesPerBuffer, j.CommittedBytesPerBuffer = mib, mib, &sys, nil
		j.SlopeNoise = &result.SlopeNoise{Host: 118 << 10} // the oclgrind run's RSS noise
		j.Fit = &result.Fit{Samples: 50, Spanned: j.AllocationsOK, OK: true}
		j.Resources = &result.Resources{Cgroup: &result.Cgroup{Version: 2, Path: c.path, Memory: result.Resource{PerBuffer: &cg, Limit: c.limit}}}
		apply(r)
		outside, other := false, false
		own := c.path != "/" || c.limit > 0
		for _, f := range r.Findings {
			// The cost beside RSS is the own cgroup's where there is one, never the machine's then (it read
			// 718 KiB a buffer by MemAvailable where the cgroup was charged 1041 KiB).
			if f.Kind == result.FindingCost && own && (strings.Contains(f.Sentence, "system memory") || !strings.Contains(f.Sentence, units.SignedBytes(cg)+" of its memory cgroup")) {
				t.Errorf("cgroup %s at %.0f per buffer: cost %q", c.path, cg, f.Sentence)
			}
			if f.Kind == result.FindingOutsideRSS {
				outside = true
				if want := cg - mib; own && f.Evidence["outside_rss_bytes_per_buffer"] != want {
					t.Errorf("cgroup %s at %.0f per buffer: %v outside, want the cgroup's %.0f (%q)", c.path, cg, f.Evidence["outside_rss_bytes_per_buffer"], want, f.Sentence)
				}
			}
			if f.Kind == result.FindingUnmeasured && f.Evidence["cgroup_bytes_per_buffer"] == cg && f.Evidence["machine_outside_rss_bytes_per_buffer"] == sys-mib {
				other = true
			}
		}
		if outside != c.outside || other != c.other {
			t.Errorf("cgroup %s at %.0f per buffer: outside the process %v, other processes' %v; want %v, %v: %q", c.path, cg, outside, other, c.outside, c.other, r.Verdict)
		}
	}
}
