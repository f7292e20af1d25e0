package probe

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/footprint"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// LargestRequest asks for the largest single buffer each device takes (clmemprobe largest).
type LargestRequest struct {
	Library  string
	Platform int
	Devices  []int // positions within the platform
	// Patterns are the fill pattern sizes to search with, each on its own (1 and 4 bytes as programs use,
	// 128 the largest the specification allows).
	Patterns []int
	Flags    uint64
	// MaxBytes is the most the search tries (0: the device's memory), above the device's memory too;
	// HostReserve is what a device whose memory is the host's must leave of the host's available memory.
	MaxBytes, HostReserve uint64
	Setup                 time.Duration
	// OnTry hears every try as it ends, for a progress line.
	OnTry func(device int, t result.LargestTry)
	// Command and ToolVersion are recorded in the result.
	Command     []string
	ToolVersion string
}

// DefaultLargestPatterns are the pattern sizes `largest` tries by default.
var DefaultLargestPatterns = []int{1, 4, 128}

// Largest searches every requested device, one try at a time, each in a supervised worker.
func Largest(ctx context.Context, req LargestRequest, inv result.Inventory) (*result.Largest, error) {
	l := result.NewLargest(result.NewHeader(req.ToolVersion, req.Command, inv, req.Platform))
	groups, end := session(true)
	defer end()
	kills := oomKillCounter(sample.System)
	var cgroupLimit uint64
	if kills.cgroup != nil {
		cgroupLimit = kills.cgroup.Limit()
	}
	for _, i := range req.Devices {
		if ctx.Err() != nil {
			l.Interrupted = true // between devices: those not reached are absent
			break
		}
		if req.Platform >= len(inv) || i >= len(inv[req.Platform].Devices) {
			continue
		}
		d := inv[req.Platform].Devices[i]
		ld := result.LargestDevice{Index: i, Name: d.Name, MaxAllocBytes: d.MaxAllocBytes, GlobalMemBytes: d.GlobalMemBytes, CgroupLimitBytes: cgroupLimit}
		t := &tryer{ctx: ctx, req: req, device: i, groups: groups, kills: kills, cgroupLimit: cgroupLimit}
		t.deviceBound, t.deviceBoundBy = largestBound(d, req, sample.System)
		if as := footprint.AddressSpaceLimit(); d.HostUnified && as != math.MaxUint64 {
			t.addressSpace = as
		}
		for _, p := range req.Patterns {
			v, tries := searchLargest(t.bound, p, t.try)
			ld.Tries = append(ld.Tries, tries...)
			if t.interrupted {
				// A pattern whose search was cut short has no largest of its own; the sizes its tries verified
				// still hold, as a lower bound (the verdict says so).
				for _, try := range tries {
					if try.Outcome == result.TryVerified {
						ld.LargestVerifiedBytes = max(ld.LargestVerifiedBytes, try.SizeBytes)
					}
				}
				break
			}
			ld.Patterns = append(ld.Patterns, result.LargestPattern{PatternBytes: p, LargestVerifiedBytes: v})
			ld.LargestVerifiedBytes = max(ld.LargestVerifiedBytes, v)
		}
		ld.BoundBytes, ld.BoundBy = t.boundBy()
		ld.AddressSpaceLimitBytes, ld.WorkerMappedBytes, ld.DeviceUsedAtStartBytes = t.addressSpace, t.mapped, t.usedAtStart
		ld.Interrupted = t.interrupted
		l.Interrupted = l.Interrupted || t.interrupted
		l.Devices = append(l.Devices, ld)
	}
	return l, ctx.Err()
}

// largestBound is the most the search tries on a device, and what set it: its global memory, or
// --max-bytes where given (even above it), and for a device whose memory is the host's, no more than the host can spare above its
// reserves (hostRoom), which in a memory cgroup is what the cgroup's limit leaves: a try past it would
// be ended by the cgroup's OOM killer, which may take the tool with it.
func largestBound(d result.Device, req LargestRequest, root sample.Root) (bound uint64, by result.LargestBound) {
	bound, by = d.GlobalMemBytes, result.BoundDevice
	if req.MaxBytes > 0 {
		// Above the device's reported memory too: a runtime that does not enforce it is found only there.
		bound, by = req.MaxBytes, result.BoundMaxBytes
	}
	if d.HostUnified {
		if room, ok := roomAbove(root, req.HostReserve); ok && room.bytes < bound {
			bound, by = room.bytes, result.BoundHost
			if room.by == result.GuardCgroup {
				by = result.BoundCgroup
			}
		}
	}
	return bound &^ (mib - 1), by
}

// hostRoom is what the host can give one worker above its reserves, and which memory is the tighter.
type hostRoom struct {
	bytes uint64
	by    result.Guard
}

// roomAbove is the host's room above reserve: the system's available memory less reserve and, where this
// process runs in a memory cgroup with a limit, the cgroup's free memory (its limit less its working set)
// less the cgroup's reserve (wire.CgroupReserve), whichever is less: the two reserves the host guard stops a
// loop at. ok is false when the system's memory cannot be read.
func roomAbove(root sample.Root, reserve uint64) (hostRoom, bool) {
	mi, err := root.Meminfo()
	if err != nil {
		return hostRoom{}, false
	}
	room := hostRoom{bytes: mi.Available - min(mi.Available, reserve), by: result.GuardSystem}
	cg, _ := sample.FindCgroup(root)
	if cg == nil {
		return room, true
	}
	limit := cg.Limit()
	ws, err := cg.WorkingSet()
	if limit == 0 || err != nil {
		return room, true
	}
	free := limit - min(limit, ws)
	if free -= min(free, wire.CgroupReserve(reserve, limit)); free < room.bytes {
		room.bytes, room.by = free, result.GuardCgroup
	}
	return room, true
}

const mib = 1 << 20

// tryer runs tries in workers, and derives each try's hang limit from the fills it has seen.
type tryer struct {
	ctx       context.Context
	req       LargestRequest
	device    int
	groups    *supervise.Groups
	bandwidth float64 // bytes per second of the fastest verified fill so far; 0 before one
	// slowestCreate is the longest clCreateBuffer seen, in seconds; createdSeconds is the create time of
	// the largest try that created its buffer, createdSize that try's size.
	slowestCreate, createdSeconds float64
	createdSize                   uint64
	// kills counts the OOM killer's kills; cgroupLimit is the limit of the memory cgroup the tool runs in
	// (0: none), named in an OOM kill's detail.
	kills       oomKills
	cgroupLimit uint64
	// interrupted says Ctrl-C stopped a try, or came before one started: no try is made after it.
	interrupted bool
	// deviceBound is the most a try may be before any try (largestBound), and what set it.
	deviceBound   uint64
	deviceBoundBy result.LargestBound
	// addressSpace is the workers' address-space limit (RLIMIT_AS, inherited from this process) where it
	// bounds the tries (a device whose memory is the host's maps each buffer in the worker; 0: it does not),
	// and mapped the most a worker mapped besides its buffer, as the verified tries report it.
	addressSpace, mapped uint64
	// usedAtStart is the device's memory in use before the first try's buffer that a sampler read.
	usedAtStart *uint64
}

// addressSlack is kept free under an address-space limit besides the buffer and what a verified try's
// worker mapped besides it: one more glibc malloc arena (result.AddressSlack), which a worker whose threads
// start in another order may reserve.
const addressSlack = result.AddressSlack

// bound is the most the next try may be (see boundBy).
func (t *tryer) bound() uint64 {
	b, _ := t.boundBy()
	return b
}

// boundBy is the most the next try may be, and what set it: the device's bound and, under an
// address-space limit, what the limit leaves above what a worker mapped besides its buffer (known from
// the first verified try on) and addressSlack. A try past it would fail or crash for the limit, not the
// device.
func (t *tryer) boundBy() (uint64, result.LargestBound) {
	if t.addressSpace == 0 {
		return t.deviceBound, t.deviceBoundBy
	}
	room := t.addressSpace - min(t.addressSpace, t.mapped+addressSlack)
	if room &^= mib - 1; room < t.deviceBound {
		return room, result.BoundAddressSpace
	}
	return t.deviceBound, t.deviceBoundBy
}

// The hang limit of a try: four times the longer of the fill's expected time at the measured bandwidth and
// the create's (see hangLimit), and at least minTryHang; before any fill was measured, firstTryHang. The
// supervisor applies it to each stage of the try on its own (no progress for that long in one call).
const (
	minTryHang   = 5 * time.Second
	firstTryHang = 30 * time.Second
)

func (t *tryer) hangLimit(size uint64) time.Duration {
	if t.bandwidth <= 0 {
		return firstTryHang
	}
	fill := float64(size) / t.bandwidth
	// A runtime whose create is slow (rusticl took 3.7-9.2 s to create a buffer it filled in 0.15 s) is
	// not hung in it: the limit covers the slowest create seen, or the largest try's create scaled to this
	// size. (Scaling a small try's would make a fixed overhead of seconds into hours at 80 GB.)
	create := t.slowestCreate
	if t.createdSize > 0 {
		create = max(create, t.createdSeconds*float64(size)/float64(t.createdSize))
	}
	return max(minTryHang, time.Duration(4*max(fill, create)*float64(time.Second)))
}

// retryHang is how many times longer a try that hung within a limit predicted from smaller tries' fills is
// given, once, before it is called hung.
const retryHang = 4

// try runs one try and says how it ended; made is false when Ctrl-C came before it started, and then no
// try was made. A try that hung within a limit predicted from the smaller tries (above minTryHang) is made
// again with retryHang times that limit: a larger buffer may fill slower than their bandwidth says (PoCL
// filled 4 GiB in 3.1 s and 8 GiB in 15-20 s, and the 8 GiB try was called hung), and "hung" is said only
// of a try that stalled for that long too. A limit at its floor is already far above the prediction.
func (t *tryer) try(size uint64, pattern int) (result.LargestTry, bool) {
	hang := t.hangLimit(size)
	lt, made := t.tryWithin(size, pattern, hang)
	if made && lt.Outcome == result.TryHung && hang > minTryHang {
		first := lt.Detail
		if again, ok := t.tryWithin(size, pattern, retryHang*hang); ok {
			lt = again
			lt.Detail = strings.TrimSuffix(fmt.Sprintf("at first %s; made again with %s: %s", first, (retryHang*hang).Round(100*time.Millisecond), again.Detail), ": ")
		}
	}
	if made && t.req.OnTry != nil {
		t.req.OnTry(t.device, lt)
	}
	return lt, made
}

// tryWithin runs one try with hang as its hang limit (see try).
func (t *tryer) tryWithin(size uint64, pattern int, hang time.Duration) (lt result.LargestTry, made bool) {
	if t.ctx.Err() != nil {
		t.interrupted = true
		return lt, false
	}
	lt = result.LargestTry{SizeBytes: size, PatternBytes: pattern}
	start := time.Now()
	killsBefore, killsErr := t.kills.read()
	e, err := supervise.Run(t.ctx, supervise.Child{Spec: wire.Spec{Kind: wire.KindLargestTry, Library: t.req.Library,
		Largest: &wire.LargestSpec{Platform: t.req.Platform, Device: t.device, Size: size, PatternBytes: pattern, Flags: t.req.Flags}},
		Limits: Limits{Setup: t.req.Setup, Hang: hang}, Groups: t.groups})
	lt.Seconds = time.Since(start).Seconds()
	var a wire.LargestAnswer
	aerr := err
	if err == nil {
		a, aerr = supervise.Answer[wire.LargestAnswer](e)
	}
	switch {
	case aerr == nil:
		lt.Outcome, lt.Code, lt.Call, lt.FillSeconds, lt.WrongAt, lt.Detail = a.Outcome, a.Code, a.Call, a.FillSeconds, a.WrongAt, a.Error
		lt.MappedBesidesBytes, t.mapped = a.MappedBesides, max(t.mapped, a.MappedBesides)
		lt.CreateSeconds = a.CreateSeconds
		if a.HasDeviceUsed && t.usedAtStart == nil {
			used := a.DeviceUsedBefore
			t.usedAtStart = &used
		}
		t.slowestCreate = max(t.slowestCreate, a.CreateSeconds)
		if a.CreateSeconds > 0 && size >= t.createdSize {
			t.createdSeconds, t.createdSize = a.CreateSeconds, size
		}
	case t.ctx.Err() != nil:
		lt.Outcome, lt.Detail, t.interrupted = result.TryInterrupted, "stopped by Ctrl-C after "+time.Since(start).Round(time.Millisecond).String(), true
	case err != nil:
		lt.Outcome, lt.Detail = result.TryCrashed, err.Error()
	case e.Stop == supervise.Hung:
		lt.Outcome, lt.Stage, lt.Detail = result.TryHung, e.Stage.Result(), "no progress for "+hang.Round(100*time.Millisecond).String()+" in "+string(e.Stage.Result())
	case e.Stop == supervise.NotStopped && e.Signal == "SIGKILL" && killsErr == nil:
		lt.Outcome, lt.Detail = t.killed(e, killsBefore)
	case e.Stop != supervise.NotStopped:
		lt.Outcome, lt.Detail = result.TryCrashed, e.Reason
	default:
		lt.Outcome, lt.Detail = result.TryCrashed, supervise.How(aerr)
	}
	if lt.Outcome == result.TryVerified && lt.FillSeconds > 0 {
		t.bandwidth = max(t.bandwidth, float64(size)/lt.FillSeconds)
	}
	return lt, true
}

// killed is how a try whose worker died of SIGKILL ended: the OOM killer's, where the kernel's count of
// OOM kills moved from before during the try (nothing else in the tool sends a worker SIGKILL unasked),
// else a crash by a signal from outside.
func (t *tryer) killed(e *supervise.Ending, before uint64) (result.TryOutcome, string) {
	after, err := t.kills.read()
	if err != nil || after <= before {
		return result.TryCrashed, e.Reason
	}
	detail := fmt.Sprintf("the kernel's OOM killer ended the worker (%s went from %d to %d)", t.kills.source, before, after)
	if t.cgroupLimit > 0 {
		detail += fmt.Sprintf(", in a memory cgroup whose limit is %d MiB", t.cgroupLimit>>20)
	}
	return result.TryOOMKilled, detail
}

// oomKills is a count of the OOM killer's kills and where it is read: the memory cgroup's own count where
// the tool runs in one (the worker runs there too, and a kill elsewhere on the machine does not move it),
// else the machine's.
type oomKills struct {
	read   func() (uint64, error)
	source string
	cgroup *sample.Cgroup // nil: none
}

// oomKillCounter is the count of OOM kills that can tell a try's worker was one: its memory cgroup's
// (memory.events or memory.oom_control) where that can be read, else /proc/vmstat's.
func oomKillCounter(root sample.Root) oomKills {
	k := oomKills{read: root.OOMKills, source: "oom_kill in /proc/vmstat"}
	cg, _ := sample.FindCgroup(root)
	if cg == nil {
		return k
	}
	k.cgroup = cg
	if _, ok := cg.OOMKills(); ok {
		k.source = "its memory cgroup's oom_kill count"
		k.read = func() (uint64, error) {
			if n, ok := cg.OOMKills(); ok {
				return n, nil
			}
			return 0, fmt.Errorf("the memory cgroup %s's oom_kill count could not be read", cg.Path)
		}
	}
	return k
}

// firstTrySize is where the doubling starts.
const firstTrySize = 64 * mib

// searchLargest finds the largest verified size up to bound with one pattern size: it doubles from
// firstTrySize to the bound, trying every step even past a failure (a runtime's element-count limits show
// only there), then bisects between the last verified size below the first failure and that failure, to
// 1 MiB or 1% of the size. bound is read before each try: what a try reports (the address space its
// worker mapped) can lower it, and no try is made above it. try runs one try; it is a fake in tests. The
// search ends where a try was not made or was interrupted: the sizes after it are not tried.
func searchLargest(bound func() uint64, pattern int, try func(size uint64, pattern int) (result.LargestTry, bool)) (uint64, []result.LargestTry) {
	var tries []result.LargestTry
	lo, hi := uint64(0), uint64(0)
	for s := min(uint64(firstTrySize), bound()); s >= mib; s = min(2*s, bound()) {
		t, made := try(s, pattern)
		if made {
			tries = append(tries, t)
		}
		if !made || !t.Outcome.Settled() {
			return lo, tries
		}
		if t.Outcome == result.TryVerified && hi == 0 {
			lo = s
		} else if hi == 0 {
			hi = s
		}
		if s >= bound() {
			break
		}
	}
	if hi == 0 {
		return lo, tries // every step, the bound too, verified
	}
	for hi-lo > max(mib, lo/100) {
		mid := (lo + (hi-lo)/2) &^ (mib - 1)
		if mid <= lo || mid >= hi {
			break
		}
		if mid > bound() {
			hi = mid // above what may be tried: not tried, and no larger size either
			continue
		}
		t, made := try(mid, pattern)
		if made {
			tries = append(tries, t)
		}
		if !made || !t.Outcome.Settled() {
			return lo, tries
		}
		if t.Outcome == result.TryVerified {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, tries
}
