package findings

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// BriefBullets is how many verdict lines a terminal shows under the table, the headline among them: a
// verdict read in five seconds. The Markdown report and -v keep every finding.
const BriefBullets = 6

// Brief is the verdict a terminal shows: the headline, then the other facts ranked (what failed and why,
// what differs between jobs, what a code means, the costs, what completed), each fact once, one fact of
// several variants or flag sets merged into one line under their labels; Left is how many facts did not fit.
type Brief struct {
	Lines []string
	Left  int
}

// BriefOf is the short verdict of a judged run in at most max lines.
func BriefOf(j Judged, max int) Brief {
	r := j.Run()
	if len(j.Findings()) == 0 || max < 1 {
		return Brief{}
	}
	facts := briefFacts(j.Findings())
	sort.SliceStable(facts, func(i, j int) bool { return facts[i].rank < facts[j].rank })
	var b Brief
	var shown []*briefFact
	for _, f := range facts {
		if slices.ContainsFunc(shown, f.saidBy) {
			continue
		}
		if len(b.Lines) == max {
			b.Left++
			continue
		}
		shown = append(shown, f)
		b.Lines = append(b.Lines, f.sentence(r))
	}
	return b
}

// saidBy reports whether another fact is about this one's strategies and its evidence holds every figure
// of this one under the same name (a strategy's name before it taken off: the headline's
// per_device_allocations_ok is per-device's allocations_ok): "per-device reached 512 buffers, 8.00x as many
// as shared" after a headline that said one context per device reached 8.00x as many. A fact without
// figures is never said by another.
func (bf *briefFact) saidBy(other *briefFact) bool {
	if len(bf.f.Evidence) == 0 {
		return false
	}
	has := map[string]bool{}
	about := map[result.Strategy]bool{}
	for _, st := range other.f.Strategies {
		about[st] = true
	}
	for k, v := range other.f.Evidence {
		name, st := evidenceName(k)
		has[name+"="+threeDigits(v)] = true
		about[st] = true
	}
	// A job's limit and first failure are in the table's own columns: a fact of those kinds whose figures
	// another fact holds is said for every job it names.
	tabled := bf.f.Kind == result.FindingLimit || bf.f.Kind == result.FindingFailure
	for _, st := range bf.f.Strategies {
		if !about[st] && !tabled {
			return false
		}
	}
	for k, v := range bf.f.Evidence {
		if strings.HasSuffix(k, "_placed") {
			continue // a qualifier of the comparison (how its jobs placed their buffers), not a figure it says
		}
		if name, _ := evidenceName(k); !has[name+"="+threeDigits(v)] {
			return false
		}
	}
	return true
}

// evidenceName is an evidence key without the strategy it names, and that strategy ("per_device_allocations_ok"
// is per-device's "allocations_ok"); "" where it names none.
func evidenceName(k string) (string, result.Strategy) {
	for _, st := range result.Strategies {
		if rest, ok := strings.CutPrefix(k, strings.ReplaceAll(string(st), "-", "_")+"_"); ok {
			return rest, st
		}
	}
	return k, ""
}

// briefFact is one fact and the groups (variant and flag set) it holds for.
type briefFact struct {
	f      result.Finding
	labels []string // the labels of the groups it holds for, "" for the default group
	rank   int
}

// briefFacts merges the findings that state one fact, the headline first (a failure headline of another
// group that says the same merges into it), leaving out what the headline already says: the headlines of
// the other groups (summaries of their own findings) unless they are a failure, and the findings of the
// headline's own group of the kind the headline states.
func briefFacts(fs []result.Finding) []*briefFact {
	head := fs[0]
	out := []*briefFact{{f: head, labels: []string{head.Label}, rank: -1}}
	by := map[string]*briefFact{}
	for _, k := range factKeys(head) {
		by[k] = out[0]
	}
	// The groups whose own headline is a failure: their first failures are said by it.
	failed := map[[2]string]bool{}
	for _, f := range fs {
		if f.Kind == result.FindingHeadline && f.About == result.FindingFailure {
			failed[[2]string{f.Variant, f.Flags}] = true
		}
	}
	for _, f := range fs[1:] {
		if f.Kind == result.FindingHeadline && f.About != result.FindingFailure {
			// Another group's summary: where it says what the headline says, the headline holds for that
			// group too ("With every flag set: no allocation failed ..."); else its group's findings say it.
			if by[factKeys(f)[1]] == out[0] && !slices.Contains(out[0].labels, f.Label) {
				out[0].labels = append(out[0].labels, f.Label)
			}
			continue
		}
		if sameGroup(f, head) && (f.Kind == head.About || (head.About == result.FindingDeferred && f.Kind == result.FindingCompleted)) {
			continue
		}
		if f.Kind == result.FindingFailure && failed[[2]string{f.Variant, f.Flags}] {
			continue
		}
		keys := factKeys(f)
		if bf := cmp.Or(by[keys[0]], by[keys[1]]); bf != nil {
			if !slices.Contains(bf.labels, f.Label) {
				bf.labels = append(bf.labels, f.Label)
			}
			continue
		}
		bf := &briefFact{f: f, labels: []string{f.Label}, rank: briefRank(f)}
		for _, k := range keys {
			by[k] = bf
		}
		out = append(out, bf)
	}
	return out
}

func sameGroup(a, b result.Finding) bool { return a.Variant == b.Variant && a.Flags == b.Flags }

// factKeys identify a fact across groups: its kind and the jobs it is about, with its evidence (figures to
// three significant digits: two measurements that print alike are one fact) or with its claim (one
// sentence under two labels is one fact, whatever figures it does not print).
func factKeys(f result.Finding) [2]string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%v|%v", f.Kind, f.About, f.Strategies, f.Sizes)
	about := b.String()
	keys := make([]string, 0, len(f.Evidence))
	for k := range f.Evidence {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "|%s=%s", k, threeDigits(f.Evidence[k]))
	}
	if len(f.Evidence) == 0 {
		b.WriteString("|" + claimOf(f)) // a fact without figures is its claim, made from one fixed form
	}
	return [2]string{b.String(), about + "|claim|" + claimOf(f)}
}

func threeDigits(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%.3g", v)
}

// briefRank orders facts as a reader asks: what failed first and why, what differs between jobs (with the
// numbers), what a code means and what each buffer cost (in the findings' order), what was held outside the
// process, what only completed.
func briefRank(f result.Finding) int {
	switch f.Kind {
	case result.FindingHeadline, result.FindingFailure, result.FindingOutcome, result.FindingLimit, result.FindingRepeated:
		return 0
	case result.FindingComparison, result.FindingVariant, result.FindingFlags, result.FindingLike:
		return 1
	case result.FindingCost:
		if len(f.Evidence) == 0 { // no fit: a cost that was not measured says little
			return 4
		}
		return 2
	case result.FindingCode:
		return 2
	case result.FindingOutsideRSS:
		return 3
	}
	return 4
}

// sentence is the fact as one line: the finding's own where it holds for one group, else its claim under
// the groups' labels ("With every flag set: ...").
func (bf *briefFact) sentence(r *result.Run) string {
	if len(bf.labels) == 1 {
		return bf.f.Sentence
	}
	return "With " + mergedLabel(r, bf.labels) + ": " + render.LowerFirst(claimOf(bf.f))
}

// claimOf is a finding's sentence without its group's label.
func claimOf(f result.Finding) string {
	if f.Claim != "" {
		return f.Claim
	}
	return f.Sentence
}

// mergedLabel names several groups: "every flag set" where they are all of the run's, else their labels,
// "flags read-write, use-host-ptr and read-only" where only flags differ.
func mergedLabel(r *result.Run, labels []string) string {
	groups := jobGroups(r)
	variants, sets := false, false
	for _, g := range groups {
		variants = variants || g.variant != ""
		sets = sets || g.flags != ""
	}
	if len(labels) == len(groups) {
		switch {
		case variants && sets:
			return "every variant and flag set"
		case variants:
			return "every variant"
		}
		return "every flag set"
	}
	parts := make([]string, len(labels))
	onlyFlags := !variants
	for i, l := range labels {
		switch {
		case l == "" && onlyFlags:
			parts[i] = "read-write"
		case l == "":
			parts[i] = "the default settings"
		case onlyFlags:
			parts[i] = strings.TrimPrefix(l, "flags ")
		default:
			parts[i] = l
		}
	}
	joined := strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	if onlyFlags {
		return "flags " + joined
	}
	return joined
}
