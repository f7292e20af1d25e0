package probe

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// How a worker ended becomes the strategy's outcome: its answer, the parent's stop, or a crash, with the
// cell's count and stage where there is no answer, and the stop's cause where the worker or the parent
// stopped it.
func TestCollectorFinish(t *testing.T) {
	exit := 7
	answer, _ := json.Marshal(wire.StrategyAnswer{Outcome: result.OutcomeFailed, AllocationsOK: 12, LoopSeconds: 1.2,
		FirstFailure: &result.FirstFailure{Index: 12, Stage: result.StageTouch}, Attribution: AttributionBatched})
	guarded, _ := json.Marshal(wire.StrategyAnswer{Outcome: result.OutcomeStopped, StopCause: result.StopHostGuard, AllocationsOK: 40,
		Reason: "host guard: system available memory 1 GiB, less one more buffer, would fall below the reserve 2 GiB", Guard: result.GuardSystem})
	for _, c := range []struct {
		name    string
		ending  supervise.Ending
		outcome result.Outcome
		ok      uint64
		reason  string // in the reason
		stage   result.Stage
		cause   result.StopCause
	}{
		{"an answer", supervise.Ending{Answer: answer}, result.OutcomeFailed, 12, "", "", ""},
		{"the worker's guard", supervise.Ending{Answer: guarded}, result.OutcomeStopped, 40, "host guard: system available memory 1 GiB, less one more buffer, would fall below the reserve 2 GiB", "", result.StopHostGuard},
		{"hung", supervise.Ending{Stop: supervise.Hung, Reason: "watchdog: no progress", Count: 5, Stage: wire.StageCreate},
			result.OutcomeHung, 5, "watchdog: no progress", result.StageCreate, result.StopHung},
		{"interrupted", supervise.Ending{Stop: supervise.Interrupted, Reason: "interrupted", Count: 3, Stage: wire.StageFinish},
			result.OutcomeStopped, 3, "interrupted", result.StageFinish, result.StopInterrupted},
		{"past its time", supervise.Ending{Stop: supervise.TimedOut, Reason: "timeout: the strategy ran longer than 1m0s", Count: 8, Stage: wire.StageCreate},
			result.OutcomeStopped, 8, "timeout: the strategy ran longer than 1m0s", result.StageCreate, result.StopTimedOut},
		{"the parent's backstop", supervise.Ending{Stop: supervise.Guard, Reason: "host guard: system available memory 1 GiB fell below half the reserve 4 GiB",
			Count: 6, Stage: wire.StageCreate}, result.OutcomeStopped, 6, "host guard: system available memory 1 GiB fell below half the reserve 4 GiB", result.StageCreate, result.StopHostGuard},
		{"crashed", supervise.Ending{Reason: "the worker exited with status 7", ExitCode: &exit, Count: 9, Stage: wire.StageTouch},
			result.OutcomeCrashed, 9, "the worker exited with status 7", result.StageTouch, ""},
		{"an answer that does not parse", supervise.Ending{Kind: wire.KindStrategy, Answer: json.RawMessage(`"no"`), Count: 2},
			result.OutcomeCrashed, 2, "the strategy child sent a bad answer (json: cannot unmarshal string into Go value of type wire.StrategyAnswer)", result.StageSetup, ""},
		{"bad lines", supervise.Ending{Answer: answer, BadLines: 3}, result.OutcomeFailed, 12, "3 line(s) of the worker's event stream did not parse and were dropped", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := newCollector(Job{Strategy: result.Shared, Size: 1 << 20}, nil)
			e := c.ending
			e.Took = time.Second
			res := col.finish(&e)
			if res.Outcome != c.outcome || res.AllocationsOK != c.ok || res.Reason != c.reason || res.LastStage != c.stage ||
				res.BytesOK != c.ok<<20 || res.StopCause != c.cause {
				t.Errorf("%s (%q) after %d (%q) at %q, %d bytes; want %s (%q) after %d (%q) at %q", res.Outcome, res.StopCause, res.AllocationsOK,
					res.Reason, res.LastStage, res.BytesOK, c.outcome, c.cause, c.ok, c.reason, c.stage)
			}
		})
	}
}

// The collector keeps the info, the notices (the first maxNotices) and the processes at the end, fits the
// costs from the samples, and thins what it keeps of them.
func TestCollectorHandle(t *testing.T) {
	var heard int
	col := newCollector(Job{Strategy: result.Shared, Size: 1 << 20}, func(*result.Sample) { heard++ })
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	col.handle(wire.Event{T: wire.EventInfo, Info: &wire.StrategyInfo{DeviceSampler: "NVML", LoopStarted: start,
		Resources: &result.Resources{Devices: []result.DeviceLedger{{Device: 0}}}}})
	for i := 0; i < maxNotices+5; i++ {
		col.handle(wire.Event{T: wire.EventNotice, Notice: "n"})
	}
	const n = 3 * keptSamples
	for i := uint64(0); i < n; i++ {
		col.handle(wire.Event{T: wire.EventSample, Sample: &result.Sample{Index: i, RSSBytes: 100 + 4096*i, AvailBytes: 1<<40 - (1<<20)*i,
			DeviceSamples: []result.DeviceSample{{Device: 0, UsedBytes: (1 << 20) * i}}}})
	}
	col.handle(wire.Event{T: wire.EventEnd, Ledger: map[int][]result.DeviceProcess{0: {{PID: 1}}}})
	answer, _ := json.Marshal(wire.StrategyAnswer{Outcome: result.OutcomeCompleted, AllocationsOK: n})
	res := col.finish(&supervise.Ending{Answer: answer})
	if res.DeviceSampler != "NVML" || res.LoopStarted != start.Format(time.RFC3339Nano) || res.NoticesTotal != maxNotices+5 ||
		len(res.Notices) != maxNotices || len(res.Resources.Devices[0].ProcessesAtEnd) != 1 {
		t.Errorf("sampler %q, loop started %q, %d notices (%d kept), processes %+v", res.DeviceSampler, res.LoopStarted, res.NoticesTotal,
			len(res.Notices), res.Resources.Devices)
	}
	if heard != n || res.SamplesTotal != n || len(res.Samples) > 2*keptSamples || res.Samples[len(res.Samples)-1].Index != n-1 {
		t.Errorf("heard %d, %d samples, %d kept, last %d", heard, res.SamplesTotal, len(res.Samples), res.Samples[len(res.Samples)-1].Index)
	}
	// Thinned as they came, the kept samples lie on one stride from the first, and the last sample stays.
	kept := res.Samples[:len(res.Samples)-1]
	stride := kept[1].Index - kept[0].Index
	for i, smp := range kept {
		if smp.Index != uint64(i)*stride {
			t.Fatalf("kept sample %d is index %d, not on the stride %d", i, smp.Index, stride)
		}
	}
	if stride&(stride-1) != 0 || n-1-kept[len(kept)-1].Index > stride {
		t.Errorf("stride %d, last on it %d of %d", stride, kept[len(kept)-1].Index, n)
	}
	if res.HostBytesPerBuffer != 4096 || res.SystemBytesPerBuffer == nil || *res.SystemBytesPerBuffer != 1<<20 ||
		res.ReplicationFactor == nil || *res.ReplicationFactor != 1 {
		t.Errorf("host %v, system %v, replication %v per buffer", res.HostBytesPerBuffer, res.SystemBytesPerBuffer, res.ReplicationFactor)
	}
}

// The dry run names every job and the most memory each could take, from the inventory and the host's
// available memory.
func TestDryRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proc", "meminfo"), []byte("MemTotal: 67108864 kB\nMemAvailable: 33554432 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inv := result.Inventory{{Devices: []result.Device{{GlobalMemBytes: 8 << 30}, {GlobalMemBytes: 6 << 30}}}}
	p := Plan{Devices: []int{0, 1}, Strategies: []result.Strategy{result.Shared, result.PerDevice}, Sizes: []uint64{1 << 20},
		MaxAllocs: 10000, root: sample.Under(dir)}
	d := p.DryRun(inv)
	if d.HostAvailable != 32<<30 || len(d.Devices) != 2 || len(d.Jobs) != 2 {
		t.Fatalf("available %d, %d devices, %d jobs", d.HostAvailable, len(d.Devices), len(d.Jobs))
	}
	// A shared context may place every buffer on each device, capped at the smaller device; one context per
	// device, half the buffers each.
	if shared, per := d.Jobs[0], d.Jobs[1]; shared.WorstDeviceBytes != min(10000<<20, 6<<30) || per.WorstDeviceBytes != min(5000<<20, 6<<30) ||
		shared.WorstHostBytes != 10000<<20 {
		t.Errorf("jobs %+v", d.Jobs)
	}
	// Devices whose memory is host memory can hold more than they report (rusticl placed 3.61 GiB on a
	// device of 2 GiB): no cap.
	inv[0].Devices[0].HostUnified, inv[0].Devices[1].HostUnified = true, true
	if shared := p.DryRun(inv).Jobs[0]; shared.WorstDeviceBytes != 10000<<20 {
		t.Errorf("unified devices: shared's worst case on a device %d, want every buffer's %d", shared.WorstDeviceBytes, 10000<<20)
	}
	if r := defaultHostReserve(sample.Under(dir)); r != 64<<30/20 {
		t.Errorf("the default reserve of 64 GiB of RAM: %d, want 5%%", r)
	}
}

// A worker that crashed or hung with a batch in flight records how many buffers the device had confirmed
// (its end lies between that and the count made); one stopped by a timeout or Ctrl-C does not (no buffer
// ended it), nor one that confirmed everything it made, nor one that keeps no confirmed count.
func TestCollectorRecordsTheBatchInFlight(t *testing.T) {
	for _, c := range []struct {
		name   string
		ending supervise.Ending
		want   *uint64
	}{
		{"crashed", supervise.Ending{Count: 9, Confirmed: 4, HasConfirmed: true}, ptr(uint64(4))},
		{"hung", supervise.Ending{Stop: supervise.Hung, Count: 9, Confirmed: 4, HasConfirmed: true}, ptr(uint64(4))},
		{"interrupted", supervise.Ending{Stop: supervise.Interrupted, Count: 9, Confirmed: 4, HasConfirmed: true}, nil},
		{"past its time", supervise.Ending{Stop: supervise.TimedOut, Count: 9, Confirmed: 4, HasConfirmed: true}, nil},
		{"all confirmed", supervise.Ending{Count: 9, Confirmed: 9, HasConfirmed: true}, nil},
		{"no confirmed count", supervise.Ending{Count: 9}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := c.ending
			res := newCollector(Job{Strategy: result.Shared, Size: 1 << 20}, nil).finish(&e)
			if got := res.ConfirmedOK; (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
				t.Errorf("confirmed %v, want %v", got, c.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// A pool's first buffer makes its pool buffer, a lump of the pool's size that a runtime allocating at
// create takes whole: the fits leave the sample before it out, so the sub-buffers' own cost (here nothing)
// is the cost per buffer; a strategy without a pool keeps it, and the same lump is a cost there.
//
// Each device has its own pool, made with its first sub-buffer: round robin over two devices, the second
// pool is in the samples from index 2 on, and it is a lump as much as the first.
func TestThePoolsFirstLumpIsNoCostPerBuffer(t *testing.T) {
	const n, base, pool = 200, 100 << 20, 2 << 30
	for _, c := range []struct {
		strategy result.Strategy
		devices  []int
		lumpIn   bool
	}{{result.Pool, []int{0}, false}, {result.Pool, []int{0, 1}, false}, {result.Pool, []int{0, 1, 2}, false}, {result.Shared, []int{0}, true}} {
		col := newCollector(Job{Strategy: c.strategy, Size: 1 << 20, Devices: c.devices}, nil)
		for i := uint64(0); i <= n; i++ {
			// Buffer #d, the first on device d, made that device's pool: the samples after it hold it.
			rss := base + pool*min(i, uint64(len(c.devices)))
			col.addSample(&result.Sample{Index: i, RSSBytes: rss})
		}
		res := &result.JobResult{AllocationsOK: n, SizeBytes: 1 << 20}
		col.fitCosts(res)
		if !res.Fit.OK {
			t.Fatalf("%s: no fit: %+v", c.strategy, res.Fit)
		}
		if lumped := res.HostBytesPerBuffer > 64<<10; lumped != c.lumpIn {
			t.Errorf("%s on %d devices: %.0f bytes of RSS per buffer; the lump counted: %v, want %v", c.strategy, len(c.devices), res.HostBytesPerBuffer, lumped, c.lumpIn)
		}
	}
}
