package worker

import (
	"errors"
	"fmt"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// readBack is how much of each end of a tried buffer is read back: a page.
const readBack = 4096

// largestTry is the child of one try of `largest`: one buffer, one fill, its first and last page read
// back and compared with the pattern. A runtime that hangs in the fill is ended by the parent's hang limit,
// one that crashes takes only this process.
func (c *child) largestTry() *wire.LargestAnswer {
	s := c.spec.Largest
	if s == nil || s.Size == 0 || s.PatternBytes <= 0 || s.PatternBytes > 128 || s.Size%uint64(s.PatternBytes) != 0 {
		return &wire.LargestAnswer{Outcome: result.TrySetup, Error: "no valid try in the spec"}
	}
	_, devs, err := c.inventory()
	if err != nil {
		return &wire.LargestAnswer{Outcome: result.TrySetup, Error: err.Error()}
	}
	if s.Platform >= len(devs) || s.Device >= len(devs[s.Platform]) {
		return &wire.LargestAnswer{Outcome: result.TrySetup, Error: fmt.Sprintf("device %d of platform %d is gone", s.Device, s.Platform)}
	}
	dev := devs[s.Platform][s.Device]
	ctx, err := c.lib.CreateContext([]*cl.Device{dev}, 0)
	if err != nil {
		return &wire.LargestAnswer{Outcome: result.TrySetup, Error: err.Error()}
	}
	defer ctx.Release()
	q, err := ctx.CreateQueue(dev, false)
	if err != nil {
		return &wire.LargestAnswer{Outcome: result.TrySetup, Error: err.Error()}
	}
	defer q.Release()
	used, hasUsed := deviceUsed(dev, s.Device)
	c.cell.SetStage(wire.StageCreate)
	created := time.Now()
	m, err := ctx.CreateBuffer(s.Flags, s.Size, 0)
	createSeconds := time.Since(created).Seconds()
	if err != nil {
		a := failedAt(result.TryRefused, err)
		a.CreateSeconds, a.DeviceUsedBefore, a.HasDeviceUsed = createSeconds, used, hasUsed
		return a
	}
	defer func() { _ = ctx.ReleaseMem(m) }()
	pattern := fillPattern(s.PatternBytes)
	c.cell.SetStage(wire.StageTouch)
	start := time.Now()
	if err := q.FillWith(m, pattern, s.Size); err != nil {
		return failedAt(result.TryFailed, err)
	}
	c.cell.SetStage(wire.StageFinish)
	if err := q.Finish(); err != nil {
		return failedAt(result.TryFailed, err)
	}
	a := &wire.LargestAnswer{Outcome: result.TryVerified, FillSeconds: time.Since(start).Seconds(), CreateSeconds: createSeconds,
		DeviceUsedBefore: used, HasDeviceUsed: hasUsed}
	page := make([]byte, min(readBack, s.Size))
	for _, off := range []uint64{0, s.Size - uint64(len(page))} {
		clear(page)
		if _, err := q.Read(m, off, page, nil, false); err != nil {
			return failedAt(result.TryFailed, err)
		}
		if at, ok := firstWrong(page, pattern, off); !ok {
			a.Outcome, a.WrongAt = result.TryWrong, at
			return a
		}
	}
	// What the worker mapped besides the buffer, for the parent to keep later tries within an address-space
	// limit.
	if own, err := sample.System.SelfMemory(); err == nil && own.VMPeak > s.Size {
		a.MappedBesides = own.VMPeak - s.Size
	}
	return a
}

// deviceUsed reads the device's memory in use through the run's device sampler (NVML, the vendor's free
// memory query, ...); ok is false where none applies to the device.
func deviceUsed(dev *cl.Device, index int) (uint64, bool) {
	samp, err := sample.DeviceSamplerFor(sample.TargetsFor([]*cl.Device{dev}, []int{index}), sample.System)
	if err != nil || samp == nil {
		return 0, false
	}
	read, err := samp.Read()
	if err != nil {
		return 0, false
	}
	for _, d := range read {
		if d.Device == index {
			return d.UsedBytes, true
		}
	}
	return 0, false
}

// fillPattern is a pattern of n bytes none of which is 0 and that differs from its own shifts, so that a
// fill that stopped short, or wrote elements at the wrong places, shows in a page read back.
func fillPattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(0x5a + 37*i)
		if p[i] == 0 {
			p[i] = 0xff
		}
	}
	return p
}

// firstWrong checks a page read back from offset off against the pattern: the offset of the first byte
// that differs, and false, or true where every byte holds the fill's.
func firstWrong(page, pattern []byte, off uint64) (uint64, bool) {
	n := uint64(len(pattern))
	for i, b := range page {
		if o := off + uint64(i); b != pattern[o%n] {
			return o, false
		}
	}
	return 0, true
}

// failedAt is a try that a call ended with an error: its code and call.
func failedAt(outcome result.TryOutcome, err error) *wire.LargestAnswer {
	a := &wire.LargestAnswer{Outcome: outcome, Error: err.Error()}
	var ce *cl.CallError
	if errors.As(err, &ce) {
		a.Code, a.Call = int32(ce.Status), ce.Call
	}
	return a
}
