package probe

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// keptSamples bounds the samples a strategy keeps in memory and in run.json; the observer sees them all.
const keptSamples = 1000

// collector gathers a worker's events into a strategy result. Events come from the supervisor's reading
// goroutine, the end from the caller: a mutex orders them.
type collector struct {
	mu       sync.Mutex
	res      *result.JobResult
	hostFit  slopeFit
	availFit slopeFit // of MemAvailable, negated: the system's memory taken
	commFit  slopeFit // of Committed_AS
	// The resource ledger's sampled figures: open descriptors, the memory cgroup's working set, locked
	// memory. Each is fitted only from the samples that read it.
	fdFit, cgroupFit, lockedFit slopeFit
	devFits                     map[int]*slopeFit
	lo, hi                      uint64 // the lowest and highest sample index of the fits
	fitted                      int    // the samples the fits hold
	kept                        []result.Sample
	stride                      int
	total                       int
	last                        *result.Sample
	onSample                    func(*result.Sample)
}

// maxNotices is how many of a job's notify messages are kept (the first ones); the rest are counted.
const maxNotices = 100

func newCollector(j Job, onSample func(*result.Sample)) *collector {
	return &collector{res: &result.JobResult{Strategy: j.Strategy, Variant: j.Variant.Name, VariantSettings: j.Variant.Settings, Flags: j.recordedFlags(),
		Devices: j.Devices, SizeBytes: j.Size, Samples: []result.Sample{}},
		devFits: map[int]*slopeFit{}, stride: 1, onSample: onSample}
}

func (c *collector) handle(ev wire.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ev.T {
	case wire.EventSample:
		if ev.Sample != nil {
			c.addSample(ev.Sample)
		}
	case wire.EventNotice:
		c.res.NoticesTotal++
		if len(c.res.Notices) < maxNotices {
			c.res.Notices = append(c.res.Notices, ev.Notice)
		}
	case wire.EventInfo:
		if ev.Info != nil {
			c.res.DeviceSampler, c.res.MaxMapCount = ev.Info.DeviceSampler, ev.Info.MaxMapCount
			c.res.AddressSpaceBytes = ev.Info.AddressSpace
			c.res.RuntimeDiagnostics = ev.Info.Diagnostics
			c.res.LoopStarted = ev.Info.LoopStarted.UTC().Format(time.RFC3339Nano)
			c.res.Resources = ev.Info.Resources
			c.res.DeviceSizes = ev.Info.DeviceSizes
		}
	case wire.EventEnd:
		if ev.Ledger != nil && c.res.Resources != nil {
			for i := range c.res.Resources.Devices {
				d := &c.res.Resources.Devices[i]
				if procs, ok := ev.Ledger[d.Device]; ok {
					d.ProcessesAtEnd = procs
				}
			}
		}
	}
}

func (c *collector) addSample(s *result.Sample) {
	c.total++
	c.last = s
	if c.res.Strategy != result.Pool || s.Index >= c.res.PoolsMadeBy() {
		c.fit(s)
	}
	c.res.PeakRSSBytes = max(c.res.PeakRSSBytes, s.RSSBytes, s.HWMBytes)
	c.res.MaxMappings = max(c.res.MaxMappings, s.Mappings)
	// Keep every stride-th sample; when the kept set is full, keep every other one and double the stride. Full
	// is 2*keptSamples-1: thinned to keptSamples that keeps exactly indexes 0, 2*stride, ..., so the samples
	// kept after it stay on the doubled stride.
	if (c.total-1)%c.stride == 0 {
		c.kept = append(c.kept, *s)
		if len(c.kept) >= 2*keptSamples-1 {
			c.kept = result.Thin(c.kept, keptSamples)
			c.stride *= 2
		}
	}
	if c.onSample != nil {
		c.onSample(s)
	}
}

// fit adds sample s to the fits of the costs per buffer. The pool strategy's samples before its first
// buffer on every device stay out of them (round robin, device d's first is buffer #d): that buffer makes
// the device's pool buffer, a lump of the pool's size (a runtime that allocates at create takes it whole),
// which a line through the samples would spread over the buffers as a cost each (rusticl: 711 KiB a
// buffer over 2000 sub-buffers that took nothing after it; over two devices, 313 KiB for the second pool).
func (c *collector) fit(s *result.Sample) {
	c.fitted++
	if c.fitted == 1 || s.Index < c.lo {
		c.lo = s.Index
	}
	c.hi = max(c.hi, s.Index)
	x := float64(s.Index)
	c.hostFit.add(x, float64(s.RSSBytes))
	if s.AvailBytes > 0 {
		c.availFit.add(x, -float64(s.AvailBytes))
	}
	if s.CommittedBytes > 0 {
		c.commFit.add(x, float64(s.CommittedBytes))
	}
	if s.OpenFDs > 0 {
		c.fdFit.add(x, float64(s.OpenFDs))
	}
	if s.CgroupBytes > 0 {
		c.cgroupFit.add(x, float64(s.CgroupBytes))
	}
	if s.LockedBytes > 0 {
		c.lockedFit.add(x, float64(s.LockedBytes))
	}
	for _, d := range s.DeviceSamples {
		f := c.devFits[d.Device]
		if f == nil {
			f = &slopeFit{}
			c.devFits[d.Device] = f
		}
		f.add(x, float64(d.UsedBytes))
	}
}

// lastRSS is the resident memory of the last sample, 0 before the first.
func (c *collector) lastRSS() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		return 0
	}
	return c.last.RSSBytes
}

// cgroupMemory is the ledger's cgroup memory, nil where the worker ran in no memory cgroup it could read.
func cgroupMemory(rs *result.Resources) *result.Resource {
	if rs.Cgroup == nil {
		return nil
	}
	return &rs.Cgroup.Memory
}

// endResources sets the ledger's values at the end from the last sample.
func (c *collector) endResources(res *result.JobResult) {
	rs, last := res.Resources, c.last
	if rs == nil || last == nil {
		return
	}
	if rs.FDs != nil && last.OpenFDs > 0 {
		rs.FDs.AtEnd = last.OpenFDs
	}
	if rs.LockedMemory != nil {
		rs.LockedMemory.AtEnd = last.LockedBytes
	}
	if rs.Cgroup != nil && last.CgroupBytes > 0 {
		rs.Cgroup.Memory.AtEnd = last.CgroupBytes
	}
}

// finish turns how the worker ended into the strategy's result.
func (c *collector) finish(e *supervise.Ending) *result.JobResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	res := c.res
	res.Seconds = e.Took.Seconds()
	a, aerr := supervise.Answer[wire.StrategyAnswer](e)
	switch {
	case aerr == nil:
		res.Outcome, res.Reason, res.StopCause = a.Outcome, a.Reason, a.StopCause
		res.AllocationsOK, res.FirstFailure = a.AllocationsOK, a.FirstFailure
		res.Attribution, res.AttributionNote, res.LoopSeconds = a.Attribution, a.AttributionNote, a.LoopSeconds
		res.Guard = a.Guard
		if a.AllocationsOK > 0 && a.LoopSeconds > 0 {
			res.NanosPerAlloc = a.LoopSeconds * 1e9 / float64(a.AllocationsOK)
		}
	case e.Stop != supervise.NotStopped:
		res.Outcome, res.Reason, res.StopCause = e.Stop.Outcome(), e.Reason, e.Stop.StopCause()
		res.AllocationsOK, res.LastStage = e.Count, e.Stage.Result()
		if res.Outcome == result.OutcomeHung {
			confirmedOf(res, e) // a stop (a timeout, Ctrl-C) ended no buffer: its count is where it stopped
		}
	default:
		// No last word: the runtime took the worker down. The cell still says how far it got.
		confirmedOf(res, e)
		res.Outcome, res.Reason = result.OutcomeCrashed, e.Reason
		if errors.Is(aerr, supervise.ErrBadAnswer) {
			res.Reason = aerr.Error()
		}
		res.AllocationsOK, res.LastStage = e.Count, e.Stage.Result()
		res.Signal, res.ExitCode = e.Signal, e.ExitCode
	}
	if e.BadLines > 0 {
		res.Reason = joinReason(res.Reason, fmt.Sprintf("%d line(s) of the worker's event stream did not parse and were dropped", e.BadLines))
	}
	res.WorkerOutput = e.Output
	res.WorkerPID = e.PID
	res.BytesOK = res.AllocationsOK * res.SizeBytes
	c.endResources(res)
	c.fitCosts(res)
	res.Samples = c.kept
	if c.last != nil && (len(res.Samples) == 0 || res.Samples[len(res.Samples)-1].Index != c.last.Index ||
		res.Samples[len(res.Samples)-1].Seconds != c.last.Seconds) {
		res.Samples = append(res.Samples, *c.last) // the failure sample always stays
	}
	if res.Samples == nil {
		res.Samples = []result.Sample{}
	}
	res.SamplesTotal = c.total
	return res
}

// confirmedOf records, for a worker that crashed or hung, how many of the buffers it made the device had
// confirmed, where a batch was in flight: its end lies between the two.
func confirmedOf(res *result.JobResult, e *supervise.Ending) {
	if e.HasConfirmed && e.Confirmed < e.Count {
		n := e.Confirmed
		res.ConfirmedOK = &n
	}
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// fitCosts sets the costs per buffer where the fit rule allows them: host RSS, system memory, committed
// memory, and device memory per device, with the replication factor where device memory was placed.
func (c *collector) fitCosts(res *result.JobResult) {
	res.Fit = result.JudgeFit(c.fitted, c.lo, c.hi, res.AllocationsOK)
	if !res.Fit.OK {
		return
	}
	if b, ok := c.hostFit.slope(); ok {
		res.HostBytesPerBuffer = b
	}
	if b, ok := c.availFit.slope(); ok {
		res.SystemBytesPerBuffer = &b
	}
	if b, ok := c.commFit.slope(); ok {
		res.CommittedBytesPerBuffer = &b
	}
	var noise result.SlopeNoise
	var known bool
	for _, n := range []struct {
		fit *slopeFit
		to  *float64
	}{{&c.hostFit, &noise.Host}, {&c.availFit, &noise.System}, {&c.commFit, &noise.Committed}} {
		if v, ok := n.fit.noise(); ok {
			*n.to, known = v, true
		}
	}
	if known {
		res.SlopeNoise = &noise
	}
	if rs := res.Resources; rs != nil {
		for _, r := range []struct {
			res *result.Resource
			fit *slopeFit
		}{{rs.FDs, &c.fdFit}, {rs.LockedMemory, &c.lockedFit}, {cgroupMemory(rs), &c.cgroupFit}} {
			if r.res != nil {
				if b, ok := r.fit.slope(); ok {
					r.res.PerBuffer = &b
				}
			}
		}
	}
	if len(c.devFits) == 0 {
		return
	}
	res.DeviceBytesPerBuffer = map[string]float64{}
	var sum float64
	keys := make([]int, 0, len(c.devFits))
	for d := range c.devFits {
		keys = append(keys, d)
	}
	sort.Ints(keys)
	for _, d := range keys {
		if b, ok := c.devFits[d].slope(); ok {
			res.DeviceBytesPerBuffer[strconv.Itoa(d)] = b
			sum += b
		}
	}
	// A factor only means something where device memory was placed (result.Placed): below that, a factor
	// of 0.00 would read as a measurement of replication.
	if result.Placed(sum, res.SizeBytes) {
		f := sum / float64(res.SizeBytes)
		res.ReplicationFactor = &f
	}
}
