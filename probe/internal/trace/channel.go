// Package trace is the tool's side of `clmemprobe trace`: the interception layer's C source (built on first
// use into the user's cache), the shared-memory channel the layer writes into, and the supervised run of the
// user's program that drains it. The program's side is the layer itself (layer/clmemprobe_layer.c); the
// layout of the channel is defined there and mirrored here, held together by a test that compiles both.
//
// Like the progress cell, it uses unsafe only to view the mapped channel as its Go types.
package trace

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"unsafe"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"golang.org/x/sys/unix"
)

// The channel's constants, as the layer defines them.
const (
	magic       = 0x31435254504d4c43 // "CLMPTRC1"
	version     = 6
	maxContexts = 128
	maxDevices  = 64
	ctxDevices  = 16
	shards      = 32
	nameBytes   = 64
	pciBytes    = 16
	maxLibs     = 8
	libBytes    = 240
	maxSites    = 1024 // the ledger's call sites
	siteFrames  = 16   // program frames kept per site
	maxObjects  = 128  // objects (the program, its libraries) the sites' frames are in
	objBytes    = 192
	buildIDMax  = 28
	// ringRecords is each ring's capacity: 4 MiB of 64-byte records, drained every few milliseconds, holds
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
	kindEnqueue        = 7 // a failed command
	kindIssue          = 8 // a command as the program makes it, before the runtime has it (only with a call log)
)

// A failed command's buffer, as the layer writes it (0: not known).
const (
	bufferNewest = 1 // its thread's newest memory object
	bufferOlder  = 2
)

// Mechanism bits: which way the layer was loaded when it recorded.
const (
	mechLayer   = 1
	mechPreload = 2
)

// What a mapped OpenCL library is, as the layer notes it.
const (
	libLoader  = 1 // an ICD loader
	libRuntime = 2 // a vendor runtime (an ICD)
)

// libSlot is struct tr_library: an OpenCL library a process of the program mapped.
type libSlot struct {
	State, Kind uint32
	Name        [libBytes]byte // NUL-terminated
	_           uint64
}

// What an object a site's frame is in is, as the layer notes it (besides libLoader, libRuntime).
const (
	objProgram = 0 // the program or a library of its own
	objSelf    = 3 // the layer
)

// What a site allocates, as the layer writes it.
const (
	allocBuffer = 1
	allocImage  = 2
	allocSVM    = 3
)

// Site flags, as the layer writes them.
const (
	siteUnwound   = 1 // the unwinder read the stack past the layer's entry
	siteTruncated = 2 // the program's frames went on past siteFrames
)

// objSlot is struct tr_object: an object a frame of a site is in.
type objSlot struct {
	State, Kind  uint32
	Base, Lo, Hi uint64
	BuildIDLen   uint32 // the object's GNU build ID as mapped (0: none)
	BuildID      [buildIDMax]byte
	Name         [objBytes]byte // NUL-terminated
}

// siteSlot is struct tr_site: a call site in a context and what its buffers came to, in weights (a sampled
// buffer stands for more than one).
type siteSlot struct {
	State, Context, Depth, Flags           uint32
	Hash                                   uint64
	PCs                                    [siteFrames]uint64
	Objects                                [siteFrames]uint16
	Attributed, ReleasedAttributed, Scaled uint64
	Created, CreatedBytes                  float64
	Released, ReleasedBytes                float64
	Live, LiveBytes, PeakBytes             float64
	FirstLive, FirstLiveBytes              float64
	Alloc                                  uint32 // allocBuffer, allocImage, allocSVM
	_                                      uint32
	_                                      [4]uint64
}

// record is struct tr_record: a call, or in the fast ring a run of identical calls (Count of them).
type record struct {
	Commit, Count, Size, Flags uint64
	After, AfterCount          uint64 // in the shared ring: the fast ring's run its thread saw open, and its count then
	Context, Kind              uint32
	Code                       int32
	Aux                        uint32
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
	Magic                                 uint64
	Version, HeaderSize, RecordSize, Ring uint32
	MaxContexts, MaxDevices               uint32
	Mechanism, OwnerPID, OtherProcesses   uint32
	LogCalls                              uint32 // the tool keeps a call log: the layer records every command as it is made
	StartNS, DevicesUntracked             uint64
	FastHead, FastDropped                 uint64 // the fast thread's cache line, at 64
	_                                     [6]uint64
	ShardsUsed, Head                      uint64 // the other threads' line, at 128
	CreatesFailed, EnqueuesFailed         uint64
	Releases, Dropped                     uint64
	ContextsUntracked, _                  uint64
	Tail, FastTail                        uint64 // the tool's, at 192
	_                                     [6]uint64
	FirstState, FirstContextCount         uint32
	FirstIndex, FirstTimeNS               uint64
	FirstBufferBytes                      uint64
	FirstBuffer, _                        uint32 // bufferNewest, bufferOlder or 0
	First                                 record
	FirstLiveBuffers, FirstLiveBytes      [maxContexts]uint64
	Devices                               [maxDevices]devSlot
	Contexts                              [maxContexts]ctxSlot
	Shards                                [shards]shard
	// What the layer learnt of the program's OpenCL, off the create path.
	LayerInits, LoadersUntraced uint32
	ResolvedByMap, Unresolved   uint32
	LibrariesMore               uint32
	_                           [11]uint32
	Libraries                   [maxLibs]libSlot
	// The ledger: the tool sets Ledger, LedgerRate and LedgerWhole before the program starts.
	Ledger, ObjectsMore         uint32
	LedgerRate, LedgerWhole     uint64
	SitesFull, LiveFull         uint64
	StacksUnwound, StacksCached uint64
	_                           [9]uint64
	Objects                     [maxObjects]objSlot
	Sites                       [maxSites]siteSlot
}

const (
	headerSize = int(unsafe.Sizeof(header{}))
	recordSize = int(unsafe.Sizeof(record{}))
	totalSize  = headerSize + 2*ringRecords*recordSize
)

// Channel is the shared memory one traced program writes into: after the header, the fast ring (the first
// thread that records writes it alone) and the shared ring (every other thread).
type Channel struct {
	file     *os.File
	mem      []byte
	h        *header
	fast     []record
	ring     []record
	tail     uint64 // shared ring positions read
	fastTail uint64 // fast ring runs read whole
	fastDone uint64 // calls of the run at fastTail already handed out (the run was open when read)
	lost     uint64 // reserved positions never committed (the program died while writing them)
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
	c.fast = unsafe.Slice((*record)(unsafe.Pointer(&mem[headerSize])), ringRecords)
	c.ring = unsafe.Slice((*record)(unsafe.Pointer(&mem[headerSize+ringRecords*recordSize])), ringRecords)
	h := c.h
	h.Version, h.HeaderSize, h.RecordSize, h.Ring = version, uint32(headerSize), uint32(recordSize), ringRecords
	h.MaxContexts, h.MaxDevices = maxContexts, maxDevices
	h.StartNS = Now()
	// The magic last: a layer that maps the channel sees either nothing it accepts or all of the header.
	atomic.StoreUint64(&h.Magic, magic)
	return c, nil
}

// Ledger asks the layer to attribute the program's buffers to their call sites: one by one from whole bytes
// up, sampled by bytes below (a mean of rate bytes between samples; 0: every buffer).
func (c *Channel) Ledger(rate, whole uint64) {
	c.h.LedgerRate, c.h.LedgerWhole = rate, whole
	atomic.StoreUint32(&c.h.Ledger, 1)
}

// LogCalls asks the layer to record every command as the program makes it (trace --calls), before the
// program starts: without a call log those records would only cost the program time.
func (c *Channel) LogCalls() { atomic.StoreUint32(&c.h.LogCalls, 1) }

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

// drain hands every committed record after the last ones read to fn, in one order of both rings, and tells
// the layer how far it read. A shared-ring record comes after the fast ring's calls its thread had seen
// counted (its After and AfterCount) and before the rest, so a call one thread made after seeing another's
// result comes after it. The fast ring's open run is handed out as far as it has counted, the rest of it
// later. A shared slot reserved but not committed yet holds back the shared records after it and the fast
// calls not handed out before it: one of those records may have been committed before one of those calls
// was made. With final (the program has ended) such a slot is skipped and counted lost instead of waited
// for: its writer is gone. Positions are read from memory the program writes: none is taken to be more
// than a ring ahead of what was read, so a program that wrote over them costs one ring's reading, not a
// hang.
func (c *Channel) drain(final bool, fn func(*record)) {
	// How far the fast ring has come, read first: a shared record that one of those calls came after was
	// committed before it, so it is in the shared ring as read next, and is handed out first.
	fastHead := min(atomic.LoadUint64(&c.h.FastHead), c.fastTail+ringRecords)
	fastCount := c.openCount(fastHead)
	head := min(atomic.LoadUint64(&c.h.Head), c.tail+ringRecords)
	for c.tail < head {
		r := &c.ring[c.tail%ringRecords]
		if atomic.LoadUint64(&r.Commit) != c.tail+1 {
			if !final {
				c.publish()
				return
			}
			c.lost++
		} else {
			cp := *r
			c.drainFast(cp.After, cp.AfterCount, fn)
			fn(&cp)
		}
		c.tail++
	}
	c.drainFast(fastHead, fastCount, fn)
	c.publish()
}

// publish tells the layer how far the tool has read both rings.
func (c *Channel) publish() {
	atomic.StoreUint64(&c.h.FastTail, c.fastTail)
	atomic.StoreUint64(&c.h.Tail, c.tail)
}

// drainFast hands the fast ring's calls before a point: the runs before run, which have ended, and the first
// count calls of run (as many as it has counted, at most). A run more than a ring ahead (a record the
// program wrote over) is taken as one ring ahead.
func (c *Channel) drainFast(run, count uint64, fn func(*record)) {
	run = min(run, c.fastTail+ringRecords)
	for c.fastTail < run {
		c.handRun(math.MaxUint64, fn)
		c.fastTail, c.fastDone = c.fastTail+1, 0
	}
	if run == c.fastTail {
		c.handRun(count, fn)
	}
}

// openCount is the count of the run at position run where that slot holds it (it is open, or has ended), else
// 0 (it has not opened).
func (c *Channel) openCount(run uint64) uint64 {
	r := &c.fast[run%ringRecords]
	if atomic.LoadUint64(&r.Commit) != run+1 {
		return 0
	}
	return atomic.LoadUint64(&r.Count)
}

// handRun hands the calls of the run at fastTail not handed out yet, up to its first upTo.
func (c *Channel) handRun(upTo uint64, fn func(*record)) {
	r := &c.fast[c.fastTail%ringRecords]
	if atomic.LoadUint64(&r.Commit) != c.fastTail+1 {
		return // not opened yet, or (a run that ended) a slot the program wrote over
	}
	cp := *r
	cp.Count = min(atomic.LoadUint64(&r.Count), upTo)
	if cp.Count <= c.fastDone {
		return
	}
	cp.Count, c.fastDone = cp.Count-c.fastDone, cp.Count
	fn(&cp)
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
		drops: atomic.LoadUint64(&h.Dropped) + atomic.LoadUint64(&h.FastDropped), contextsUntracked: atomic.LoadUint64(&h.ContextsUntracked),
		devicesUntracked: atomic.LoadUint64(&h.DevicesUntracked),
	}
}

// failure is the header's first failure: the call, the allocation calls before it, its time, and every
// context's live buffers and bytes at that moment.
type failure struct {
	record
	index, timeNS  uint64
	buffer         uint32 // bufferNewest, bufferOlder or 0 (not known)
	bufferBytes    uint64
	buffers, bytes []uint64
}

// firstFailure is the header's first failure, or false when none was written (completely).
func (c *Channel) firstFailure() (failure, bool) {
	if atomic.LoadUint32(&c.h.FirstState) != 2 {
		return failure{}, false
	}
	n := min(int(c.h.FirstContextCount), maxContexts)
	return failure{record: c.h.First, index: c.h.FirstIndex, timeNS: c.h.FirstTimeNS, buffer: c.h.FirstBuffer, bufferBytes: c.h.FirstBufferBytes,
		buffers: append([]uint64(nil), c.h.FirstLiveBuffers[:n]...), bytes: append([]uint64(nil), c.h.FirstLiveBytes[:n]...)}, true
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

// reach is what the layer learnt of the program's OpenCL off the create path: the loaders that took the
// layer, the ones that did not, how the preloaded exports found their real entries, and the OpenCL
// libraries the program's processes mapped.
type reach struct {
	layerInits, loadersUntraced, resolvedByMap, unresolved, librariesMore uint32
	libraries                                                             []result.TraceLibrary
}

func (c *Channel) reach() reach {
	h := c.h
	r := reach{layerInits: atomic.LoadUint32(&h.LayerInits), loadersUntraced: atomic.LoadUint32(&h.LoadersUntraced),
		resolvedByMap: atomic.LoadUint32(&h.ResolvedByMap), unresolved: atomic.LoadUint32(&h.Unresolved),
		librariesMore: atomic.LoadUint32(&h.LibrariesMore)}
	for i := range h.Libraries {
		l := &h.Libraries[i]
		if atomic.LoadUint32(&l.State) != 2 {
			continue
		}
		kind := result.LibraryLoader
		if l.Kind == libRuntime {
			kind = result.LibraryRuntime
		}
		name, _, _ := bytes.Cut(l.Name[:], []byte{0})
		r.libraries = append(r.libraries, result.TraceLibrary{Path: string(name), Kind: kind})
	}
	return r
}
