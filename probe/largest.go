package probe

import (
	"context"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/report/result"
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
	// MaxBytes bounds the search (0: the device's memory); HostReserve is what a device whose memory is the
	// host's must leave of the host's available memory.
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
	l := &result.Largest{SchemaVersion: result.SchemaVersion, Kind: result.LargestKind, Command: req.Command,
		Tool: result.Tool{Name: "clmemprobe", Version: req.ToolVersion}, Started: time.Now().UTC().Format(time.RFC3339)}
	if req.Platform < len(inv) {
		l.Platform = inv[req.Platform].Platform
	}
	groups, end := session()
	defer end()
	for _, i := range req.Devices {
		if ctx.Err() != nil {
			break
		}
		if req.Platform >= len(inv) || i >= len(inv[req.Platform].Devices) {
			continue
		}
		d := inv[req.Platform].Devices[i]
		ld := result.LargestDevice{Index: i, Name: d.Name, MaxAllocBytes: d.MaxAllocBytes, GlobalMemBytes: d.GlobalMemBytes,
			BoundBytes: largestBound(d, req, sample.System)}
		t := &tryer{ctx: ctx, req: req, device: i, groups: groups}
		for _, p := range req.Patterns {
			v, tries := searchLargest(ld.BoundBytes, p, t.try)
			ld.Patterns = append(ld.Patterns, result.LargestPattern{PatternBytes: p, LargestVerifiedBytes: v})
			ld.Tries = append(ld.Tries, tries...)
			ld.LargestVerifiedBytes = max(ld.LargestVerifiedBytes, v)
		}
		l.Devices = append(l.Devices, ld)
	}
	return l, ctx.Err()
}

// largestBound is the most the search tries on a device: its global memory (or --max-bytes), and for a
// device whose memory is the host's, no more than the host can spare above its reserve.
func largestBound(d result.Device, req LargestRequest, root sample.Root) uint64 {
	bound := d.GlobalMemBytes
	if req.MaxBytes > 0 {
		bound = min(bound, req.MaxBytes)
	}
	if d.HostUnified {
		if mi, err := root.Meminfo(); err == nil && mi.Available > req.HostReserve {
			bound = min(bound, mi.Available-req.HostReserve)
		}
	}
	return bound &^ (mib - 1)
}

const mib = 1 << 20

// tryer runs tries in workers, and derives each try's hang limit from the fills it has seen.
type tryer struct {
	ctx       context.Context
	req       LargestRequest
	device    int
	groups    *supervise.Groups
	bandwidth float64 // bytes per second of the fastest verified fill so far; 0 before one
}

// The hang limit of a try: four times the fill's expected time at the measured bandwidth, and at least
// minTryHang; before any fill was measured, firstTryHang.
const (
	minTryHang   = 5 * time.Second
	firstTryHang = 30 * time.Second
)

func (t *tryer) hangLimit(size uint64) time.Duration {
	if t.bandwidth <= 0 {
		return firstTryHang
	}
	return max(minTryHang, time.Duration(4*float64(size)/t.bandwidth*float64(time.Second)))
}

// try runs one try and says how it ended.
func (t *tryer) try(size uint64, pattern int) result.LargestTry {
	lt := result.LargestTry{SizeBytes: size, PatternBytes: pattern}
	start := time.Now()
	hang := t.hangLimit(size)
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
	case err != nil:
		lt.Outcome, lt.Detail = result.TryCrashed, err.Error()
	case aerr == nil:
		lt.Outcome, lt.Code, lt.Call, lt.FillSeconds, lt.WrongAt, lt.Detail = a.Outcome, a.Code, a.Call, a.FillSeconds, a.WrongAt, a.Error
	case e.Stop == supervise.Hung:
		lt.Outcome, lt.Detail = result.TryHung, "no progress for "+hang.String()+" in "+string(e.Stage.Result())
	case e.Stop != supervise.NotStopped:
		lt.Outcome, lt.Detail = result.TryCrashed, e.Reason
	default:
		lt.Outcome, lt.Detail = result.TryCrashed, supervise.How(aerr)
	}
	if lt.Outcome == result.TryVerified && lt.FillSeconds > 0 {
		t.bandwidth = max(t.bandwidth, float64(size)/lt.FillSeconds)
	}
	if t.req.OnTry != nil {
		t.req.OnTry(t.device, lt)
	}
	return lt
}

// firstTrySize is where the doubling starts.
const firstTrySize = 64 * mib

// searchLargest finds the largest verified size up to bound with one pattern size: it doubles from
// firstTrySize to the bound, trying every step even past a failure (a runtime's element-count limits show
// only there), then bisects between the last verified size below the first failure and that failure, to
// 1 MiB or 1% of the size. try runs one try; it is a fake in tests.
func searchLargest(bound uint64, pattern int, try func(size uint64, pattern int) result.LargestTry) (uint64, []result.LargestTry) {
	var tries []result.LargestTry
	if bound < mib {
		return 0, nil
	}
	var steps []uint64
	for s := min(uint64(firstTrySize), bound); s < bound; s *= 2 {
		steps = append(steps, s)
	}
	steps = append(steps, bound)
	lo, hi := uint64(0), uint64(0)
	for _, s := range steps {
		t := try(s, pattern)
		tries = append(tries, t)
		if t.Outcome == result.TryVerified && hi == 0 {
			lo = s
		} else if hi == 0 {
			hi = s
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
		t := try(mid, pattern)
		tries = append(tries, t)
		if t.Outcome == result.TryVerified {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, tries
}
