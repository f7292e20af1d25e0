package findings

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/internal/fixture"
)

// claimWords are the words that assert each kind of claim, in the forms the findings write them. A
// sentence that holds them must carry the claim, whose conditions the judge checked on its evidence; the
// negative forms ("does not prove host memory ran out", "whether ... cannot be told") do not match.
var claimWords = map[result.ClaimKind]*regexp.Regexp{
	result.ClaimSpare:       regexp.MustCompile(`with memory to spare`),
	result.ClaimHostRanOut:  regexp.MustCompile(`: host memory ran out`),
	result.ClaimOutside:     regexp.MustCompile(`is host memory held outside the process|held outside the process's RSS|of host memory outside the process's RSS`),
	result.ClaimUseLayout:   regexp.MustCompile(`use [a-z-]+'s layout`),
	result.ClaimFurther:     regexp.MustCompile(`[0-9.]+x as (many|far)|where one context per device (reached|completed)`),
	result.ClaimNeverPlaced: regexp.MustCompile(`defers allocation (until|to) first use|took them without allocating them|never really allocated`),
	result.ClaimExactCount:  regexp.MustCompile(`(crashed|hung) after [0-9]+ buffers?\b`),
}

// claimRuns are the runs the claim properties are held on: the sentence tests' runs, every run saved
// under docs/examples (real runtimes: PoCL, faultcl, the H100 and H200), and generated sweeps, half of them
// with jobs placed at random (the pairs placement is about, which the generator alone makes rarely).
func claimRuns(t *testing.T) map[string]*result.Run {
	runs := sentenceRuns(t)
	err := filepath.WalkDir("../../docs/examples", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		r, err := result.Load(path)
		var notRun *result.NotAResultError
		if errors.As(err, &notRun) {
			return nil // a trace, a largest, an expectation: no run
		}
		if err == nil {
			runs[path] = r
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 42))
	for n := 0; n < 2000; n++ {
		r := fixture.RandomSweep(rng)
		if n%2 == 1 {
			placeAtRandom(rng, r)
		}
		runs["generated run "+strconv.Itoa(n)] = r
	}
	return runs
}

// TestEveryClaimHoldsOnItsEvidence: no finding makes a claim whose conditions fail on the evidence it
// carries, and no two findings contradict: a job said to have gone further (or less far) than another, and
// another finding saying it never placed its buffers while the job it was held against is not said so.
func TestEveryClaimHoldsOnItsEvidence(t *testing.T) {
	made := map[result.ClaimKind]int{}
	for name, r := range claimRuns(t) {
		fs := Judge(r).Findings()
		for _, f := range fs {
			for _, kind := range f.Claims {
				made[kind]++
				if c, failed := unmet(kind, f.Evidence); failed {
					t.Errorf("%s: %q claims %s, which needs %s (evidence %v)", name, f.Sentence, kind, c.needs, f.Evidence)
				}
			}
		}
		if f, g, ok := contradiction(fs); ok {
			t.Errorf("%s: %q contradicts %q", name, f.Sentence, g.Sentence)
		}
	}
	for kind := range claimConditions {
		if made[kind] == 0 {
			t.Errorf("no finding claimed %s: the runs do not reach it", kind)
		}
	}
	t.Logf("claims made: %v", made)
}

// contradiction finds a comparison of jobs (a went-further claim) beside a never-placed claim about one of
// them at the same size and group, where another of the jobs compared is not known to have placed none
// (by a never-placed claim, or by the comparison's own evidence): a layout that placed nothing went as far
// as its budget, so it is held only against another that placed nothing.
func contradiction(fs []result.Finding) (result.Finding, result.Finding, bool) {
	for _, f := range fs {
		if !slices.Contains(f.Claims, result.ClaimFurther) {
			continue
		}
		compared, none := slices.Clone(f.Strategies), map[result.Strategy]bool{}
		for k, v := range f.Evidence {
			name, st := evidenceName(k)
			if k == "job_placed" && v == 0 {
				none[f.Strategies[0]] = true
			}
			if st == "" || (name != "allocations_ok" && name != "placed") {
				continue
			}
			compared = append(compared, st)
			if name == "placed" && v == 0 {
				none[st] = true
			}
		}
		for _, g := range fs {
			if slices.Contains(g.Claims, result.ClaimNeverPlaced) && sameGroup(f, g) && slices.Equal(f.Sizes, g.Sizes) {
				for _, st := range g.Strategies {
					none[st] = true
				}
			}
		}
		for _, g := range fs {
			if !slices.Contains(g.Claims, result.ClaimNeverPlaced) || !sameGroup(f, g) || !slices.Equal(f.Sizes, g.Sizes) {
				continue
			}
			claimed, all := false, true
			for _, st := range compared {
				claimed, all = claimed || slices.Contains(g.Strategies, st), all && none[st]
			}
			if claimed && !all {
				return f, g, true
			}
		}
	}
	return result.Finding{}, result.Finding{}, false
}

// TestSentencesCarryTheirClaims: every sentence whose words assert a kind of claim carries that claim, so
// its conditions were checked; a claim written in words the judge did not check fails here.
func TestSentencesCarryTheirClaims(t *testing.T) {
	seen := map[result.ClaimKind]int{}
	for name, r := range claimRuns(t) {
		for _, f := range Judge(r).Findings() {
			for kind, words := range claimWords {
				if !words.MatchString(f.Sentence) {
					continue
				}
				seen[kind]++
				if !slices.Contains(f.Claims, kind) {
					t.Errorf("%s: %q says %s (%q) without the claim (claims %v, evidence %v)", name, f.Sentence, kind, words.FindString(f.Sentence), f.Claims, f.Evidence)
				}
			}
		}
	}
	t.Logf("sentences that assert a claim, by kind: %v", seen)
}

// TestAClaimWhoseConditionFailsIsNotMade: each kind of claim, given evidence that fails its first
// condition, becomes a finding that says what cannot be told and why, with the same subjects.
func TestAClaimWhoseConditionFailsIsNotMade(t *testing.T) {
	for kind := range claimConditions {
		f := result.Finding{Kind: result.FindingLimit, Strategies: []result.Strategy{result.Shared}, Sentence: "shared: something " + string(kind),
			Evidence: failing(kind), Claims: []result.ClaimKind{kind}}
		got := checkClaims(f)
		if got.Kind != result.FindingUnmeasured || len(got.Claims) != 0 || !slices.Equal(got.Strategies, f.Strategies) {
			t.Errorf("%s on %v: got %+v", kind, f.Evidence, got)
		}
		lf := checkLimit(limitFinding{result.LimitHostMemory, f.Evidence, "body", []result.ClaimKind{kind}})
		if lf.limit != result.LimitUnknown || len(lf.claims) != 0 {
			t.Errorf("%s: the limit was kept: %+v", kind, lf)
		}
	}
}

// failing is evidence on which the first condition of kind fails.
func failing(kind result.ClaimKind) map[string]float64 {
	switch kind {
	case result.ClaimFurther:
		return map[string]float64{"shared_placed": 0, "per_device_placed": 1}
	case result.ClaimUseLayout:
		return map[string]float64{"shared_placed": 1}
	case result.ClaimSpare, result.ClaimHostRanOut:
		return map[string]float64{"size_bytes": mib}
	case result.ClaimOutside:
		return map[string]float64{"outside_rss_bytes_per_buffer": 1000, "outside_threshold_bytes": 4096}
	case result.ClaimNeverPlaced:
		return map[string]float64{"growth_per_buffer_fraction": 0.5}
	case result.ClaimExactCount:
		return map[string]float64{"allocations_ok": 1031, "confirmed_ok": 967}
	}
	return nil
}

// TestFailedFirstOnlyWhereAnotherWentFurther: "failed first" says another job went further; over the claim
// runs, every finding that says it of a job has, at its size and group, another job placed alike
// (placedAlike) with more buffers. Before, a run of one strategy said "shared failed first", and the
// H100's default run said it of migrate-first beside two layouts that placed nothing.
func TestFailedFirstOnlyWhereAnotherWentFurther(t *testing.T) {
	said := 0
	for name, r := range claimRuns(t) {
		for _, f := range Judge(r).Findings() {
			if !strings.Contains(f.Sentence, "failed first") || len(f.Strategies) == 0 || len(f.Sizes) == 0 {
				continue
			}
			said++
			if !wentFurtherAlike(r, f) {
				t.Errorf("%s: %q, but no job placed alike went further", name, f.Sentence)
			}
		}
	}
	t.Logf("%d findings said 'failed first'", said)
}

// wentFurtherAlike is the test's own reading of "failed first": some job of f's size, variant and flags made
// more buffers than f's first strategy did, and the two are not placed apart.
func wentFurtherAlike(r *result.Run, f result.Finding) bool {
	for i := range r.Jobs {
		s := &r.Jobs[i]
		if s.Strategy != f.Strategies[0] || s.SizeBytes != f.Sizes[0] || s.Variant != f.Variant || s.Flags != f.Flags {
			continue
		}
		for k := range r.Jobs {
			o := &r.Jobs[k]
			if o.SizeBytes == s.SizeBytes && o.Variant == s.Variant && o.Flags == s.Flags && o.Outcome != result.OutcomeUnsupported &&
				o.AllocationsOK > s.AllocationsOK && placedAlike(placementOf(r, s), placementOf(r, o)) {
				return true
			}
		}
	}
	return false
}
