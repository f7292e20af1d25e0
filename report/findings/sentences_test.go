package findings

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// stated is, for a finding of one kind, the words its sentence must hold to say what its evidence says,
// each written from a figure of the evidence; keys the finding does not carry give nothing.
var stated = map[result.FindingKind]func(ev map[string]float64) []string{
	result.FindingFailure: func(ev map[string]float64) []string {
		return []string{fmt.Sprintf("at buffer #%.0f (after %s)", ev["index"], units.Bytes(uint64(ev["bytes_before"]))),
			fmt.Sprintf("(%.0f)", ev["code"]), fmt.Sprintf("meant for device %.0f", ev["device"])}
	},
	result.FindingComparison: func(ev map[string]float64) []string {
		var first float64
		for k, v := range ev {
			if name, st := evidenceName(k); name == "allocations_ok" && st != "" {
				first = v
			}
		}
		if ev["devices"] == 1 {
			return []string{fmt.Sprintf("one device (device %.0f", ev["device"])}
		}
		return []string{fmt.Sprintf("reached %.0f buffers, %.2fx as many as", ev["allocations_ok"], ev["ratio"]), fmt.Sprintf("(%.0f)", first)}
	},
	result.FindingCompleted: func(ev map[string]float64) []string {
		return []string{fmt.Sprintf("reached the budget of %.0f buffers", ev["allocations_ok"])}
	},
	result.FindingOutcome: func(ev map[string]float64) []string {
		switch {
		case ev["guard_stopped"] > 0:
			return []string{fmt.Sprintf("stopped %.0f strateg", ev["guard_stopped"]), "the reserve of " + units.Bytes(uint64(ev["host_reserve_bytes"]))}
		case ev["jobs_not_run"] > 0:
			return nil // a list of jobs: counted in notRunItems
		case ev["allocations_ok"] == 0:
			return nil // "is not supported here": no count to say
		}
		return []string{fmt.Sprintf(" %.0f buffers", ev["allocations_ok"])}
	},
	result.FindingHeadline: func(ev map[string]float64) []string {
		switch {
		case ev["guard_stopped"] > 0:
			return []string{fmt.Sprintf("stopped %.0f strateg", ev["guard_stopped"]), "the reserve of " + units.Bytes(uint64(ev["host_reserve_bytes"]))}
		case ev["ratio"] > 0:
			return []string{fmt.Sprintf("reached %.2fx as many buffers", ev["ratio"])}
		case len(budgetSizes(ev)) > 0:
			sizes := budgetSizes(ev)
			if len(sizes) == 1 {
				return []string{fmt.Sprintf("%.0f buffers (%s)", ev[fmt.Sprintf("allocations_ok@%d", sizes[0])], units.Bytes(uint64(ev[fmt.Sprintf("bytes_ok@%d", sizes[0])])))}
			}
			var out []string
			for _, size := range sizes {
				out = append(out, units.Bytes(uint64(ev[fmt.Sprintf("bytes_ok@%d", size)]))+" at "+units.Size(size))
			}
			return out
		case len(interruptedAt(ev)) > 0:
			return interruptedAt(ev)
		case ev["device_fill"] >= 0.9: // below, the device was not full and the limit is another
			return []string{fmt.Sprintf("device %.0f was full (%.0f%% of its %s)", ev["device"], 100*ev["device_fill"], units.Bytes(uint64(ev["device_global_bytes"])))}
		}
		return nil
	},
	result.FindingLimit: func(ev map[string]float64) []string {
		var out []string
		if r, ok := ev["ratio"]; ok {
			out = append(out, fmt.Sprintf("reached %.0f (%.2fx)", ev["per_device_allocations_ok"], r))
		}
		if used, ok := ev["device_used_bytes"]; ok && ev["ratio"] == 0 {
			out = append(out, fmt.Sprintf("device %.0f held %s, %.1f%% of its %s", ev["device"], units.Bytes(uint64(used)), 100*ev["device_fill"],
				units.Bytes(uint64(ev["device_global_bytes"]))))
		}
		if start, ok := ev["cgroup_oom_kills_at_start"]; ok {
			end := ev["cgroup_oom_kills_at_end"]
			if used, ok := ev["cgroup_used_bytes"]; ok {
				out = append(out, fmt.Sprintf("went from %.0f to %.0f", start, end), "last reading before the kill was "+units.Bytes(uint64(used))+" of its")
			} else {
				out = append(out, fmt.Sprintf("(oom_kill %.0f to %.0f)", start, end))
			}
		}
		if given, ok := ev["given_bytes"]; ok {
			out = append(out, "("+units.Bytes(uint64(given))+")", units.Bytes(uint64(ev["global_mem_bytes"]))+" of global memory")
		}
		return out
	},
	result.FindingCost: func(ev map[string]float64) []string {
		var out []string
		if h, ok := ev["host_bytes_per_buffer"]; ok {
			out = append(out, units.SignedBytes(h)+" of host RSS per buffer")
		}
		if d, ok := ev["device_bytes_per_buffer"]; ok {
			out = append(out, units.SignedBytes(d)+" of device memory")
		}
		if rf, ok := ev["replication_factor"]; ok {
			out = append(out, fmt.Sprintf("replication factor %.2f", rf))
		}
		if cg, ok := ev["cgroup_bytes_per_buffer"]; ok {
			out = append(out, units.SignedBytes(cg)+" of its memory cgroup")
		}
		if p, ok := ev["pool_rss_bytes"]; ok {
			out = append(out, "RSS grew "+units.Bytes(uint64(p)), "its virtual memory grew "+units.Bytes(uint64(ev["pool_vms_bytes"])))
		}
		return out
	},
	result.FindingCode: func(ev map[string]float64) []string {
		return []string{fmt.Sprintf("at least %s (%.0f%% of RAM)", units.Bytes(uint64(ev["host_available_bytes"])), 100*ev["host_available_bytes"]/ev["host_ram_bytes"])}
	},
	result.FindingRepeated: func(ev map[string]float64) []string {
		return []string{fmt.Sprintf("in %.0f of %.0f runs", ev["reproduced"], ev["runs"]), fmt.Sprintf("#%.0f", ev["index_min"]), fmt.Sprintf("#%.0f", ev["index_max"])}
	},
	result.FindingVariant: func(ev map[string]float64) []string {
		return []string{fmt.Sprintf("at #%.0f where", ev["variant_allocations_ok"]), fmt.Sprintf("at #%.0f (%+.1f%%)", ev["base_allocations_ok"], 100*ev["change"])}
	},
}

// sentenceRuns are runs whose findings between them are of every kind stated covers, each with evidence.
func sentenceRuns(t *testing.T) map[string]*result.Run {
	devs := []result.Device{{Index: 0, GlobalMemBytes: 1 << 30}, {Index: 1, GlobalMemBytes: 1 << 30}}
	guarded := job(result.Shared, result.OutcomeStopped, 40, 0, 1)
	guarded.Guard, guarded.Reason = result.GuardSystem, "host guard: system available memory fell below the reserve"
	fit := &result.Fit{Samples: 50, Spanned: 100, OK: true}
	sys := float64(mib)
	costly := job(result.Shared, result.OutcomeCompleted, 100, 0, 1)
	costly.Fit, costly.HostBytesPerBuffer, costly.SystemBytesPerBuffer = fit, 4096, &sys
	costly.DeviceBytesPerBuffer = map[string]float64{"0": mib, "1": mib}
	repeated := failedAt(result.PerDevice, 300, 1, 0, 1)
	repeated.Repeats = []result.Attempt{{Outcome: result.OutcomeFailed, AllocationsOK: 310, FirstFailure: &result.FirstFailure{Index: 310, Code: -4, Call: "clCreateBuffer"}},
		{Outcome: result.OutcomeFailed, AllocationsOK: 290, FirstFailure: &result.FirstFailure{Index: 290, Code: -4, Call: "clCreateBuffer"}}}
	repeated.FirstFailure.Call = "clCreateBuffer"
	variant := failedAt(result.Shared, 900, 0, 0, 1)
	variant.Variant = "more"
	killed, died := job(result.Shared, result.OutcomeCrashed, 600, 0, 1), job(result.PerDevice, result.OutcomeCrashed, 700, 0, 1)
	killed.Signal, killed.Reason, died.Reason = "SIGKILL", "killed by SIGKILL", "exited with status 1"
	killed.Resources = &result.Resources{Cgroup: &result.Cgroup{Version: 2, Path: "/job", Memory: result.Resource{AtEnd: 900 * mib, Limit: 1 << 30},
		OOMKillsAtStart: 2, OOMKillsAtEnd: 3}}
	died.Resources = &result.Resources{Cgroup: &result.Cgroup{Version: 2, Path: "/job", Memory: result.Resource{AtEnd: 100 * mib, Limit: 1 << 30},
		OOMKillsAtStart: 0, OOMKillsAtEnd: 1}}
	return map[string]*result.Run{
		"pool":    {Config: result.Config{Touch: result.TouchFill}, Devices: devs, Jobs: []result.JobResult{pooledJob(fit)}},
		"cgroup":  {Config: result.Config{Touch: result.TouchFill}, Devices: devs, Jobs: []result.JobResult{killed, died}},
		"fixture": loadFixture(t),
		"guard": {Config: result.Config{Touch: result.TouchFill, HostReserveByte: 3 << 30}, Environment: &result.Environment{HostMemBytes: 64 << 30},
			Devices: devs, Jobs: []result.JobResult{guarded, failedAt(result.PerDevice, 900, 0, 0, 1), job(result.MigrateFirst, result.OutcomeCrashed, 77, 0, 1)}},
		"overcommit": {Config: result.Config{Touch: result.TouchFill}, Devices: devs,
			Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, 4096, 0, 1), costly}},
		"repeated and variant": {Config: result.Config{Touch: result.TouchFill}, Devices: devs,
			Jobs: []result.JobResult{failedAt(result.Shared, 500, 0, 0, 1), repeated, variant}},
		"sweep completed": {Config: result.Config{Touch: result.TouchFill, MaxAllocs: 200}, Devices: devs,
			Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, 200, 0, 1), sized(job(result.Shared, result.OutcomeCompleted, 200, 0, 1), 4<<10)}},
		"completed": {Config: result.Config{Touch: result.TouchFill, MaxAllocs: 200}, Devices: devs,
			Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, 200, 0, 1), job(result.PerDevice, result.OutcomeCompleted, 200, 0, 1)}},
		"one device": {Config: result.Config{Touch: result.TouchFill}, Devices: []result.Device{{Index: 3, GlobalMemBytes: 1 << 30}},
			Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, 10, 3), job(result.PerDevice, result.OutcomeCompleted, 10, 3)}},
		"interrupted": {Partial: true, Config: result.Config{Touch: result.TouchFill}, Devices: devs,
			Jobs: []result.JobResult{interrupted(job(result.PerDevice, result.OutcomeStopped, 700, 0, 1)), interrupted(job(result.MigrateFirst, result.OutcomeStopped, 30, 0, 1))}},
		"full": {Config: result.Config{Touch: result.TouchFill}, Devices: devs, Jobs: []result.JobResult{failedAt(result.PerDevice, 2048, 0, 0, 1)}},
		"guarded only": {Config: result.Config{Touch: result.TouchFill, HostReserveByte: 3 << 30}, Environment: &result.Environment{HostMemBytes: 64 << 30},
			Devices: devs, Jobs: []result.JobResult{guarded}},
		"not run": {Partial: true, Config: result.Config{Touch: result.TouchFill, Strategies: result.DefaultStrategies, Sizes: []uint64{mib, 2 * mib}},
			Devices: devs, Jobs: []result.JobResult{job(result.Shared, result.OutcomeCompleted, 10, 0, 1)}},
	}
}

// The sentence of each kind of finding says what its evidence says: every figure the evidence carries is
// written in it, as that kind writes it. This is the one test that reads figures in sentences; the others
// assert on the evidence itself.
func TestEachSentenceStatesItsEvidence(t *testing.T) {
	checked := map[result.FindingKind]int{}
	for name, r := range sentenceRuns(t) {
		for _, f := range Judge(r).Findings() {
			if f.Kind == result.FindingOutcome && f.Evidence["jobs_not_run"] > 0 {
				checked[f.Kind]++
				if n := notRunItems(f.Sentence); float64(n) != f.Evidence["jobs_not_run"] {
					t.Errorf("%s: %q lists %d jobs, its evidence %v", name, f.Sentence, n, f.Evidence["jobs_not_run"])
				}
				continue
			}
			want, ok := stated[f.Kind]
			if !ok || len(f.Evidence) == 0 {
				continue
			}
			words := want(f.Evidence)
			if len(words) > 0 {
				checked[f.Kind]++
			}
			for _, w := range words {
				if !strings.Contains(f.Sentence, w) {
					t.Errorf("%s: %s finding %q does not say %q (evidence %v)", name, f.Kind, f.Sentence, w, f.Evidence)
				}
			}
		}
	}
	for kind := range stated {
		if checked[kind] == 0 {
			t.Errorf("no %s finding with evidence was checked: the runs do not reach the kind", kind)
		}
	}
	t.Logf("findings checked by kind: %v", checked)
}

// interrupted is j stopped by an interrupt.
func interrupted(j result.JobResult) result.JobResult {
	j.StopCause, j.Reason = result.StopInterrupted, "interrupted"
	return j
}

// sized is j at buffers of size bytes.
func sized(j result.JobResult, size uint64) result.JobResult {
	j.SizeBytes, j.BytesOK = size, j.AllocationsOK*size
	return j
}

// interruptedAt is what an interrupted run's headline says of each job its evidence counts
// ("per_device_allocations_ok@1048576"): "per-device at 700 buffers".
func interruptedAt(ev map[string]float64) []string {
	var out []string
	for k, v := range ev {
		if name, size, ok := strings.Cut(k, "@"); ok && size != "" {
			if st, ok := strings.CutSuffix(name, "_allocations_ok"); ok {
				out = append(out, fmt.Sprintf("%s at %.0f buffers", strings.ReplaceAll(st, "_", "-"), v))
			}
		}
	}
	return out
}

// budgetSizes is the sizes of a budget's evidence ("bytes_ok@4096"), in no order.
func budgetSizes(ev map[string]float64) []uint64 {
	var out []uint64
	for k := range ev {
		if rest, ok := strings.CutPrefix(k, "bytes_ok@"); ok {
			size, err := strconv.ParseUint(rest, 10, 64)
			if err == nil {
				out = append(out, size)
			}
		}
	}
	return out
}

// notRunItems counts the jobs a "Not run (...): a, b and c." sentence lists.
func notRunItems(sentence string) int {
	_, list, ok := strings.Cut(sentence, "): ")
	if !ok {
		return 0
	}
	return len(strings.Split(strings.ReplaceAll(strings.TrimSuffix(list, "."), " and ", ", "), ", "))
}
