// Package findings derives what a run means from its numbers: pure functions of a result, tested as data.
package findings

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
)

// Verdicts derives plain sentences from the numbers of a run: which strategy failed first and where, how the
// strategies compare, what a buffer costs, whether allocation was deferred to first use, and causes that
// are not memory at all. It never looks at vendor names.
func Verdicts(r *result.Run) []string {
	var out []string
	for _, size := range r.Sizes() {
		out = append(out, verdictsForSize(r, size)...)
	}
	if len(out) == 0 {
		out = append(out, "No strategy ran.")
	}
	return out
}

func verdictsForSize(r *result.Run, size uint64) []string {
	var ss []*result.StrategyResult
	for i := range r.Strategies {
		if r.Strategies[i].SizeBytes == size {
			ss = append(ss, &r.Strategies[i])
		}
	}
	prefix := ""
	if len(r.Sizes()) > 1 {
		prefix = units.Size(size) + " buffers: "
	}
	var out []string
	say := func(format string, a ...any) { out = append(out, prefix+fmt.Sprintf(format, a...)) }

	// Failures, earliest first.
	var failed, clean []*result.StrategyResult
	for _, s := range ss {
		switch s.Outcome {
		case result.OutcomeFailed:
			failed = append(failed, s)
		case result.OutcomeCompleted:
			clean = append(clean, s)
		}
	}
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].AllocationsOK < failed[j].AllocationsOK })
	for i, s := range failed {
		f := s.FirstFailure
		lead := "failed"
		if i == 0 && len(failed)+len(clean) > 1 {
			lead = "failed first"
		}
		if f.Stage == result.StageSetup {
			say("%s %s before the first buffer: %s (%d) from %s.", s.Strategy, lead, f.Name, f.Code, f.Call)
			continue
		}
		say("%s %s: buffer #%d (after %s) got %s (%d) at %s, meant for device %d.", s.Strategy, lead, f.Index,
			units.Bytes(f.BytesBefore), f.Name, f.Code, f.Stage, f.Device)
	}
	if len(failed) > 0 {
		first := failed[0]
		for _, o := range append(append([]*result.StrategyResult{}, failed[1:]...), clean...) {
			if first.AllocationsOK == 0 {
				break
			}
			ratio := float64(o.AllocationsOK) / float64(first.AllocationsOK)
			more := "as many buffers"
			if o.Outcome == result.OutcomeCompleted {
				more = "as many buffers and never failed (budget reached)"
			}
			say("%s reached %d buffers, %.2fx %s as %s (%d).", o.Strategy, o.AllocationsOK, ratio, more, first.Strategy, first.AllocationsOK)
		}
	} else if len(clean) > 0 {
		names := ""
		for i, s := range clean {
			if i > 0 {
				names += ", "
			}
			names += string(s.Strategy)
		}
		say("No allocation failed: %s reached the budget of %d buffers (%s).", names, clean[0].AllocationsOK, units.Bytes(clean[0].BytesOK))
	}
	for _, s := range ss {
		switch s.Outcome {
		case result.OutcomeCrashed:
			say("%s crashed after %d buffers, during %s: %s.", s.Strategy, s.AllocationsOK, s.LastStage, s.Reason)
		case result.OutcomeHung:
			say("%s hung after %d buffers, during %s (%s).", s.Strategy, s.AllocationsOK, s.LastStage, s.Reason)
		case result.OutcomeStopped:
			say("%s was stopped after %d buffers: %s.", s.Strategy, s.AllocationsOK, s.Reason)
		case result.OutcomeUnsupported:
			say("%s is not supported here: %s.", s.Strategy, s.Reason)
		}
	}

	// Cost per buffer on the host and on the devices.
	for _, s := range ss {
		if s.SamplesTotal < 2 || s.AllocationsOK < 2 {
			continue
		}
		line := fmt.Sprintf("%s costs %s of host RSS per buffer (%.2fx the buffer size)", s.Strategy,
			units.SignedBytes(s.HostBytesPerBuffer), s.HostBytesPerBuffer/float64(size))
		if s.ReplicationFactor != nil {
			line += fmt.Sprintf(" and %s of device memory summed over %d device(s): replication factor %.2f",
				units.SignedBytes(*s.ReplicationFactor*float64(size)), len(s.DeviceBytesPerBuffer), *s.ReplicationFactor)
		}
		say("%s.", line)
	}
	if sh, pd := find(ss, result.Shared), find(ss, result.PerDevice); sh != nil && pd != nil && sh.ReplicationFactor != nil &&
		pd.ReplicationFactor != nil && *pd.ReplicationFactor > 0.05 {
		say("the shared context costs %.2fx the device memory per buffer of one context per device.", *sh.ReplicationFactor / *pd.ReplicationFactor)
	}

	// Deferred allocation: memory did not follow creates, or create never failed and a later stage did.
	if r.Config.Touch == "none" {
		var deferred []string
		for _, s := range clean {
			if cheap(s, size) {
				deferred = append(deferred, string(s.Strategy))
			}
		}
		if len(deferred) > 0 {
			say("%s: memory did not grow with buffers created (under 5%% of the buffer size per buffer on the host%s): the runtime defers allocation until first use; run with --touch fill to place the buffers.",
				strings.Join(deferred, ", "), deviceClause(clean))
		}
	}
	for _, s := range failed {
		if f := s.FirstFailure; f.Stage == result.StageTouch || f.Stage == result.StageFinish || f.Stage == result.StageMigrate {
			say("%s: clCreateBuffer never failed; the failure surfaced at %s, so the runtime allocates at first use.", s.Strategy, f.Stage)
		}
	}

	// How full the failing device was: out of its memory, or far from it.
	for _, s := range failed {
		if line := deviceFill(r, s); line != "" {
			say("%s", line)
		}
	}

	// Causes that are not what the code says.
	var notHost []string
	var availLow uint64
	for _, s := range failed {
		f := s.FirstFailure
		if f.Code == -6 && f.HostAvail > 0 && r.Environment != nil && r.Environment.HostMemBytes > 0 &&
			float64(f.HostAvail) > 0.10*float64(r.Environment.HostMemBytes) {
			notHost = append(notHost, string(s.Strategy))
			if availLow == 0 || f.HostAvail < availLow {
				availLow = f.HostAvail
			}
		}
	}
	if len(notHost) > 0 {
		say("CL_OUT_OF_HOST_MEMORY (%s) does not prove host memory ran out: at least %s (%.0f%% of RAM) was still available when it was returned; the runtime may report other allocation failures as -6.",
			strings.Join(notHost, ", "), units.Bytes(availLow), 100*float64(availLow)/float64(r.Environment.HostMemBytes))
	}
	for _, s := range ss {
		if s.MaxMapCount > 0 && float64(s.MaxMappings) > 0.9*float64(s.MaxMapCount) {
			say("%s: the process held %d memory mappings, %.0f%% of vm.max_map_count (%d): the limit on mappings, not memory, may end this loop.",
				s.Strategy, s.MaxMappings, 100*float64(s.MaxMappings)/float64(s.MaxMapCount), s.MaxMapCount)
		}
	}
	return out
}

func find(ss []*result.StrategyResult, name result.Strategy) *result.StrategyResult {
	for _, s := range ss {
		if s.Strategy == name {
			return s
		}
	}
	return nil
}

// cheap reports whether a strategy's buffers cost under 5% of their size on the host and on the devices.
func cheap(s *result.StrategyResult, size uint64) bool {
	if s.SamplesTotal < 2 || s.AllocationsOK < 2 {
		return false
	}
	if math.Abs(s.HostBytesPerBuffer) > 0.05*float64(size) {
		return false
	}
	return s.ReplicationFactor == nil || *s.ReplicationFactor <= 0.05
}

func deviceClause(ss []*result.StrategyResult) string {
	for _, s := range ss {
		if s.ReplicationFactor != nil {
			return " and on the devices"
		}
	}
	return ""
}

// deviceFill says how much of its global memory the device a failed buffer was meant for held at that
// moment: the sampled figure where a device sampler applied, else the bytes of the buffers meant for it.
func deviceFill(r *result.Run, s *result.StrategyResult) string {
	f := s.FirstFailure
	if f.Stage == result.StageSetup {
		return ""
	}
	var global uint64
	pos := -1
	for _, d := range r.Devices {
		if d.Index == f.Device {
			global = d.GlobalMemBytes
		}
	}
	for i, d := range s.Devices {
		if d == f.Device {
			pos = i
		}
	}
	if global == 0 || pos < 0 || len(s.Devices) == 0 {
		return ""
	}
	var held uint64
	what := "held"
	if n := len(s.Samples); n > 0 {
		for _, d := range s.Samples[n-1].DeviceSamples {
			if d.Device == f.Device {
				held = d.UsedBytes
			}
		}
	}
	if held == 0 {
		// Buffers i < index with i mod n == pos were meant for this device.
		n := uint64(len(s.Devices))
		count := f.Index / n
		if f.Index%n > uint64(pos) {
			count++
		}
		held, what = count*s.SizeBytes, "had been given buffers of"
	}
	pct := 100 * float64(held) / float64(global)
	line := fmt.Sprintf("%s: when it failed, device %d %s %s, %.1f%% of its %s global memory", s.Strategy, f.Device, what,
		units.Bytes(held), pct, units.Bytes(global))
	switch {
	case pct >= 90:
		line += ": the device's memory ran out."
	case pct < 50:
		line += ": far below the device's memory, so the limit is elsewhere (host memory or a host staging budget, a runtime limit, the address space)."
	default:
		line += "."
	}
	return line
}

// Apply derives the run's verdict from its numbers and stores it in the run.
func Apply(r *result.Run) { r.Verdict = Verdicts(r) }
