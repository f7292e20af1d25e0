package cl

import (
	"runtime"
	"sync"
)

// hotBlock holds the arguments and out-parameters of the calls that pass through it: the allocation loop's,
// and a queue's or a kernel's own (migrations, kernel arguments, events). It lives pinned (see the package
// comment), so the addresses of its fields can be written into args before a call.
type hotBlock struct {
	// fn, args and ret are the call itself, read and written by the trampoline (hotcall_amd64.s) through
	// the offsets the assembler generates from this type (go_asm.h): keep their names.
	fn          uintptr
	args        [9]uintptr
	ret         uintptr
	status      int32
	u32         uint32    // a kernel argument passed by address
	global      uintptr   // a kernel's global work size, passed by address
	pattern     [128]byte // the fill pattern: up to 128 bytes, the most clEnqueueFillBuffer takes
	patternSize uintptr
	event       Event // an event out-parameter
	// mems is a list of buffers passed by address (a migration's), mems[0] also a kernel argument; wait a
	// wait list.
	mems [listRoom]Mem
	wait [listRoom]Event
}

// listRoom is how many buffers, and how many events, a list passed through a call block may hold: the
// exchange's migrations name two of each at most.
const listRoom = 8

// pinnedBlock is a hotBlock with its pin and the addresses of its fields, taken once when it was pinned.
type pinnedBlock struct {
	*hotBlock
	pin                                                                         runtime.Pinner
	statusAddr, memsAddr, waitAddr, u32Addr, globalAddr, patternAddr, eventAddr uintptr
}

// live are the call blocks not released yet. A Context or Queue dropped without Release (the worker keeps
// its contexts to its exit, as the user's loop does) keeps its block here, reachable: the garbage collector
// never finalizes the block's Pinner, which, still pinning, would panic ("found leaking pinned pointer").
var live struct {
	mu     sync.Mutex
	blocks map[*pinnedBlock]bool
}

func newPinnedBlock() *pinnedBlock {
	b := &pinnedBlock{hotBlock: new(hotBlock)}
	live.mu.Lock()
	if live.blocks == nil {
		live.blocks = map[*pinnedBlock]bool{}
	}
	live.blocks[b] = true
	live.mu.Unlock()
	b.pin.Pin(b.hotBlock)
	h := b.hotBlock
	// The block is pinned: these addresses stay valid until release unpins it.
	b.statusAddr, b.u32Addr = pinnedAddr(&h.status), pinnedAddr(&h.u32)
	b.memsAddr, b.waitAddr = pinnedAddr(&h.mems[0]), pinnedAddr(&h.wait[0])
	b.globalAddr, b.patternAddr, b.eventAddr = pinnedAddr(&h.global), pinnedAddr(&h.pattern[0]), pinnedAddr(&h.event)
	return b
}

// call makes the foreign call fn with the first n arguments of the block and returns what it returned.
func (b *pinnedBlock) call(fn uintptr, n int) uintptr {
	return hotCall(b.hotBlock, fn, n)
}

// eventOut is the event out-parameter argument: the block's event cell, or NULL.
func (b *pinnedBlock) eventOut(want bool) uintptr {
	if want {
		b.event = 0
		return b.eventAddr
	}
	return 0
}

// result turns an enqueue's status into its event or a *CallError.
func (b *pinnedBlock) result(r uintptr, call string, wantEvent bool) (Event, error) {
	if err := check(int32(r), call); err != nil {
		return 0, err
	}
	if wantEvent {
		return b.event, nil
	}
	return 0, nil
}

// release unpins the block and lets it go.
func (b *pinnedBlock) release() {
	b.pin.Unpin()
	live.mu.Lock()
	delete(live.blocks, b)
	live.mu.Unlock()
}
