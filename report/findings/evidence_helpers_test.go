package findings

import (
	"slices"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// apply judges r and puts the judged copy in its place, for tests that read the findings and limits off the
// run as run.json holds them.
func apply(r *result.Run) { *r = *Judge(r).Run() }

// findingsOf is the findings of one kind, in order; with strategies, only those about exactly them.
func findingsOf(fs []result.Finding, kind result.FindingKind, who ...result.Strategy) []result.Finding {
	var out []result.Finding
	for _, f := range fs {
		if f.Kind == kind && (len(who) == 0 || slices.Equal(f.Strategies, who)) {
			out = append(out, f)
		}
	}
	return out
}

// findingOf is the one finding of kind about exactly who (any strategies where who is empty); the test
// fails where there is none or more than one, as an assertion on its evidence would then mean nothing.
func findingOf(t *testing.T, fs []result.Finding, kind result.FindingKind, who ...result.Strategy) result.Finding {
	t.Helper()
	got := findingsOf(fs, kind, who...)
	if len(got) != 1 {
		t.Fatalf("%d findings of kind %s about %v, want 1:\n%s", len(got), kind, who, sentences(fs))
	}
	return got[0]
}

// evidence is the number a finding carries under key; the test fails where it carries none.
func evidence(t *testing.T, f result.Finding, key string) float64 {
	t.Helper()
	v, ok := f.Evidence[key]
	if !ok {
		t.Fatalf("%s finding %q carries no %s: %v", f.Kind, f.Sentence, key, f.Evidence)
	}
	return v
}

// wantEvidence checks each named number of a finding against what the test derived from its run.
func wantEvidence(t *testing.T, f result.Finding, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		if got := evidence(t, f, k); got != w {
			t.Errorf("%s finding about %v: %s = %v, want %v", f.Kind, f.Strategies, k, got, w)
		}
	}
}

// limitOf is the limit Judge gave the first job of strategy st (at size, where size is not 0).
func limitOf(t *testing.T, j Judged, st result.Strategy, size uint64) result.JobLimit {
	t.Helper()
	for i := range j.Run().Jobs {
		if s := &j.Run().Jobs[i]; s.Strategy == st && (size == 0 || s.SizeBytes == size) {
			return j.Limit(s)
		}
	}
	t.Fatalf("no job of %s at %d", st, size)
	return result.JobLimit{}
}

// sentences is the findings' sentences, one a line, for a failure message.
func sentences(fs []result.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(string(f.Kind) + ": " + f.Sentence + "\n")
	}
	return b.String()
}

// evidenceKey is the name under which a finding holds a figure of strategy st ("per_device_allocations_ok"),
// as the limits and the brief name them.
func evidenceKey(st result.Strategy, name string) string {
	return strings.ReplaceAll(string(st), "-", "_") + "_" + name
}
