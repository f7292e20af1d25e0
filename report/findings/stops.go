package findings

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// What ended a job that is no runtime result: the host guard, an interrupt, a timeout. None of them is a
// threshold of the runtime, so none may lead the verdict as "failed first" or stand for a limit.

// stoppedEarly reports whether a job ended for a reason of this run's own, not of the runtime or the
// machine: an interrupt, a timeout, the host reserve. A guard stop before a memory cgroup's limit or an
// inherited address-space limit is not one: that limit (a container's, a batch job's, a site's ulimit -v)
// is what the run ran into.
func stoppedEarly(s *result.JobResult) bool {
	return s.Outcome == result.OutcomeStopped && !userLimitGuard(s.Guard)
}

// reserveStopped reports whether the host guard stopped a job to keep the host reserve (--host-reserve).
func reserveStopped(s *result.JobResult) bool {
	return s.GuardStopped() && !userLimitGuard(s.Guard)
}

// userLimitGuard says the guard stopped a job before a limit set on the user's processes (a memory
// cgroup's, an address-space limit), not to keep this run's own reserve.
func userLimitGuard(g result.Guard) bool {
	return g == result.GuardCgroup || g == result.GuardAddressSpace
}

// stopNotes are the sentences that come right after a variant's headline: the strategies the host guard
// stopped before any runtime limit, and the reserve it keeps. A headline that already says so is not
// repeated.
func (d *deriver) stopNotes() []result.Finding {
	guarded := d.guarded()
	if len(guarded) == 0 || d.first == nil {
		return nil // without a runtime limit, the headline itself is the guard's sentence
	}
	return []result.Finding{d.guardFinding(guarded, "")}
}

// guarded are the strategies the host guard stopped at the host reserve, each once.
func (d *deriver) guarded() []result.Strategy {
	var out []result.Strategy
	for _, s := range d.jobs {
		if reserveStopped(s) {
			out = appendOnce(out, s.Strategy)
		}
	}
	return out
}

// guardFinding says that the guard, not the runtime, stopped these strategies, and names the reserve.
func (d *deriver) guardFinding(who []result.Strategy, tail string) result.Finding {
	reserve := d.run.Config.HostReserveByte
	n := fmt.Sprintf("%d strategies", len(who))
	if len(who) == 1 {
		n = "1 strategy"
	}
	sentence := fmt.Sprintf("The host guard stopped %s (%s) before any runtime limit, to keep the reserve of %s of system memory (--host-reserve): that is this run's safety margin, not a result of the runtime%s.",
		n, names(who), units.Bytes(reserve), tail)
	return result.Finding{Kind: result.FindingOutcome, Strategies: who, Sentence: sentence,
		Evidence: map[string]float64{"host_reserve_bytes": float64(reserve), "guard_stopped": float64(len(who))}}
}

// stoppedHeadline is the headline of a variant in which nothing failed but some job was stopped: by the
// guard, by an interrupt; ok is false when none was.
func (d *deriver) stoppedHeadline() (result.Finding, bool) {
	if guarded := d.guarded(); len(guarded) > 0 {
		f := d.guardFinding(guarded, "; free host memory, or lower the reserve, to let "+them(len(guarded))+" reach the runtime's own limit")
		f.Kind = result.FindingHeadline
		return f, true
	}
	var stopped []string
	var ev map[string]float64
	for _, s := range d.jobs {
		if s.Interrupted() {
			stopped = append(stopped, fmt.Sprintf("%s at %d buffers", s.Strategy, s.AllocationsOK))
			// Each count under its strategy and size ("per_device_allocations_ok@1048576"): one strategy may be
			// interrupted at two sizes of a sweep.
			if ev == nil {
				ev = map[string]float64{}
			}
			ev[fmt.Sprintf("%s_allocations_ok@%d", strings.ReplaceAll(string(s.Strategy), "-", "_"), s.SizeBytes)] = float64(s.AllocationsOK)
		}
	}
	if len(stopped) == 0 && !d.run.Partial {
		return result.Finding{}, false
	}
	sentence := "The run was interrupted"
	if len(stopped) > 0 {
		sentence += " (" + strings.Join(stopped, ", ") + ")"
	}
	sentence += ": no allocation failed in what ran, and no limit was reached; run it again to its end to find one."
	return result.Finding{Kind: result.FindingHeadline, Sentence: sentence, Evidence: ev}, true
}

// them is the pronoun for n things named before it: a sentence about one job or strategy says "it".
func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// jobKey names a job of the configuration: its strategy, size and variant (as jobs record it).
type jobKey struct {
	st      result.Strategy
	size    uint64
	variant string
}

// notRun lists the jobs the configuration asked for that have no result: an interrupted run stops before
// them. A run that holds every job it was asked for gives nothing.
func notRun(r *result.Run) (result.Finding, bool) {
	sizes := r.Config.Sizes
	if len(sizes) == 0 && r.Config.SizeBytes > 0 {
		sizes = []uint64{r.Config.SizeBytes}
	}
	variants := []string{""}
	if len(r.Config.Variants) > 0 {
		variants = variants[:0]
		for _, v := range r.Config.Variants {
			variants = append(variants, result.JobVariant(v.Name))
		}
	}
	have := map[jobKey]bool{}
	for _, s := range r.Jobs {
		have[jobKey{s.Strategy, s.SizeBytes, result.JobVariant(result.VariantName(s.Variant))}] = true
	}
	var missing []string
	var who []result.Strategy
	for _, v := range variants {
		for _, size := range sizes {
			for _, st := range r.Config.Strategies {
				if have[jobKey{st, size, v}] {
					continue
				}
				who = appendOnce(who, st)
				job := string(st)
				if len(sizes) > 1 {
					job += " at " + units.Size(size)
				}
				if len(variants) > 1 {
					job += " under " + result.VariantName(v)
				}
				missing = append(missing, job)
			}
		}
	}
	if len(missing) == 0 {
		return result.Finding{}, false
	}
	why := "the result does not hold " + them(len(missing))
	if r.Partial {
		why = "the run was interrupted before " + them(len(missing))
	}
	return result.Finding{Kind: result.FindingOutcome, Strategies: who, Evidence: map[string]float64{"jobs_not_run": float64(len(missing))},
		Sentence: fmt.Sprintf("Not run (%s): %s.", why, strings.Join(missing, ", "))}, true
}

// oneDevice says, where every job ran on the same single device, that the context layouts cannot differ:
// with one device a shared context, one context per device and migrating first are the same thing.
func oneDevice(r *result.Run) (result.Finding, bool) {
	devs := map[int]bool{}
	for _, s := range r.Jobs {
		for _, d := range s.Devices {
			devs[d] = true
		}
	}
	if len(devs) == 0 {
		for _, d := range r.Config.Devices {
			devs[d] = true
		}
	}
	if len(devs) != 1 {
		return result.Finding{}, false
	}
	var dev int
	for d := range devs {
		dev = d
	}
	name := ""
	for _, d := range r.Devices {
		if d.Index == dev && d.Name != "" {
			name = ", " + d.Name
		}
	}
	// The strategies named are those that ran (else those asked for): a run of one strategy compared no
	// layouts at all, and naming the others would suggest it had.
	var ran []result.Strategy
	for _, s := range r.Jobs {
		ran = appendOnce(ran, s.Strategy)
	}
	if len(ran) == 0 {
		ran = r.Config.Strategies
	}
	if len(ran) == 0 {
		ran = result.DefaultStrategies
	}
	sentence := fmt.Sprintf("The run had one device (device %d%s): %s cannot differ on one device, so their thresholds say nothing about context layouts; run on two or more devices to compare them.", dev, name, names(ran))
	if len(ran) == 1 {
		sentence = fmt.Sprintf("The run had one device (device %d%s) and one strategy (%s): context layouts were not compared; run two or more strategies on two or more devices to compare them.", dev, name, ran[0])
	}
	return result.Finding{Kind: result.FindingComparison, Evidence: map[string]float64{"devices": 1, "device": float64(dev)}, Sentence: sentence}, true
}

// overcommit says where a job that did not fail was given more bytes for a device than the device reports
// as its global memory: the runtime does not enforce the size it reports (or defers allocation past it).
func (d *deriver) overcommit(views []*view, size uint64) {
	var g groups
	for _, v := range views {
		s := v.s
		if s.Outcome != result.OutcomeCompleted && s.Outcome != result.OutcomeStopped {
			continue // a failure's own limit sentence weighs what the failing device was given
		}
		// One sentence per job over every device given more than it reports: "devices 0 and 1", not one
		// sentence a device.
		n := uint64(len(s.Devices))
		var over []int
		var most, global uint64
		for pos, dev := range s.Devices {
			reported := result.GlobalOf(d.run, s, dev)
			given := (s.AllocationsOK/n + boolUint(s.AllocationsOK%n > uint64(pos))) * s.SizeBytes
			if reported == 0 || float64(given) <= overcommitted*float64(reported) {
				continue
			}
			over = append(over, dev)
			most = max(most, given)
			if global == 0 || reported < global {
				global = reported
			}
		}
		if len(over) == 0 {
			continue
		}
		verb := "completed"
		if s.Outcome == result.OutcomeStopped {
			verb = "ran without a failure"
		}
		where := fmt.Sprintf("device %d, which reports", over[0])
		if len(over) > 1 {
			where = fmt.Sprintf("each of devices %s, which report at most", deviceList(over))
		}
		body := fmt.Sprintf(": %d x %s (%s) %s on %s %s of global memory: %s",
			most/s.SizeBytes, units.Size(s.SizeBytes), units.Bytes(most), verb, where, units.Bytes(global), overcommitMeaning(d.run, v))
		ev := map[string]float64{"device": float64(over[0]), "devices_over": float64(len(over)), "given_bytes": float64(most), "global_mem_bytes": float64(global)}
		var claims []result.ClaimKind
		if d.run.Config.Touch == result.TouchNone && v.placement == placedNone {
			devCost, _ := deviceCostOf(s)
			ev["growth_per_buffer_fraction"], claims = growthFraction(s, devCost), []result.ClaimKind{result.ClaimNeverPlaced}
		}
		g.add(result.FindingLimit, body, s.Strategy, ev, "", claims...)
	}
	d.emit(&g, size, plainSubject)
}

// overcommitMeaning says what a job given more than its devices' global memory shows of the runtime, by how
// it placed its buffers: a runtime that placed them does not enforce the size it reports; one that placed
// none took the buffers without allocating them, which says nothing of its limit.
func overcommitMeaning(r *result.Run, v *view) string {
	created := "the buffers were created, never used"
	if v.s.Strategy == result.MigrateFirst {
		created = "the buffers were created and migrated, never written"
	}
	switch {
	case r.Config.Touch != result.TouchNone:
		return "the runtime does not enforce its reported global memory"
	case v.placement == placedAll:
		return fmt.Sprintf("the runtime does not enforce its reported global memory (%s, and the memory they live in grew with them: it allocates at create)", created)
	case v.placement == placedNone:
		return fmt.Sprintf("the runtime took them without allocating them (%s, and the memory they live in did not grow with them), which says nothing of its limit; run with --touch fill to place them", created)
	}
	return fmt.Sprintf("the runtime accepted more than its reported global memory (%s, and whether it allocated them was not measured); run with --touch fill to place them", created)
}

// deviceList is device indices as a list: "0, 1 and 2".
func deviceList(devs []int) string { return listOf(devs, strconv.Itoa) }

func boolUint(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
