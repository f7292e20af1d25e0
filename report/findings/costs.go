package findings

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/comparison"
)

// costs says what a buffer costs on the host, on the system and on the devices, where the samples allow a
// fit; strategies whose costs read the same share a sentence.
func (d *deriver) costs(views []*view, size uint64) {
	var g groups
	var outside []outsideRSS
	for _, v := range views {
		s := v.s
		if s.Outcome == result.OutcomeUnsupported || s.AllocationsOK == 0 {
			continue
		}
		if !v.fit.OK {
			g.add(result.FindingCost, fmt.Sprintf(": no cost per buffer, %s to fit one (%d samples over %d of %d buffers; a fit needs %d samples over at least half of the buffers)",
				v.fit.Why, v.fit.Samples, v.fit.Spanned, s.AllocationsOK, result.FitMinSamples), s.Strategy, nil, "")
			continue
		}
		ev := map[string]float64{"host_bytes_per_buffer": s.HostBytesPerBuffer}
		body := fmt.Sprintf(" cost %s of host RSS per buffer (%s the buffer size)", units.SignedBytes(s.HostBytesPerBuffer), ratio(s.HostBytesPerBuffer, size))
		body += beyondRSS(v, size, ev)
		sum, measured := v.deviceCost()
		rf, placed := s.Replication()
		switch {
		case !measured:
			body += ", device memory not measured"
		case !placed:
			ev["device_bytes_per_buffer"] = sum
			body += fmt.Sprintf(" and %s of device memory: no device memory was placed, so no replication factor", units.SignedBytes(sum))
		default:
			ev["device_bytes_per_buffer"], ev["replication_factor"] = sum, rf
			body += fmt.Sprintf(" and %s of device memory summed over %d device(s): replication factor %.2f", units.SignedBytes(sum),
				len(s.DeviceBytesPerBuffer), rf)
		}
		if s.Flags != "" {
			body = withoutHostCost(body, s, size, ev)
		}
		g.add(result.FindingCost, body+poolLumpClause(s, ev), s.Strategy, ev, "")
		if out, signal, ok := v.outsideRSS(); ok {
			outside = append(outside, outsideRSS{s.Strategy, signal, out, s.HostBytesPerBuffer, v.ownCgroupPerBuffer})
		} else if out, signal, ok := v.machineOutsideRSS(); ok {
			d.add(othersNotOutside(v, out, signal), size)
		}
	}
	d.emit(&g, size, plainSubject)
	d.outsideRSS(outside, size)
	var shared, perDevice *view
	for _, v := range views {
		switch v.s.Strategy {
		case result.Shared:
			shared = v
		case result.PerDevice:
			perDevice = v
		}
	}
	if shared != nil && perDevice != nil && shared.fit.OK && perDevice.fit.OK {
		sh, ok1 := shared.s.Replication()
		pd, ok2 := perDevice.s.Replication()
		if !ok1 || !ok2 {
			return
		}
		r := sh / pd
		d.add(result.Finding{Kind: result.FindingCost, Strategies: []result.Strategy{result.Shared, result.PerDevice},
			Sentence: fmt.Sprintf("the shared context costs %.2fx the device memory per buffer of one context per device", r),
			Evidence: map[string]float64{"ratio": r}}, size)
	}
}

// tiedWith is the strategies of s's size, variant and flags that failed at the same buffer as s with the
// same code, s among them, whatever call it surfaced at (a migrate, a touch), with the stages they
// surfaced at, each once; ran is how many strategies of that group ran at all (not unsupported).
func (d *deriver) tiedWith(s *result.JobResult, size uint64) (tied []result.Strategy, stages []result.Stage, ran int) {
	var all []result.Strategy
	for _, j := range d.jobs {
		if j.SizeBytes != size || j.Variant != s.Variant || j.Flags != s.Flags || j.Outcome == result.OutcomeUnsupported {
			continue
		}
		all = appendOnce(all, j.Strategy)
		f, g := j.FirstFailure, s.FirstFailure
		if j.Outcome == result.OutcomeFailed && f != nil && f.Index == g.Index && f.Code == g.Code && f.Stage != result.StageSetup {
			tied = appendOnce(tied, j.Strategy)
			stages = appendOnce(stages, f.Stage)
		}
	}
	return tied, stages, len(all)
}

// usesLayout is the job whose layout nextStep tells v's user to use, where it does: v's device filled, and
// another layout, placed as v's was, went more than a tenth further.
func usesLayout(v *view, lf limitFinding) (*result.JobResult, bool) {
	if lf.limit != result.LimitDeviceMemory {
		return nil, false
	}
	if _, shared := lf.evidence["device_own_bytes"]; shared {
		return nil, false
	}
	other := furthest(v)
	return other, other != nil && other.AllocationsOK > v.s.AllocationsOK+v.s.AllocationsOK/10
}

// furthest is the strategy that reached the most buffers at v's size, variant and flags, placed as v's were
// (both known), and how many.
func furthest(v *view) *result.JobResult {
	var best *result.JobResult
	if v.placement == placementUnknown {
		return nil // "use X's layout" needs both placements known alike
	}
	for i := range v.run.Jobs {
		s := &v.run.Jobs[i]
		if s.SizeBytes == v.s.SizeBytes && s.Variant == v.s.Variant && s.Flags == v.s.Flags && (best == nil || s.AllocationsOK > best.AllocationsOK) && placementOf(v.run, s) == v.placement {
			best = s
		}
	}
	return best
}

// plusMinus is a figure's noise where it was measured: " ±12.00 KiB".
func plusMinus(noise float64) string {
	if noise <= 0 {
		return ""
	}
	return " ±" + units.SignedBytes(noise)
}

// scatter says why a machine-wide figure is not a cost where its readings scattered more than the noise
// floor: " (its readings scattered ±96.00 KiB per buffer)".
func scatter(noise float64, size uint64) string {
	if !result.IsNoise(noise, size) {
		return fmt.Sprintf(" (its readings scattered ±%s per buffer)", units.SignedBytes(noise))
	}
	return ""
}

// outsideRSS is one strategy's host memory per buffer held outside its process, by one signal.
type outsideRSS struct {
	st       result.Strategy
	signal   string
	out, rss float64
	cgroup   *float64 // the run's own memory cgroup's growth per buffer, the witness where it has one
}

// outsideRSS says what each buffer held outside the process: one finding for the strategies the same
// signal read within the comparisons' tolerance of each other, their figures as ranges.
func (d *deriver) outsideRSS(all []outsideRSS, size uint64) {
	for len(all) > 0 {
		first, same, rest := all[0], all[:0:0], all[:0:0]
		for _, o := range all {
			if o.signal == first.signal && !comparison.Moved(o.out, first.out, comparison.Tolerance) {
				same = append(same, o)
			} else {
				rest = append(rest, o)
			}
		}
		who := make([]result.Strategy, len(same))
		outs, rsss := make([]float64, len(same)), make([]float64, len(same))
		for i, o := range same {
			who[i], outs[i], rsss[i] = o.st, o.out, o.rss
		}
		ev := map[string]float64{"outside_rss_bytes_per_buffer": first.out, "outside_threshold_bytes": max(cheapFraction*float64(size), 4096)}
		addRange(ev, "outside_rss_bytes_per_buffer", outs)
		if first.cgroup != nil {
			ev["cgroup_bytes_per_buffer"], ev["host_bytes_per_buffer"] = *first.cgroup, first.rss
		}
		d.add(result.Finding{Kind: result.FindingOutsideRSS, Strategies: who, Evidence: ev, Claims: []result.ClaimKind{result.ClaimOutside},
			Sentence: fmt.Sprintf("%s: by %s, %s per buffer is host memory held outside the process (by the driver, shared memory, or promised and not yet touched), which its RSS (%s per buffer) does not show",
				names(who), first.signal, byteRange(outs), byteRange(rsss))}, size)
		all = rest
	}
}

// beyondRSS is the cost sentence's clause of the host memory a buffer took beside its RSS, with its figures
// put into ev: the run's own memory cgroup where it has one, which is charged what its processes take; else
// the system's available and committed memory, each only where it clears its noise. Beside an own cgroup
// the machine's counters, moved by every other process, are no cost of this run (MemAvailable read 718 KiB
// a buffer where the cgroup was charged 1041 KiB; 4x the RSS under another suite's load).
func beyondRSS(v *view, size uint64, ev map[string]float64) string {
	s, noise := v.s, v.s.Noise()
	if cg := v.ownCgroupPerBuffer; cg != nil {
		ev["cgroup_bytes_per_buffer"] = *cg
		return fmt.Sprintf(", %s of its memory cgroup", units.SignedBytes(*cg))
	}
	var clause string
	if sys := s.SystemBytesPerBuffer; sys != nil {
		ev["system_bytes_per_buffer"] = *sys
		// The system's available memory moves with everything else on the machine: a slope below zero,
		// or within the noise floor or the scatter of its own readings, is not a cost.
		if result.Measured(*sys, noise.System, size) {
			clause = fmt.Sprintf(", %s of system memory%s", units.SignedBytes(*sys), plusMinus(noise.System))
		} else {
			clause = ", no measurable system memory" + scatter(noise.System, size)
		}
	}
	// Committed memory is machine-wide too: a slope below zero, or within the noise, is what the rest of the
	// machine did, not what a buffer costs, and is left out.
	if c := s.CommittedBytesPerBuffer; c != nil && result.Measured(*c, noise.Committed, size) && math.Abs(*c-s.HostBytesPerBuffer) > cheapFraction*float64(size) {
		ev["committed_bytes_per_buffer"] = *c
		clause += fmt.Sprintf(" (%s committed%s)", units.SignedBytes(*c), plusMinus(noise.Committed))
	}
	return clause
}

// othersNotOutside says why a machine-wide fall past a job's RSS is not said to be memory its buffers held
// outside the process: its own memory cgroup grew as its RSS did, within the threshold and the RSS's noise,
// so the rest was not charged to the run.
func othersNotOutside(v *view, out float64, signal string) result.Finding {
	cg, within := *v.ownCgroupPerBuffer, v.outsideThreshold()+v.noise.Host
	return result.Finding{Kind: result.FindingUnmeasured, Strategies: []result.Strategy{v.s.Strategy},
		Evidence: map[string]float64{"machine_outside_rss_bytes_per_buffer": out, "cgroup_bytes_per_buffer": cg, "host_bytes_per_buffer": v.hostPerBuffer, "outside_within_bytes": within},
		Sentence: fmt.Sprintf("%s: by %s the machine took %s per buffer more than the worker's RSS grew, but its memory cgroup %s grew by %s per buffer, within %s of its RSS (%s): the rest was not charged to the run (other processes', or kernel memory the cgroup does not count), so it is not said to be memory its buffers held outside the process",
			v.s.Strategy, signal, units.SignedBytes(out), v.cgroup.Path, units.SignedBytes(cg), units.Bytes(uint64(within)), units.SignedBytes(v.hostPerBuffer))}
}

// poolLumpClause says what the pool's own buffers took, which the cost per buffer leaves out (the collector
// fits the samples after every device's first sub-buffer only): "; the pool's own buffer (made with the
// first sub-buffer) is not in that cost: across that first buffer the process's RSS grew 2.00 GiB and its
// virtual memory grew 2.14 GiB (the pool's, and whatever else the runtime took then)". Without it the cost
// reads as the whole of pooling (rusticl's 2 GiB pool: 20 B a buffer).
// It adds the figures to ev; "" for another strategy, or where the samples do not hold a reading before
// and after.
func poolLumpClause(s *result.JobResult, ev map[string]float64) string {
	rss, vms, device, ok := poolLump(s)
	if s.Strategy != result.Pool || !ok {
		return ""
	}
	ev["pool_rss_bytes"], ev["pool_vms_bytes"] = rss, vms
	moved := []string{"the process's RSS " + grewBy(rss), "its virtual memory " + grewBy(vms)}
	if device != nil {
		ev["pool_device_bytes"] = *device
		moved = append(moved, "device memory "+grewBy(*device))
	}
	// The window holds the pool and whatever else the runtime took for its first buffer: on rusticl, 144 MiB
	// of threads' mappings beside the 2 GiB pool, which a pyopencl buffer of 2 GiB shows the pool is not.
	what := "the pool's own buffer (made with the first sub-buffer) is not in that cost: across that first buffer"
	if len(s.Devices) > 1 {
		what = fmt.Sprintf("the pool's own buffers (%d, one per device, each made with the device's first sub-buffer) are not in that cost: across those first buffers", len(s.Devices))
	}
	return fmt.Sprintf("; %s %s (the pool's, and whatever else the runtime took then)", what, listOf(moved, func(s string) string { return s }))
}

// grewBy is a change of memory as a verb: "grew 2.00 GiB", "fell 20.99 KiB", "did not change".
func grewBy(v float64) string {
	switch {
	case v > 0:
		return "grew " + units.Bytes(uint64(v))
	case v < 0:
		return "fell " + units.Bytes(uint64(-v))
	}
	return "did not change"
}

// poolLump is how much the process's RSS and virtual memory, and the devices' memory where it was sampled,
// grew as the pool buffers were made: from the sample before the first buffer to the first kept sample
// after every device's first (buffer #d is device d's first, round robin), less the sub-buffers' own
// fitted costs between. ok is false where the samples do not hold both readings.
func poolLump(s *result.JobResult) (rss, vms float64, device *float64, ok bool) {
	made := s.PoolsMadeBy()
	if len(s.Samples) == 0 || s.Samples[0].Index != 0 || s.AllocationsOK < made {
		return 0, 0, nil, false
	}
	before := s.Samples[0]
	for _, x := range s.Samples {
		if x.Index < made {
			continue
		}
		if x.VMSBytes == 0 || before.VMSBytes == 0 {
			return 0, 0, nil, false
		}
		subBuffers := float64(x.Index)
		rss, vms = float64(x.RSSBytes)-float64(before.RSSBytes)-subBuffers*s.HostBytesPerBuffer, float64(x.VMSBytes)-float64(before.VMSBytes)
		if cost, measured := deviceCostOf(s); measured && len(x.DeviceSamples) > 0 && len(x.DeviceSamples) == len(before.DeviceSamples) {
			grew := -subBuffers * cost
			for i := range x.DeviceSamples {
				grew += float64(x.DeviceSamples[i].UsedBytes) - float64(before.DeviceSamples[i].UsedBytes)
			}
			device = &grew
		}
		return rss, vms, device, true
	}
	return 0, 0, nil, false
}

// withoutHostCost is a cost body without its host RSS clause, for a job with flags: that figure is said
// once, in its flag set's finding against read-write (flagEffects); here only the rest of what a buffer
// cost, and where the host figure is.
func withoutHostCost(body string, s *result.JobResult, size uint64, ev map[string]float64) string {
	rest := strings.TrimPrefix(body, fmt.Sprintf(" cost %s of host RSS per buffer (%s the buffer size)", units.SignedBytes(s.HostBytesPerBuffer), ratio(s.HostBytesPerBuffer, size)))
	rest = strings.TrimPrefix(strings.TrimPrefix(rest, ", "), " and ")
	delete(ev, "host_bytes_per_buffer")
	return ": per buffer, " + rest + " (its host RSS is said with its flag set)"
}

// codeText names a failure by its OpenCL code's name and number, or, where the failed call was not an
// OpenCL one (a limit the worker could not set: no name), by the job's reason.
func codeText(name string, code int32, reason string) string {
	if name != "" {
		return fmt.Sprintf("%s (%d)", name, code)
	}
	if reason != "" {
		return reason
	}
	return "no code"
}

// sizeNames is buffer sizes as a list: "4 KiB and 1 MiB".
func sizeNames(sizes []uint64) string { return listOf(sizes, units.Size) }

// appendOnce appends st unless it is there.
func appendOnce[T comparable](ss []T, st T) []T {
	if slices.Contains(ss, st) {
		return ss
	}
	return append(ss, st)
}

// ratio writes a cost as a multiple of the buffer size, or as a percentage below 1%.
func ratio(cost float64, size uint64) string {
	r := cost / float64(size)
	if math.Abs(r) < 0.01 {
		return fmt.Sprintf("%.2f%% of", 100*r)
	}
	return fmt.Sprintf("%.2fx", r)
}

// deferred says whether the runtime allocates at create or at first use, only where it was measured: a
// device sampler that saw no growth, or devices whose memory is host memory and a host that saw none.
func (d *deriver) deferred(views []*view, size uint64) {
	r := d.run
	var g groups
	for _, v := range views {
		s := v.s
		if f := s.FirstFailure; f != nil && (f.Stage == result.StageTouch || f.Stage == result.StageFinish || f.Stage == result.StageMigrate) {
			g.add(result.FindingDeferred, fmt.Sprintf(": clCreateBuffer never failed; the failure surfaced at %s, so the runtime allocates at first use", f.Stage), s.Strategy, nil, "")
		}
		if r.Config.Touch != result.TouchNone || s.Outcome != result.OutcomeCompleted || !v.fit.OK || s.Strategy == result.Pool {
			continue // the pool's growth per buffer does not tell (placementOf)
		}
		// "Did not grow" is a conclusion: it holds only where each slope, moved by its own noise, stays
		// below the threshold (a machine-wide reading that scattered more than that cannot say it).
		hostCheap := hostDidNotGrow(s)
		devCost, measured := v.deviceCost()
		ev := map[string]float64{"growth_per_buffer_fraction": growthFraction(s, devCost)}
		switch {
		case measured && !result.Placed(devCost, size) && hostCheap:
			d.noGrowth = appendOnce(d.noGrowth, s.Strategy)
			d.noGrowthSizes = appendOnce(d.noGrowthSizes, size)
			d.noGrowthMost = max(d.noGrowthMost, ev["growth_per_buffer_fraction"])
			g.add(result.FindingDeferred, ": device and host memory did not grow with the buffers created (under 5% of a buffer per buffer): the runtime defers allocation until first use; run with --touch fill to place the buffers", s.Strategy, ev, "", result.ClaimNeverPlaced)
		case !measured && v.hostUnified && hostCheap:
			d.noGrowth = appendOnce(d.noGrowth, s.Strategy)
			d.noGrowthSizes = appendOnce(d.noGrowthSizes, size)
			d.noGrowthMost = max(d.noGrowthMost, ev["growth_per_buffer_fraction"])
			g.add(result.FindingDeferred, ": host memory, which is these devices' memory, did not grow with the buffers created (under 5% of a buffer per buffer): the runtime defers allocation until first use; run with --touch fill to place the buffers", s.Strategy, ev, "", result.ClaimNeverPlaced)
		case !measured && hostCheap:
			g.add(result.FindingUnmeasured, ": host memory did not grow with the buffers created, but device memory was not measured, so whether the runtime allocates at create or at first use cannot be told; run with --touch fill to place the buffers either way", s.Strategy, nil, "")
		}
	}
	d.emit(&g, size, plainSubject)
}

// codeNotes gathers, over every size, what the failures' codes say and do not say.
type codeNotes struct {
	notHost     []result.Strategy // -6 with host memory to spare
	notHostSize []uint64
	least, ram  uint64
	codes       []int32 // the codes met, in order, each once
	names       map[int32]string
}

func (c *codeNotes) note(views []*view) {
	if c.names == nil {
		c.names = map[int32]string{}
	}
	for _, v := range views {
		f := v.s.FirstFailure
		if f == nil {
			continue
		}
		if _, ok := c.names[f.Code]; !ok {
			c.codes = append(c.codes, f.Code)
			c.names[f.Code] = f.Name
		}
		if f.Code == -6 && v.limit.limit != result.LimitHostMemory && v.ram > 0 && v.availAtEnd > 0 && !hostLow(v.availAtEnd, v.s.SizeBytes) {
			if !slices.Contains(c.notHost, v.s.Strategy) {
				c.notHost = append(c.notHost, v.s.Strategy)
			}
			if !slices.Contains(c.notHostSize, v.s.SizeBytes) {
				c.notHostSize = append(c.notHostSize, v.s.SizeBytes)
			}
			if c.least == 0 || v.availAtEnd < c.least {
				c.least, c.ram = v.availAtEnd, v.ram
			}
		}
	}
}

// codeFindings says what each code means on this runtime, citing the row of the table it relies on, and
// that -6 does not prove host memory ran out where it did not.
func (d *deriver) codeFindings() {
	rt := RuntimeOf(d.run.Platform)
	c := &d.codes
	for _, code := range c.codes {
		if meaning, ok := rt.Codes[code]; ok {
			d.add(result.Finding{Kind: result.FindingCode, Sentence: fmt.Sprintf("on %s, %s (%d) means %s", rt.Name, c.names[code], code, meaning),
				Source: rt.Source}, 0)
		}
	}
	if len(c.notHost) > 0 {
		d.add(result.Finding{Kind: result.FindingCode, Strategies: c.notHost, Sizes: c.notHostSize, Evidence: map[string]float64{"host_available_bytes": float64(c.least), "host_ram_bytes": float64(c.ram)},
			Sentence: fmt.Sprintf("CL_OUT_OF_HOST_MEMORY (%s) does not prove host memory ran out: at least %s (%.0f%% of RAM) was still available when it was returned",
				names(c.notHost), units.Bytes(c.least), 100*float64(c.least)/float64(c.ram))}, 0)
	}
}

// unmeasured says, once per reason, where device memory was not measured; a strategy that ran at several
// sizes is named once.
func (d *deriver) unmeasured(views []*view, size uint64) {
	var g groups
	seen := map[string]bool{}
	for _, v := range views {
		if v.sampled || v.s.DeviceSampler == "" || v.s.Outcome == result.OutcomeUnsupported {
			continue
		}
		why := v.s.DeviceSampler.WhyNot()
		body := ": device memory was not measured (" + why + ")"
		if v.hostUnified {
			whose := "these devices' memory is"
			if len(v.s.Devices) == 1 {
				whose = "this device's memory is"
			}
			body = ": " + whose + " host memory, measured as RSS and system memory (the costs per buffer, where a fit allows one); no device sampler applied (" + why + ")"
		}
		if key := body + "\x00" + string(v.s.Strategy); !seen[key] {
			seen[key] = true
			g.add(result.FindingUnmeasured, body, v.s.Strategy, nil, "")
		}
	}
	d.emit(&g, size, plainSubject)
}

// headline is the verdict's first sentence: what happened, and what to try next.
func (d *deriver) headline() result.Finding {
	if len(d.jobs) == 0 {
		return result.Finding{Kind: result.FindingHeadline, Sentence: "No strategy ran."}
	}
	if d.first == nil {
		if f, ok := d.stoppedHeadline(); ok {
			return f
		}
		return d.completedHeadline()
	}
	v, lf := d.first.v, d.first.limit
	s := v.s
	what := fmt.Sprintf("%s %s %s", s.Strategy, s.Outcome, AfterBuffers(s))
	if f := s.FirstFailure; f != nil && f.Stage != result.StageSetup {
		// Strategies that failed at the same buffer share the sentence; where every one that ran did, none was
		// first. The call it surfaced at may differ (a migrate, a touch): each is named.
		tied, stages, ran := d.tiedWith(s, d.first.size)
		lead := "failed first,"
		switch {
		case len(tied) == ran && ran > 1:
			lead = "all failed"
		case !d.furtherAlike(v, d.first.size):
			lead = "failed" // the others placed nothing, or went no further: first of nothing
		}
		what = fmt.Sprintf("%s %s at buffer #%d (after %s), with %s (%d) at %s", names(tied), lead, f.Index, units.Bytes(f.BytesBefore), f.Name, f.Code,
			listOf(stages, func(st result.Stage) string { return string(st) }))
	} else if f != nil {
		what = fmt.Sprintf("%s failed before its first buffer, with %s", s.Strategy, codeText(f.Name, f.Code, s.Reason))
	}
	if len(d.sizes) > 1 {
		what = units.Size(d.first.size) + " buffers: " + what
	}
	ev, claims := maps.Clone(lf.evidence), slices.Clone(lf.claims)
	if f := s.FirstFailure; f == nil || f.Stage == result.StageSetup {
		// what says where it ended by its count (AfterBuffers): one number only where none was in flight.
		counted, exact := countEvidence(s)
		if ev == nil {
			ev = map[string]float64{}
		}
		maps.Copy(ev, counted)
		claims = append(claims, exact...)
	}
	step := nextStep(v, lf)
	if other, ok := usesLayout(v, lf); ok {
		putPlacement(ev, s.Strategy, v.placement)
		putPlacement(ev, other.Strategy, placementOf(d.run, other))
		claims = append(claims, result.ClaimUseLayout)
	}
	return result.Finding{Kind: result.FindingHeadline, Strategies: []result.Strategy{s.Strategy}, Sizes: []uint64{d.first.size},
		Sentence: capitalize(what + ": " + limitSummary(v, lf) + "; " + step + "."), Evidence: ev, Claims: claims, About: result.FindingFailure}
}

// completedHeadline is the headline of a run in which nothing failed.
func (d *deriver) completedHeadline() result.Finding {
	all := true
	var budget uint64
	// The strategies whose memory was measured and did not grow with the buffers (never those whose failure
	// merely surfaced at a touch).
	deferred := d.noGrowth
	for _, s := range d.jobs {
		if s.Outcome == result.OutcomeCompleted {
			budget = max(budget, s.AllocationsOK)
		} else if s.Outcome != result.OutcomeUnsupported {
			all = false
		}
	}
	each := " per strategy" // "per strategy" only where there are several
	if len(distinct(d.jobs, func(s *result.JobResult) result.Strategy { return s.Strategy })) == 1 {
		each = ""
	}
	switch {
	case budget == 0:
		return result.Finding{Kind: result.FindingHeadline, Sentence: "No strategy created a buffer: see why below."}
	case len(deferred) > 0:
		who := "memory did not grow with them"
		if n := len(distinct(d.jobs, func(s *result.JobResult) result.Strategy { return s.Strategy })); len(deferred) < n {
			who = "for " + names(deferred) + " memory did not grow with them"
		}
		if len(d.noGrowthSizes) < len(d.sizes) { // a sweep: only at the sizes where it was measured so
			who = "at " + sizeNames(d.noGrowthSizes) + " " + who
		}
		ev := budgetEvidence(d.jobs)
		ev["growth_per_buffer_fraction"] = d.noGrowthMost
		return result.Finding{Kind: result.FindingHeadline, About: result.FindingDeferred, Strategies: deferred, Evidence: ev, Claims: []result.ClaimKind{result.ClaimNeverPlaced}, Sentence: fmt.Sprintf("No allocation failed in %s%s, but %s: the runtime defers allocation to first use, so those buffers were never really allocated; run with --touch fill to place them.", budgetText(d.jobs), each, who)}
	case all:
		return result.Finding{Kind: result.FindingHeadline, About: result.FindingCompleted, Evidence: budgetEvidence(d.jobs), Sentence: fmt.Sprintf("No allocation failed within the budget of %s%s: raise --max-allocs or --max-bytes to find the limit.", budgetText(d.jobs), each)}
	}
	return result.Finding{Kind: result.FindingHeadline, Sentence: "No allocation failed, but not every strategy ran to its budget: see why below."}
}

// budgetText is the budget the completed jobs ran, in buffers and bytes: "200 buffers (200 MiB)" at one
// size; in a sweep the bytes of each size, as one count of buffers is many byte counts ("200 buffers (800
// KiB at 4 KiB, 200 MiB at 1 MiB)"), or each size's own count where they differ (--max-bytes).
func budgetText(jobs []*result.JobResult) string {
	var sizes []uint64
	most, bytes := map[uint64]uint64{}, map[uint64]uint64{}
	for _, s := range jobs {
		if s.Outcome != result.OutcomeCompleted {
			continue
		}
		if _, ok := most[s.SizeBytes]; !ok {
			sizes = append(sizes, s.SizeBytes)
		}
		most[s.SizeBytes], bytes[s.SizeBytes] = max(most[s.SizeBytes], s.AllocationsOK), max(bytes[s.SizeBytes], s.BytesOK)
	}
	if len(sizes) == 1 {
		return fmt.Sprintf("%d buffers (%s)", most[sizes[0]], units.Bytes(bytes[sizes[0]]))
	}
	same := true
	for _, size := range sizes {
		same = same && most[size] == most[sizes[0]]
	}
	parts := make([]string, len(sizes))
	for i, size := range sizes {
		parts[i] = fmt.Sprintf("%s at %s", units.Bytes(bytes[size]), units.Size(size))
		if !same {
			parts[i] = fmt.Sprintf("%d buffers of %s (%s)", most[size], units.Size(size), units.Bytes(bytes[size]))
		}
	}
	if same {
		return fmt.Sprintf("%d buffers (%s)", most[sizes[0]], strings.Join(parts, ", "))
	}
	return strings.Join(parts, ", ")
}

// budgetEvidence is the budget budgetText states, size by size: the most buffers and bytes a completed job
// reached at each ("allocations_ok@1048576", "bytes_ok@1048576"), named by size as allocation-count's are.
func budgetEvidence(jobs []*result.JobResult) map[string]float64 {
	ev := map[string]float64{}
	for _, s := range jobs {
		if s.Outcome != result.OutcomeCompleted {
			continue
		}
		n, b := fmt.Sprintf("allocations_ok@%d", s.SizeBytes), fmt.Sprintf("bytes_ok@%d", s.SizeBytes)
		ev[n], ev[b] = max(ev[n], float64(s.AllocationsOK)), max(ev[b], float64(s.BytesOK))
	}
	return ev
}

// limitSummary says in a few words what the limit was.
func limitSummary(v *view, lf limitFinding) string {
	switch lf.limit {
	case result.LimitDeviceMemory:
		if own, ok := lf.evidence["device_own_bytes"]; ok {
			others := fmt.Sprintf("%s was in use before the loop began", units.Bytes(uint64(lf.evidence["device_used_at_start_bytes"])))
			if o, ok := lf.evidence["device_others_bytes"]; ok {
				others = fmt.Sprintf("other processes held %s", units.Bytes(uint64(o)))
			}
			return fmt.Sprintf("device %d was full (%.0f%% of its %s), shared: this run's buffers reached %s and %s", v.failDev,
				100*lf.evidence["device_fill"], units.Bytes(v.global), units.Bytes(uint64(own)), others)
		}
		return fmt.Sprintf("device %d was full (%.0f%% of its %s)", v.failDev, 100*lf.evidence["device_fill"], units.Bytes(v.global))
	case result.LimitFileDescriptors:
		return fmt.Sprintf("the worker ran out of file descriptors at its limit of %.0f (ulimit -n)", lf.evidence["fd_limit"])
	case result.LimitCgroupMemory:
		limit := units.Bytes(uint64(lf.evidence["cgroup_limit_bytes"]))
		switch {
		case lf.evidence["cgroup_oom_kills"] > 0:
			return fmt.Sprintf("its memory cgroup's OOM killer ended it at the cgroup's limit of %s (a container's or a batch job's), not for want of the machine's memory%s", limit, kernelLogged(v))
		case v.s.Guard == result.GuardCgroup:
			return fmt.Sprintf("the host guard stopped it before its memory cgroup's limit of %s (a container's or a batch job's) ran out, not the machine's memory", limit)
		}
		return fmt.Sprintf("its memory cgroup's limit of %s (a container's or a batch job's) was reached, not the machine's memory", limit)
	case result.LimitUnknown:
		if v.notSetUp() {
			return "it could not be set up"
		}
	case result.LimitGPUFault:
		return "the GPU faulted, hung or was reset while it ran" + kernelLogged(v) + ": a driver or hardware fault, not a memory limit"
	case result.LimitHostMemory:
		if _, ok := lf.evidence["kernel_oom_pid"]; ok {
			return "the kernel's OOM killer ended it: host memory ran out" + kernelLogged(v)
		}
		if r, ok := lf.evidence["host_reserve_bytes"]; ok {
			return fmt.Sprintf("the host guard stopped it at the reserve of %s", units.Bytes(uint64(r)))
		}
		return fmt.Sprintf("host memory ran out (%s available)", units.Bytes(v.availAtEnd))
	case result.LimitContext:
		if lf.evidence["per_device_completed"] == 1 {
			return fmt.Sprintf("one context per device went %.2fx as far and never failed, so the multi-device context is the limit", lf.evidence["ratio"])
		}
		return fmt.Sprintf("one context per device reached %.2fx as many buffers, so the multi-device context is the limit", lf.evidence["ratio"])
	case result.LimitAllocationCount:
		return "the runtime caps the number of allocations: the same count at every size"
	case result.LimitMappings:
		return "the process ran out of memory mappings (vm.max_map_count)"
	case result.LimitAddressSpace:
		if v.s.Guard == result.GuardAddressSpace {
			return fmt.Sprintf("the host guard stopped it before its address-space limit of %s (ulimit -v) ran out", units.Bytes(uint64(lf.evidence["address_space_bytes"])))
		}
		return "the process ran out of address space"
	case result.LimitRuntime:
		if limit, ok := lf.evidence["max_alloc_bytes"]; ok {
			return fmt.Sprintf("the buffer of %s is over the maximum allocation of %s the device reports, and the runtime refused it as the specification asks: no memory ran out",
				units.Size(uint64(lf.evidence["size_bytes"])), units.Bytes(uint64(limit)))
		}
		return "neither the device nor the host was out of memory: a limit inside the runtime"
	case result.LimitFlags:
		return fmt.Sprintf("the runtime does not take flags %s%s; no memory was involved", v.s.Flags, vendorNote(v.s.Flags))
	}
	return "what ran out cannot be told from what was measured"
}

// kernelLogged quotes the kernel's line behind the job's limit (its OOM kill, its GPU fault), "" where the
// log said nothing of it.
func kernelLogged(v *view) string {
	if v.oomLogged {
		return fmt.Sprintf(" (the kernel logged %q)", result.KernelQuote(v.oomLine.Text))
	}
	if len(v.gpuFaults) > 0 {
		return fmt.Sprintf(" (the kernel logged %q)", result.KernelQuote(v.gpuFaults[0].Text))
	}
	return ""
}

// nextStep is what to try, for each limit.
func nextStep(v *view, lf limitFinding) string {
	if v.notSetUp() {
		return "change the job's settings as that says"
	}
	switch lf.limit {
	case result.LimitDeviceMemory:
		if _, ok := lf.evidence["device_own_bytes"]; ok {
			return "the run had only what the other processes left of the device: free it, or probe a device nobody else uses, to see the device's own limit"
		}
		if other, ok := usesLayout(v, lf); ok {
			// Another layout placed more buffers on the same devices: each buffer cost this one more device
			// memory (a copy on every device of a shared context), so the layout does change it.
			return fmt.Sprintf("%s reached %d buffers on the same devices, so this layout costs more device memory per buffer: use %s's layout", other.Strategy, other.AllocationsOK, other.Strategy)
		}
		if v.run.Config.Touch == result.TouchNone {
			return "that is the device's capacity; run with --touch fill to see every strategy reach it"
		}
		return "that is the device's capacity, and no context layout changes it"
	case result.LimitHostMemory:
		return "free host memory or lower what each buffer costs on the host, and compare strategies with --host-reserve set"
	case result.LimitFileDescriptors:
		return "raise the soft limit (ulimit -n 65536; LimitNOFILE= for a systemd service) and run again with --variant-preset nofile to see the threshold move; a runtime that holds a descriptor per buffer is worth a ticket"
	case result.LimitCgroupMemory:
		return "raise the container's or job's memory limit (a pod's resources.limits.memory, Slurm's --mem), or lower what each buffer costs on the host"
	case result.LimitContext:
		return "create one context per device (the per-device strategy), and attach this report to a ticket for the runtime's vendor"
	case result.LimitAllocationCount:
		return "allocate fewer, larger buffers"
	case result.LimitMappings:
		return "raise vm.max_map_count (sysctl -w vm.max_map_count=N) or allocate fewer, larger buffers"
	case result.LimitAddressSpace:
		if set, ok := v.s.VariantSettings["RLIMIT_AS"]; ok {
			return fmt.Sprintf("the %s set RLIMIT_AS=%s: raise it there, or allocate fewer buffers", variantLabel(v.run, v.s.Variant), set)
		}
		return "raise the address-space limit (ulimit -v) or allocate fewer buffers"
	case result.LimitRuntime:
		if limit, ok := lf.evidence["max_alloc_bytes"]; ok {
			return fmt.Sprintf("split it into buffers of at most %s, or give a flag the vendor documents to lift that limit (clmemprobe largest finds the largest buffer the runtime takes)", units.Bytes(uint64(limit)))
		}
		return "attach this report to a ticket for the runtime's vendor"
	case result.LimitGPUFault:
		return "attach the bundle (clmemprobe bundle: ISSUE.md holds the kernel's lines) to a ticket for the driver's vendor; run again with --repeat 3 to see whether the fault comes back at the same buffer"
	case result.LimitFlags:
		return "check which flags the device takes (its extensions, clinfo) or leave them out"
	}
	if !v.sampled {
		if v.run.Config.Touch == result.TouchNone {
			return "run where device memory can be sampled, or with --touch fill, to tell"
		}
		return "run where device memory can be sampled (NVML, amdgpu sysfs, DRM fdinfo), to tell"
	}
	return "look at what the worker printed, below"
}
