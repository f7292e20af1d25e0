// Package findings derives what a run means from its numbers: pure functions of a result, tested as data.
// Every sentence rests on a measurement it names; where nothing was measured, the sentence says so instead
// of guessing. Strategies that did the same thing share one sentence.
package findings

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// Derive returns the run's findings, the headline first, and each strategy's limit, one per strategy in the
// run's order; it writes nothing into the run. A run under several variants is judged variant by variant
// (each variant's findings say which), and then variant against variant: which settings moved which
// threshold.
func Derive(r *result.Run) ([]result.Finding, []result.JobLimit) {
	limits := map[*result.JobResult]limitFinding{}
	fs := derive(r, limits)
	out := make([]result.JobLimit, len(r.Jobs))
	for i := range r.Jobs {
		lf := limits[&r.Jobs[i]]
		out[i] = result.JobLimit{Limit: lf.limit, Evidence: lf.evidence}
	}
	return fs, out
}

// derive returns the run's findings and puts each strategy's limit in limits.
func derive(r *result.Run, limits map[*result.JobResult]limitFinding) []result.Finding {
	fs := deriveVariants(r, limits)
	// What holds for the whole run, once, right after the headline: a single device, jobs that did not run.
	var notes []result.Finding
	if f, ok := oneDevice(r); ok {
		notes = append(notes, f)
	}
	if f, ok := notRun(r); ok {
		notes = append(notes, f)
	}
	if f, ok := likeFinding(r); ok {
		notes = append(notes, f)
	}
	return append(fs[:1:1], append(notes, fs[1:]...)...)
}

// deriveVariants returns the findings of every variant and flag set, the first one's headline first.
func deriveVariants(r *result.Run, limits map[*result.JobResult]limitFinding) []result.Finding {
	variants, sets := r.VariantNames(), distinct(jobsOf(r, nil), func(s *result.JobResult) string { return s.Flags })
	if len(variants) <= 1 && len(sets) <= 1 {
		return deriveOne(r, jobsOf(r, nil), limits)
	}
	var head []result.Finding
	var rest []result.Finding
	said := map[string]bool{}
	groups := jobGroups(r)
	headAt := headGroup(groups, len(sets) > 1)
	for i, g := range groups {
		v := g.variant
		fs := deriveOne(r, g.jobs, limits)
		kept := fs[:0]
		for k := range fs {
			// What a code means on this runtime, and what could not be measured, is the same in every
			// group: said once.
			if (fs[k].Kind == result.FindingCode || fs[k].Kind == result.FindingUnmeasured) && said[fs[k].Sentence] {
				continue
			}
			said[fs[k].Sentence] = true
			fs[k].Variant, fs[k].Flags = v, g.flags
			if label := groupLabel(r, g, len(variants) > 1, len(sets) > 1); label != "" {
				fs[k].Claim, fs[k].Label = fs[k].Sentence, label
				fs[k].Sentence = "With " + label + ": " + render.LowerFirst(fs[k].Sentence)
			}
			kept = append(kept, fs[k])
		}
		fs = kept
		if i == headAt {
			head = fs[:1]
		} else {
			rest = append(rest, fs[0])
		}
		rest = append(rest, fs[1:]...)
	}
	var effects []result.Finding
	if len(variants) > 1 {
		effects = variantEffects(r, variants)
	}
	if len(sets) > 1 {
		effects = append(effects, flagEffects(r)...)
	}
	return append(append(head, effects...), rest...)
}

// headGroup is the group whose headline leads the run: the first, unless the run swept flag sets and a
// later set ended in a failure, a crash or a hang where the first did not (a flag set the runtime refuses is
// the run's news, not "no allocation failed").
func headGroup(groups []jobGroup, flagSweep bool) int {
	if !flagSweep {
		return 0
	}
	for i, g := range groups {
		for _, s := range g.jobs {
			switch s.Outcome {
			case result.OutcomeFailed, result.OutcomeCrashed, result.OutcomeHung, result.OutcomeWrong:
				return i
			}
		}
	}
	return 0
}

// jobGroup is the jobs of one variant with one flag set: findings are derived group by group, as the jobs
// of a group differ only by strategy and size.
type jobGroup struct {
	variant, flags string
	jobs           []*result.JobResult
}

// jobGroups are the run's groups in the order their first job ran.
func jobGroups(r *result.Run) []jobGroup {
	var out []jobGroup
	at := map[[2]string]int{}
	for i := range r.Jobs {
		s := &r.Jobs[i]
		k := [2]string{s.Variant, s.Flags}
		n, ok := at[k]
		if !ok {
			n = len(out)
			at[k] = n
			out = append(out, jobGroup{variant: s.Variant, flags: s.Flags})
		}
		out[n].jobs = append(out[n].jobs, s)
	}
	return out
}

// groupLabel names a group's variant and flags, each where the run has several: "variant pool-off
// (...)", "flags use-host-ptr", or both; the defaults too ("the default variant", "flags read-write"), as a
// sentence of one group must not read as the whole run's.
func groupLabel(r *result.Run, g jobGroup, variants, sets bool) string {
	var parts []string
	switch {
	case g.variant != "":
		parts = append(parts, variantLabel(r, g.variant))
	case variants:
		parts = append(parts, "the default variant")
	}
	switch {
	case g.flags != "":
		parts = append(parts, "flags "+g.flags)
	case sets:
		parts = append(parts, "flags read-write")
	}
	return strings.Join(parts, " and ")
}

// jobsOf is the run's strategies under one variant (every strategy where variant is nil), in order.
func jobsOf(r *result.Run, variant *string) []*result.JobResult {
	var out []*result.JobResult
	for i := range r.Jobs {
		if variant == nil || r.Jobs[i].Variant == *variant {
			out = append(out, &r.Jobs[i])
		}
	}
	return out
}

// deriveOne returns the findings of the jobs of a run under one variant, and puts their limits in limits.
func deriveOne(r *result.Run, jobs []*result.JobResult, limits map[*result.JobResult]limitFinding) []result.Finding {
	d := &deriver{run: r, jobs: jobs, sizes: distinct(jobs, func(s *result.JobResult) uint64 { return s.SizeBytes }),
		limits: limits, saidCount: map[result.Strategy]bool{}}
	for _, size := range d.sizes {
		d.size(size)
	}
	// What could not be measured is a fact of the run's samplers, not of a buffer size: said once for a
	// sweep, not once per size.
	views := make([]*view, len(jobs))
	for i, s := range jobs {
		views[i] = newView(r, s)
	}
	d.unmeasured(views, 0)
	d.codeFindings()
	head := d.headline()
	out := d.out
	if head.About == result.FindingCompleted || head.About == result.FindingDeferred {
		// The headline says no allocation failed within the budget (and, deferred, that memory did not
		// grow): "reached the budget without a failure" and "did not grow" would say it again.
		out = slices.DeleteFunc(out, func(f result.Finding) bool {
			return f.Kind == result.FindingCompleted || (head.About == result.FindingDeferred && f.Kind == result.FindingDeferred)
		})
	}
	return append(append([]result.Finding{head}, d.stopNotes()...), out...)
}

// distinct returns key(s) of every job, each once, in the order they first appear.
func distinct[K comparable](jobs []*result.JobResult, key func(*result.JobResult) K) []K {
	var out []K
	seen := map[K]bool{}
	for _, s := range jobs {
		if k := key(s); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// deriver collects the findings of a run, size by size.
type deriver struct {
	run   *result.Run
	jobs  []*result.JobResult // the strategies judged together: the run's, under one variant
	sizes []uint64            // the jobs' buffer sizes, each once, in order
	// limits is where the deriver puts each job's limit; the run itself is only read.
	limits map[*result.JobResult]limitFinding
	out    []result.Finding
	first  *firstEnd // the earliest end of all, for the headline
	// saidCount holds the strategies whose allocation cap is said: once, for every size of a sweep.
	saidCount map[result.Strategy]bool
	codes     codeNotes
	// noGrowth are the strategies whose measured memory did not grow with the buffers created, and
	// noGrowthSizes the buffer sizes at which it did not.
	noGrowth      []result.Strategy
	noGrowthSizes []uint64
	noGrowthMost  float64 // the most any of them grew per buffer, as a fraction of a buffer, noise included
}

// firstEnd is the strategy that ended first, what it ran into, and what to try.
type firstEnd struct {
	v     *view
	limit limitFinding
	size  uint64
}

// group collects strategies under one sentence body, in the order they come.
type group struct {
	kind     result.FindingKind
	body     string
	evidence map[string]float64
	source   string
	claims   []result.ClaimKind
	who      []result.Strategy
}

type groups struct {
	list []*group
	by   map[string]*group
}

func (g *groups) add(kind result.FindingKind, body string, s result.Strategy, evidence map[string]float64, source string, claims ...result.ClaimKind) {
	if g.by == nil {
		g.by = map[string]*group{}
	}
	key := string(kind) + "\x00" + body
	gr := g.by[key]
	if gr == nil {
		gr = &group{kind: kind, body: body, evidence: evidence, source: source, claims: claims}
		g.by[key] = gr
		g.list = append(g.list, gr)
	}
	gr.who = append(gr.who, s)
}

// emit writes each group as a finding: "who body" with the sizes prefix of a sweep.
func (d *deriver) emit(g *groups, size uint64, subject func(who string, n int, body string) string) {
	for _, gr := range g.list {
		sentence := subject(names(gr.who), len(gr.who), gr.body) + gr.body
		d.add(result.Finding{Kind: gr.kind, Strategies: gr.who, Sentence: sentence, Evidence: gr.evidence, Source: gr.source, Claims: gr.claims}, size)
	}
}

// add appends a finding for one size; in a sweep its sentence says which size. Evidence that is not a
// number (a ratio over nothing, from an edited file) is left out.
func (d *deriver) add(f result.Finding, size uint64) {
	for k, v := range f.Evidence {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			delete(f.Evidence, k)
		}
	}
	f = checkClaims(f)
	if size > 0 {
		f.Sizes = []uint64{size}
		if len(d.sizes) > 1 {
			f.Sentence = units.Size(size) + " buffers: " + f.Sentence
		}
	}
	f.Sentence = capitalize(f.Sentence)
	if !strings.HasSuffix(f.Sentence, ".") {
		f.Sentence += "."
	}
	d.out = append(d.out, f)
}

func (d *deriver) size(size uint64) {
	var views []*view
	for _, s := range d.jobs {
		if s.SizeBytes == size {
			views = append(views, newView(d.run, s))
		}
	}
	d.failures(views, size)
	d.classifyAll(views, size)
	d.costs(views, size)
	d.overcommit(views, size)
	d.deferred(views, size)
	d.repeated(views, size)
	d.codes.note(views)
}

// repeated says, for jobs run more than once (run --repeat), how many of their runs ended as the first
// did and where: the ticket's reproduction rate.
func (d *deriver) repeated(views []*view, size uint64) {
	var g groups
	for _, v := range views {
		same, of, at := v.s.Reproduced()
		if of < 2 {
			continue
		}
		ending := "ended as its first run did"
		if f := v.s.FirstFailure; f != nil && v.s.Outcome == result.OutcomeFailed {
			ending = fmt.Sprintf("failed with %d (%s) at %s", f.Code, f.Name, f.Call)
		} else if v.s.Outcome == result.OutcomeCrashed && v.s.Signal != "" {
			ending = fmt.Sprintf("crashed (%s)", v.s.Signal)
		} else if v.s.Outcome == result.OutcomeCompleted {
			ending = "completed"
		}
		lo, hi := slices.Min(at), slices.Max(at)
		where := fmt.Sprintf("at #%d", lo)
		switch {
		case lo != hi:
			where = fmt.Sprintf("between #%d and #%d", lo, hi)
		case same > 1:
			where = fmt.Sprintf("each at #%d", lo)
		}
		switch v.s.Outcome {
		case result.OutcomeCompleted:
			where = fmt.Sprintf("with %d buffers", lo)
		case result.OutcomeCrashed, result.OutcomeHung, result.OutcomeStopped:
			// No call failed: what is known is how many buffers were made by then.
			where = fmt.Sprintf("each after %d buffers", lo)
			if lo != hi {
				where = fmt.Sprintf("after %s buffers", render.Span(lo, hi, " to "))
			}
		}
		g.add(result.FindingRepeated, fmt.Sprintf(" %s in %d of %d runs, %s (run --repeat %d, each in its own worker)", ending, same, of, where, of), v.s.Strategy,
			map[string]float64{"runs": float64(of), "reproduced": float64(same), "index_min": float64(lo), "index_max": float64(hi)}, "")
	}
	d.emit(&g, size, plainSubject)
}

// comparedWithFirst says how far the others got against the job that failed first, where they placed their
// buffers as it did; those placed otherwise get one sentence saying they are not compared, and why.
func (d *deriver) comparedWithFirst(first *view, others []*view, size uint64) {
	var cmp groups
	var apart []*view
	for _, o := range others {
		if o.s.AllocationsOK == first.s.AllocationsOK {
			continue
		}
		if !placedAlike(first.placement, o.placement) {
			apart = append(apart, o)
			continue
		}
		ratio := float64(o.s.AllocationsOK) / float64(first.s.AllocationsOK)
		tail := ""
		if o.s.Outcome == result.OutcomeCompleted {
			tail = " and never failed (the budget ended it)"
		}
		ev := comparisonEvidence(o.s, first.s, ratio)
		putPlacement(ev, o.s.Strategy, o.placement)
		putPlacement(ev, first.s.Strategy, first.placement)
		cmp.add(result.FindingComparison, fmt.Sprintf(" reached %d buffers, %.2fx as many as %s (%d)%s", o.s.AllocationsOK, ratio,
			first.s.Strategy, first.s.AllocationsOK, tail), o.s.Strategy, ev, "", result.ClaimFurther)
	}
	d.emit(&cmp, size, plainSubject)
	if len(apart) > 0 {
		d.add(placedApart(append([]*view{first}, apart...)), size)
	}
}

// failures says where each strategy ended, earliest first, and how far the others got.
func (d *deriver) failures(views []*view, size uint64) {
	var ended, done []*view
	for _, v := range views {
		switch v.s.Outcome {
		case result.OutcomeCompleted:
			done = append(done, v)
		case result.OutcomeFailed:
			ended = append(ended, v)
		}
	}
	sort.SliceStable(ended, func(i, j int) bool { return ended[i].s.AllocationsOK < ended[j].s.AllocationsOK })
	// "First" only where another, placed alike, went further: where every one failed at one buffer, none was
	// first, and one that placed nothing went as far as its budget, which says nothing of the first.
	further := len(ended) > 0 && d.furtherAlike(ended[0], size)
	var g groups
	for _, v := range ended {
		f := v.s.FirstFailure
		lead := "failed"
		if v.s.AllocationsOK == ended[0].s.AllocationsOK && further {
			lead = "failed first" // also those that failed at the same buffer as the first: one sentence
		}
		ev := map[string]float64{"index": float64(f.Index), "code": float64(f.Code), "device": float64(f.Device), "bytes_before": float64(f.BytesBefore)}
		if f.Stage == result.StageSetup {
			g.add(result.FindingFailure, fmt.Sprintf(" %s before the first buffer: %s from %s", lead, codeText(f.Name, f.Code, v.s.Reason), f.Call), v.s.Strategy, ev, "")
			continue
		}
		g.add(result.FindingFailure, fmt.Sprintf(" %s at buffer #%d (after %s): %s (%d) at %s, meant for device %d", lead, f.Index,
			units.Bytes(f.BytesBefore), f.Name, f.Code, f.Stage, f.Device), v.s.Strategy, ev, "")
	}
	d.emit(&g, size, plainSubject)
	if len(ended) > 0 && ended[0].s.AllocationsOK > 0 {
		d.comparedWithFirst(ended[0], append(ended[1:], done...), size)
	} else if len(ended) == 0 && len(done) > 0 {
		var g groups
		for _, v := range done {
			g.add(result.FindingCompleted, fmt.Sprintf(" reached the budget of %d buffers (%s) without a failure", v.s.AllocationsOK,
				units.Bytes(v.s.BytesOK)), v.s.Strategy, map[string]float64{"allocations_ok": float64(v.s.AllocationsOK)}, "")
		}
		d.emit(&g, size, plainSubject)
	}
	var other groups
	for _, v := range views {
		s := v.s
		var body string
		switch s.Outcome {
		case result.OutcomeCrashed:
			body = fmt.Sprintf(" crashed %s, during %s: %s", AfterBuffers(s), s.LastStage, s.Reason)
			if v.oomLogged {
				// The kernel's log names the sender the worker's ending could only guess at.
				body = fmt.Sprintf(" crashed %s, during %s: the kernel's OOM killer killed the worker (%s), as the kernel's log says", AfterBuffers(s), s.LastStage, s.Signal)
			}
		case result.OutcomeHung:
			body = fmt.Sprintf(" hung %s, during %s (%s)", AfterBuffers(s), s.LastStage, s.Reason)
		case result.OutcomeStopped:
			body = fmt.Sprintf(" was stopped after %d buffers: %s", s.AllocationsOK, s.Reason)
			if s.Interrupted() {
				body = fmt.Sprintf(" was interrupted after %d buffers, before any limit", s.AllocationsOK)
			}
		case result.OutcomeUnsupported:
			body = fmt.Sprintf(" is not supported here: %s", s.Reason)
		case result.OutcomeWrong:
			body = " placed nothing that could be proven: " + s.Reason
		default:
			continue
		}
		ev, claims := countEvidence(s)
		other.add(result.FindingOutcome, body, s.Strategy, ev, "", claims...)
	}
	d.emit(&other, size, eachSubject)
}

// countEvidence is what a sentence saying how many buffers job s made rests on: the count and, where a batch
// was in flight when its worker died, how many the device confirmed; and the exact-count claim where the
// sentence says one number (afterBuffers).
func countEvidence(s *result.JobResult) (map[string]float64, []result.ClaimKind) {
	ev := map[string]float64{"allocations_ok": float64(s.AllocationsOK)}
	if c := s.ConfirmedOK; c != nil {
		ev["confirmed_ok"] = float64(*c)
	}
	if from, to := s.MadeRange(); from >= to {
		return ev, []result.ClaimKind{result.ClaimExactCount}
	}
	return ev, nil
}

// furtherAlike says another job of v's size, variant and flags, placed as v's buffers were (placedAlike),
// made more buffers than v: what "failed first" claims of v.
func (d *deriver) furtherAlike(v *view, size uint64) bool {
	for _, s := range d.jobs {
		if s.SizeBytes == size && s.Variant == v.s.Variant && s.Flags == v.s.Flags && s.Outcome != result.OutcomeUnsupported &&
			s.AllocationsOK > v.s.AllocationsOK && placedAlike(v.placement, placementOf(d.run, s)) {
			return true
		}
	}
	return false
}

// comparisonEvidence is what a comparison of job o with the job that failed first states: o's count, the
// ratio, and the count it is held against, under that strategy's name ("shared_allocations_ok"), as the
// limits name per-device's.
func comparisonEvidence(o, first *result.JobResult, ratio float64) map[string]float64 {
	return map[string]float64{"allocations_ok": float64(o.AllocationsOK), "ratio": ratio,
		strings.ReplaceAll(string(first.Strategy), "-", "_") + "_allocations_ok": float64(first.AllocationsOK)}
}

// classifyAll classifies every strategy that did not complete, keeps the limit (in the view and in d.limits),
// and says it once per group of strategies that ran into the same limit the same way.
func (d *deriver) classifyAll(views []*view, size uint64) {
	var perDevice *limitInput
	for _, v := range views {
		if v.s.Strategy == result.PerDevice {
			perDevice = v.limitInput
		}
	}
	var g groups
	for _, v := range views {
		lf := classify(v.limitInput, d.sweepOf(v.s.Strategy), perDevice)
		for k, x := range lf.evidence {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				delete(lf.evidence, k)
			}
		}
		v.limit, d.limits[v.s] = lf, lf
		if lf.limit == "" {
			continue
		}
		body := ": " + lf.body
		if budget, ok := sameBytesEverySize(d.sweepOf(v.s.Strategy)); ok && lf.limit != result.LimitAllocationCount {
			body += fmt.Sprintf("; it reached about %s of buffers at every size, a byte budget", units.Bytes(budget))
		}
		if lf.limit == result.LimitAllocationCount {
			if d.saidCount[v.s.Strategy] {
				continue // said at the first size, for every size
			}
			d.saidCount[v.s.Strategy] = true
		}
		g.add(result.FindingLimit, body, v.s.Strategy, lf.evidence, "", lf.claims...)
	}
	for _, v := range views {
		// The headline speaks of the first size at which a job ended: the strategy that ended earliest
		// there (a sweep whose small buffers all completed fails at a larger size, and that is its news).
		// A stop (the guard, an interrupt, a timeout) is no runtime result: it never leads the verdict.
		if v.limit.limit != "" && !stoppedEarly(v.s) && (d.first == nil || (d.first.size == size && v.s.AllocationsOK < d.first.v.s.AllocationsOK)) {
			d.first = &firstEnd{v: v, limit: limitFinding{v.limit.limit, v.limit.evidence, "", v.limit.claims}, size: size}
		}
	}
	d.emit(&g, size, eachSubject)
}

// sweepOf is the strategy at every size of the run, as the limit classifier reads each.
func (d *deriver) sweepOf(st result.Strategy) []*limitInput {
	var out []*limitInput
	for _, s := range d.jobs {
		if s.Strategy == st {
			out = append(out, jobInput(d.run, s))
		}
	}
	return out
}

func plainSubject(who string, _ int, _ string) string { return who }

// ofOneJob matches a body written of one job: a singular verb right after the subject ("was stopped", "is
// not supported") or a pronoun for it ("the host guard stopped it", "its memory cgroup").
var ofOneJob = regexp.MustCompile(`^ (was|is) |\bits?\b`)

// eachSubject is the subject of a body that may be written of one job: several strategies that share such
// a body are "each of shared and per-device", so verb and pronoun agree with the subject.
func eachSubject(who string, n int, body string) string {
	if n > 1 && ofOneJob.MatchString(body) {
		return "each of " + who
	}
	return who
}

// names lists strategies as a sentence does: "shared", "shared and per-device", "a, b and c".
func names(ss []result.Strategy) string {
	return listOf(ss, func(s result.Strategy) string { return string(s) })
}

// listOf writes things as a list of words: "a", "a and b", "a, b and c"; "" for none.
func listOf[T any](xs []T, word func(T) string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = word(x)
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	// Strategy names and units are written as they are: only plain words are capitalised.
	for _, st := range result.Strategies {
		if strings.HasPrefix(s, string(st)) {
			return s
		}
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// variantLabel names a variant with its settings: "pool-off (ExperimentalSmallBufferPoolAllocator=0, NEOReadDebugKeys=1)".
func variantLabel(r *result.Run, v string) string {
	for _, s := range r.Jobs {
		if s.Variant == v && len(s.VariantSettings) > 0 {
			return fmt.Sprintf("variant %s (%s)", v, strings.Join(result.Assignments(s.VariantSettings), ", "))
		}
	}
	return "variant " + result.VariantName(v)
}

// countMoved reports whether a job's count moved from its reference job's by more than the comparisons'
// tolerance; a reference that placed nothing moves by nothing, as a change from it cannot be told.
func countMoved(got, ref uint64) bool {
	return ref > 0 && comparison.Moved(float64(got), float64(ref), comparison.Tolerance)
}

// jobsByKey is the run's jobs by their comparison keys, and each job's key in the run's order: a job's
// counterpart under another variant or with other flags is found by its key, as compare finds it.
func jobsByKey(r *result.Run) (map[comparison.Key]*result.JobResult, []comparison.Key) {
	keys := comparison.Keys(r)
	by := make(map[comparison.Key]*result.JobResult, len(keys))
	for i, k := range keys {
		by[k] = &r.Jobs[i]
	}
	return by, keys
}

// variantEffects compares every variant with the first (the default, unless left out): which strategy's
// threshold or outcome each variant moved, and by how much; and where a variant makes two strategies that
// differed reach the same, that its settings account for the difference.
func variantEffects(r *result.Run, variants []string) []result.Finding {
	byKey, keys := jobsByKey(r)
	base := variants[0]
	baseName := "the default"
	if base != "" {
		baseName = "variant " + base
	}
	var out []result.Finding
	for _, v := range variants[1:] {
		moved := 0
		for i, s := range r.Jobs {
			if s.Variant != v {
				continue
			}
			b := byKey[keys[i].WithVariant(base)]
			if b == nil || s.Outcome == result.OutcomeUnsupported || b.Outcome == result.OutcomeUnsupported {
				continue
			}
			if f := s.FirstFailure; f != nil && f.Stage == result.StageSetup && f.Name == "" {
				// Not a threshold: the variant's settings could not be applied at all.
				out = append(out, result.Finding{Kind: result.FindingVariant, Strategies: []result.Strategy{s.Strategy}, Variant: v, Sizes: []uint64{s.SizeBytes},
					Sentence: capitalize(fmt.Sprintf("with %s, %s could not run: %s.", variantLabel(r, v), s.Strategy, s.Reason))})
				moved++
				continue
			}
			change := 0.0
			if b.AllocationsOK > 0 {
				change = float64(s.AllocationsOK)/float64(b.AllocationsOK) - 1
			}
			if !countMoved(s.AllocationsOK, b.AllocationsOK) && s.Outcome == b.Outcome {
				continue
			}
			moved++
			sentence := fmt.Sprintf("with %s, %s %s at #%d where %s %s at #%d (%+.1f%%)", variantLabel(r, v), s.Strategy, endVerb(&s), s.AllocationsOK,
				baseName, endVerb(b), b.AllocationsOK, 100*change)
			// Does the variant make it reach what another strategy reaches, where under the base they differed?
			for oi, o := range r.Jobs {
				if o.Variant != v || o.Strategy == s.Strategy || o.SizeBytes != s.SizeBytes || keys[oi].Flags != keys[i].Flags {
					continue
				}
				ob := byKey[keys[oi].WithVariant(base)]
				if ob == nil || o.AllocationsOK == 0 || b.AllocationsOK == 0 || ob.AllocationsOK == 0 {
					continue
				}
				same := math.Abs(float64(s.AllocationsOK)/float64(o.AllocationsOK)-1) <= sameCount
				apart := math.Max(float64(b.AllocationsOK), float64(ob.AllocationsOK))/math.Min(float64(b.AllocationsOK), float64(ob.AllocationsOK)) >= contextRatio
				if same && apart {
					sentence += fmt.Sprintf(", like %s under it: the settings of %s account for the difference between %s and %s", o.Strategy, v, s.Strategy, o.Strategy)
					break
				}
			}
			f := result.Finding{Kind: result.FindingVariant, Strategies: []result.Strategy{s.Strategy}, Variant: v, Sentence: capitalize(sentence) + ".",
				Evidence: map[string]float64{"base_allocations_ok": float64(b.AllocationsOK), "variant_allocations_ok": float64(s.AllocationsOK), "change": change}}
			if len(r.Sizes()) > 1 {
				f.Sentence = units.Size(s.SizeBytes) + " buffers: " + f.Sentence
			}
			f.Sizes = []uint64{s.SizeBytes}
			out = append(out, f)
		}
		if moved == 0 {
			out = append(out, result.Finding{Kind: result.FindingVariant, Variant: v,
				Sentence: capitalize(fmt.Sprintf("with %s, no strategy's threshold or outcome moved by more than %.0f%% from %s.", variantLabel(r, v), 100*comparison.Tolerance, baseName))})
		}
	}
	return out
}

// endVerb says how a strategy ended, for a comparison: "failed", "completed its budget".
func endVerb(s *result.JobResult) string {
	switch s.Outcome {
	case result.OutcomeFailed:
		return "fails"
	case result.OutcomeCompleted:
		return "completes its budget"
	}
	return "ends " + string(s.Outcome)
}
