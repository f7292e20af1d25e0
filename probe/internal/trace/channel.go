// Package trace is the tool's side of `clmemprobe trace`: the interception layer's C source (built on first
// use into the user's cache), the shared-memory channel the layer writes into, and the supervised run of the
// user's program that drains it. The program's side is the layer itself (layer/clmemprobe_layer.c); the
// layout of the channel is defined there and mirrored here, held together by a test that compiles both.
//
// Like the progress cell, it uses unsafe only to view the mapped channel as its Go types.
package trace

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The channel's constants, as the layer defines them.
const (
	magic       = 0x31435254504d4c43 // "CLMPTRC1"
	version     = 2
	maxContexts = 128
	maxDevices  = 64
	ctxDevices  = 16
	shards      = 32
	nameBytes   = 64
	pciBytes    = 16
	// ringRecords is the ring's capacity: 4 MiB of 64-byte records, drained every few milliseconds, holds
	// tens of milliseconds of the fastest create loop (PoCL makes a 1 KiB buffer in a quarter microsecond).
	ringRecords = 1 << 16
)

// Record kinds, as the layer writes them.
const (
	kindContext        = 1
	kindBuffer         = 2
	kindSubBuffer      = 3
	kindBufferProps    = 4
	kindReleaseMem     = 5
	kindReleaseContext = 6
	kindEnqueue        = 7
)

// Mechanism bits: which way the layer was loaded when it recorded.
const (
	mechLayer   = 1
	mechPreload = 2
)

// record is struct tr_record.
type record struct {
	Commit, TimeNS, Index, Size, Flags, Object uint64
	Context, Kind                              uint32
	Code                                       int32
	Aux                                        uint32
}

// devSlot is struct tr_device.
type devSlot struct {
	Handle                    uint64
	State, _                  uint32
	Type, GlobalMem, MaxAlloc uint64
	Name                      [nameBytes]byte
	PCIBusID                  [pciBytes]byte // "dddd:bb:dd.f", NUL-terminated; empty where the runtime does not tell
}

// ctxSlot is struct tr_context.
type ctxSlot struct {
	Handle                              uint64
	State, NDev                         uint32
	Devices                             [ctxDevices]uint32
	CreatedIndex, CreatedNS, ReleasedNS uint64
	SubBuffers, Failures                uint64
}

// contextView is a context slot with its live buffers and bytes, summed over the shards.
type contextView struct {
	ctxSlot
	LiveBuffers, LiveBytes uint64
}

// shard is struct tr_shard: one thread's counters.
type shard struct {
	Seq         uint64
	LiveBuffers [maxContexts]uint64
	LiveBytes   [maxContexts]uint64
	_           [7]uint64
}

// header is struct tr_header.
type header struct {
	Magic                                  uint64
	Version, HeaderSize, RecordSize, Ring  uint32
	MaxContexts, MaxDevices                uint32
	Mechanism, OwnerPID, OtherProcesses, _ uint32
	StartNS, _                             uint64
	ShardsUsed, Head                       uint64 // the program's cache line, at 64
	CreatesFailed, EnqueuesFailed          uint64
	Releases, Dropped                      uint64
	ContextsUntracked, DevicesUntracked    uint64
	Tail                                   uint64 // the tool's, at 128
	_                                      [7]uint64
	FirstState, FirstContextCount          uint32
	First                                  record
	FirstLiveBuffers, FirstLiveBytes       [maxContexts]uint64
	Devices                                [maxDevices]devSlot
	Contexts                               [maxContexts]ctxSlot
	Shards                                 [shards]shard
}

const (
	headerSize = int(unsafe.Sizeof(header{}))
	recordSize = int(unsafe.Sizeof(record{}))
	totalSize  = headerSize + ringRecords*recordSize
)

// Channel is the shared memory one traced program writes into.
type Channel struct {
	file *os.File
	mem  []byte
	h    *header
	ring []record
	tail uint64
	lost uint64 // reserved positions never committed (the program died while writing them)
}

// NewChannel makes the channel: a memfd, its pages reserved now (fallocate) so that a full memory is an
// error here and never a SIGBUS in the program, mapped, with the header written; its start time is the
// tool's CLOCK_MONOTONIC_COARSE reading, the origin of the records' times.
func NewChannel() (*Channel, error) {
	fd, err := unix.MemfdCreate("clmemprobe-trace", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("trace channel: memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "clmemprobe-trace")
	if err := unix.Fallocate(fd, 0, 0, int64(totalSize)); err != nil {
		f.Close()
		return nil, fmt.Errorf("trace channel: reserving %d bytes: %w", totalSize, err)
	}
	mem, err := unix.Mmap(fd, 0, totalSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("trace channel: mmap: %w", err)
	}
	c := &Channel{file: f, mem: mem}
	c.h = (*header)(unsafe.Pointer(&mem[0]))
	c.ring = unsafe.Slice((*record)(unsafe.Pointer(&mem[headerSize])), ringRecords)
	h := c.h
	h.Version, h.HeaderSize, h.RecordSize, h.Ring = version, uint32(headerSize), uint32(recordSize), ringRecords
	h.MaxContexts, h.MaxDevices = maxContexts, maxDevices
	h.StartNS = Now()
	// The magic last: a layer that maps the channel sees either nothing it accepts or all of the header.
	atomic.StoreUint64(&h.Magic, magic)
	return c, nil
}

// Now is CLOCK_MONOTONIC_COARSE in nanoseconds, the clock of the records.
func Now() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC_COARSE, &ts)
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}

// File is the descriptor to hand to the program (as an inherited descriptor, named in CLMEMPROBE_TRACE_FD).
func (c *Channel) File() *os.File { return c.file }

// Close unmaps the channel and closes its descriptor.
func (c *Channel) Close() error {
	err := unix.Munmap(c.mem)
	return errors.Join(err, c.file.Close())
}

// drain hands every committed record after the last one read to fn, in ring order, and tells the layer how
// far it read. With final (the program has ended) a reserved slot that was never committed is skipped and
// counted lost instead of waited for: its writer is gone.
func (c *Channel) drain(final bool, fn func(*record)) {
	head := atomic.LoadUint64(&c.h.Head)
	// One clock read per drain: records read together were made within one drain period (2 ms), finer than
	// the coarse clock the layer stamps its failures with, and a read per record was a system call each (the
	// profile of a 1,000,000-create trace had 4% of all samples there).
	now := uint64(0)
	for c.tail < head {
		r := &c.ring[c.tail%ringRecords]
		if atomic.LoadUint64(&r.Commit) != c.tail+1 {
			if !final {
				break
			}
			c.lost++
		} else {
			cp := *r
			if cp.TimeNS == 0 {
				if now == 0 {
					now = Now()
				}
				cp.TimeNS = now // a create that succeeded: its time is when it is read
			}
			fn(&cp)
		}
		c.tail++
	}
	atomic.StoreUint64(&c.h.Tail, c.tail)
}

// counters is a consistent-enough reading of the header's counters: each is exact, read atomically.
type counters struct {
	mechanism, ownerPID, otherProcesses       uint32
	seq, createsFailed, enqueuesFailed, drops uint64
	contextsUntracked, devicesUntracked       uint64
}

func (c *Channel) counters() counters {
	h := c.h
	return counters{
		mechanism: atomic.LoadUint32(&h.Mechanism), ownerPID: atomic.LoadUint32(&h.OwnerPID),
		otherProcesses: atomic.LoadUint32(&h.OtherProcesses),
		seq:            c.calls(),
		createsFailed:  atomic.LoadUint64(&h.CreatesFailed), enqueuesFailed: atomic.LoadUint64(&h.EnqueuesFailed),
		drops: atomic.LoadUint64(&h.Dropped), contextsUntracked: atomic.LoadUint64(&h.ContextsUntracked),
		devicesUntracked: atomic.LoadUint64(&h.DevicesUntracked),
	}
}

// firstFailure is the header's first failure with every context's live buffers and bytes at that moment,
// or false when none was written (completely).
func (c *Channel) firstFailure() (record, []uint64, []uint64, bool) {
	if atomic.LoadUint32(&c.h.FirstState) != 2 {
		return record{}, nil, nil, false
	}
	n := min(int(c.h.FirstContextCount), maxContexts)
	return c.h.First, append([]uint64(nil), c.h.FirstLiveBuffers[:n]...), append([]uint64(nil), c.h.FirstLiveBytes[:n]...), true
}

// calls is the program's allocation calls so far, over every thread's shard.
func (c *Channel) calls() uint64 {
	var n uint64
	for i := range c.h.Shards {
		n += atomic.LoadUint64(&c.h.Shards[i].Seq)
	}
	return n
}

// contextSlot is a ready context slot (1-based) as the header holds it now, with its live buffers and bytes
// summed over the shards (modulo 2^64: a shard whose thread released another's buffers holds less than 0).
func (c *Channel) contextSlot(slot uint32) (contextView, bool) {
	if slot == 0 || slot > maxContexts {
		return contextView{}, false
	}
	s := &c.h.Contexts[slot-1]
	if atomic.LoadUint32(&s.State) != 2 {
		return contextView{}, false
	}
	out := contextView{ctxSlot: *s}
	for i := range c.h.Shards {
		out.LiveBuffers += atomic.LoadUint64(&c.h.Shards[i].LiveBuffers[slot-1])
		out.LiveBytes += atomic.LoadUint64(&c.h.Shards[i].LiveBytes[slot-1])
	}
	return out, true
}

// deviceSlot is a ready device slot (1-based).
func (c *Channel) deviceSlot(slot uint32) (devSlot, bool) {
	if slot == 0 || slot > maxDevices {
		return devSlot{}, false
	}
	s := &c.h.Devices[slot-1]
	if atomic.LoadUint32(&s.State) != 2 {
		return devSlot{}, false
	}
	return *s, true
}
