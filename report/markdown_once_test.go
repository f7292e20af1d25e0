package report

import (
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/findings"
)

// hostUnifiedRun is ticketRun on devices whose memory is host memory, with its verdict derived, as
// `report` renders it: the verdict then says why no device sampler applied.
func hostUnifiedRun() *result.Run {
	r := ticketRun()
	for i := range r.Devices {
		r.Devices[i].HostUnified = true
	}
	return r
}

// The report says each thing once: the headline is not the Verdict's first bullet again, and the reason no
// device sampler applied, which the verdict gives, is not repeated under Per strategy.
func TestMarkdownSaysTheHeadlineAndTheSamplerOnce(t *testing.T) {
	r := hostUnifiedRun()
	md, verdict := renderMarkdown(t, r, Options{}), findings.Judge(r).Verdict()
	if n := strings.Count(md, MarkdownText(verdict[0])); n != 1 {
		t.Errorf("the headline %q appears %d times; want once", verdict[0], n)
	}
	why := strings.TrimPrefix(string(r.Jobs[0].DeviceSampler), "not available: ")
	if !saysUnmeasured(r) {
		t.Fatalf("the verdict does not say why no sampler applied (%q):\n%s", why, strings.Join(verdict, "\n"))
	}
	if n := strings.Count(md, why); n != 1 {
		t.Errorf("why no device sampler applied (%q) appears %d times; want once:\n%s", why, n, md)
	}
}

// saysUnmeasured reports whether the findings hold one of kind unmeasured about every strategy of the run:
// the finding that says why no device sampler applied, once for all of them.
func saysUnmeasured(r *result.Run) bool {
	n := 0
	for _, f := range findings.Judge(r).Findings() {
		if f.Kind == result.FindingUnmeasured && len(f.Strategies) == len(result.Strategies) {
			n++
		}
	}
	return n == 1
}

// The reproduce line keeps what changes what is measured (--touch, --host-reserve 0) and leaves out what
// only shapes the output or fits the user's machine: -q, -v, --format, --wide, -o, an absolute reserve.
func TestReproduceLineKeepsOnlyWhatIsMeasured(t *testing.T) {
	for _, c := range []struct {
		name       string
		argv, want []string
	}{
		{"output flags and a machine's reserve", []string{"clmemprobe", "run", "-q", "--touch", "fill", "--host-reserve", "200MiB", "--format=json", "--wide",
			"-v", "-o", "x.md", "--output", "y.md", "--max-allocs", "50"}, []string{"clmemprobe", "run", "--touch", "fill", "--max-allocs", "50"}},
		{"the guard turned off", []string{"clmemprobe", "run", "--host-reserve=0", "--quiet"}, []string{"clmemprobe", "run", "--host-reserve", "0"}},
		{"the guard turned off by its word", []string{"clmemprobe", "run", "--host-reserve", "off"}, []string{"clmemprobe", "run", "--host-reserve", "0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := PortableCommand(c.argv); strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("PortableCommand(%q) = %q, want %q", c.argv, got, c.want)
			}
		})
	}
}

// The Reproduce section says what the C program repeats in a run without a failure: the loop of the job
// it follows and how it ended, not "the first failure".
func TestMarkdownReproSaysWhatTheRunFound(t *testing.T) {
	r := hostUnifiedRun()
	md := renderMarkdown(t, r, Options{})
	s, err := ReproJob(findings.Judge(r), "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if s.FirstFailure != nil {
		t.Fatalf("the reproducer follows %s, which failed: the run was meant to have no failure", s.Strategy)
	}
	// What the Reproduce section says of that job (its loop, not "the first failure") is the golden file's.
	golden(t, "markdown-repro-no-failure", []byte(md[strings.Index(md, "## Reproduce"):]))
}

// In a size sweep, why no device sampler applied is a fact of the run, not of a size: the report says it
// once, not once per size.
func TestSweepSaysTheSamplerOnce(t *testing.T) {
	for _, hostUnified := range []bool{false, true} {
		r := ticketRun()
		var jobs []result.JobResult
		sizes := []uint64{4 << 10, 1 << 20}
		for _, size := range sizes {
			for _, s := range r.Jobs {
				s.SizeBytes = size
				jobs = append(jobs, s)
			}
		}
		r.Jobs, r.Config.Sizes = jobs, sizes
		for i := range r.Devices {
			r.Devices[i].HostUnified = hostUnified
		}
		why := strings.TrimPrefix(string(r.Jobs[0].DeviceSampler), "not available: ")
		if !saysUnmeasured(r) {
			t.Fatalf("host-unified %v: the verdict does not say why no sampler applied (%q):\n%s", hostUnified, why, strings.Join(findings.Judge(r).Verdict(), "\n"))
		}
		if md := renderMarkdown(t, r, Options{}); strings.Count(md, why) != 1 {
			t.Errorf("host-unified %v: why no device sampler applied (%q) appears %d times over %d sizes; want once:\n%s", hostUnified, why, strings.Count(md, why), len(sizes), md)
		}
	}
}
