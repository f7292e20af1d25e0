package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// withJobs is the fixture run with each job repeated under every flag set and variant given ("" for the
// default), as run --flags and --variant record them.
func withJobs(t *testing.T, flags, variants []string) *result.Run {
	r := fixture.Run(t)
	var jobs []result.JobResult
	for _, v := range variants {
		for _, f := range flags {
			for _, s := range r.Jobs {
				s.Flags, s.Variant = f, v
				jobs = append(jobs, s)
			}
		}
	}
	r.Jobs = jobs
	for _, f := range flags {
		if f != "" {
			r.Config.FlagSets = append(r.Config.FlagSets, f)
		}
	}
	for _, v := range variants {
		if v != "" {
			r.Config.Variants = append(r.Config.Variants, result.Variant{Name: v, Settings: map[string]string{"POCL_MEMORY_LIMIT": "1"}})
		}
	}
	return r
}

// hiddenLine is the note under a table that left columns out.
var hiddenLine = regexp.MustCompile(`(?m)^(\d+) columns? hidden: --wide$`)

// At 80 columns (COLUMNS=80, the width most terminals open at) every kind of table fits: a run's with a
// Flags column, a Variant column or both, a dry run's with both, a comparison's and a merge's; a table that
// left columns out to fit says so under it, and --wide brings them back.
func TestEveryTableFitsEightyColumns(t *testing.T) {
	const width = 80
	flags, variants := []string{"", "alloc-host-ptr"}, []string{"", "pool-off"}
	base, next, tol := changedRuns(fixture.Run(t))
	flagged := withJobs(t, flags, []string{""})
	plan := &result.DryRun{Platform: flagged.Platform, Devices: flagged.Devices, Touch: result.TouchFill, HostReserve: 1 << 30, HostAvailable: 20 << 30}
	for _, v := range variants {
		for _, f := range flags {
			for _, st := range result.Strategies {
				plan.Jobs = append(plan.Jobs, result.DryRunJob{Strategy: st, Variant: v, Flags: f, SizeBytes: 1 << 20, Buffers: 100000,
					Bytes: 100000 << 20, WorstHostBytes: 100000 << 20, WorstDeviceBytes: 15 << 29})
			}
		}
	}
	docs := map[string]any{
		"run with flags":          flagged,
		"run with a variant":      withJobs(t, []string{""}, variants),
		"run with flags, variant": withJobs(t, flags, variants),
		"dry run":                 plan,
		"compare":                 comparison.Compare(base, next, tol),
		"merge":                   comparison.Merge(inputs(fixture.Node(t, "n1", 1), fixture.Node(t, "n2", 0.5)), 0.1),
	}
	for name, doc := range docs {
		var b bytes.Buffer
		if err := RenderWith(&b, "table", judged(doc), Options{Width: width}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("%s at %d columns has a line %d wide: %q\n%s", name, width, n, l, out)
				break
			}
		}
		var wide bytes.Buffer
		if err := RenderWith(&wide, "table", judged(doc), Options{Width: width, Wide: true}); err != nil {
			t.Fatal(err)
		}
		if hiddenLine.MatchString(wide.String()) {
			t.Errorf("%s with --wide says columns are hidden:\n%s", name, wide.String())
		}
		if m := hiddenLine.FindStringSubmatch(out); m == nil && headerCount(out) < headerCount(wide.String()) {
			t.Errorf("%s at %d columns left columns out without saying so:\n%s", name, width, out)
		}
	}
}

// headerCount is how many columns the first table of out has, by the separators of its top border.
func headerCount(out string) int {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "┌") {
			return strings.Count(l, "┬") + 1
		}
	}
	return 0
}
