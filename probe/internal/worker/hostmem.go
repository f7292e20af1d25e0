package worker

import (
	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// hostBlocks hands out the host memory a job's buffers are created with: for use-host-ptr a block of its
// own per buffer (the buffer's storage, never freed, like the buffer), for copy-host-ptr one source block
// that every buffer copies, for other flags none. Blocks are written before they are handed out, as a
// program writes the data it gives a buffer, so the process's RSS holds them from the start.
type hostBlocks struct {
	kind result.HostPtrKind
	size uint64
	// mapHost maps a block (cl.MapHost; a test's counter).
	mapHost func(size uint64, fill byte) (cl.HostPtr, error)
	shared  cl.HostPtr // copy-host-ptr's source, mapped at the first buffer
	// spare are the blocks of buffers an unwind released: a replay gives them again rather than map more.
	spare []cl.HostPtr
}

// blockFill is the byte the tool writes into host blocks: not zero, so that no layer can tell a block from
// untouched memory.
const blockFill = 0xA5

// newHostBlocks is the host memory of flags' buffers, or nil for flags that take none: the loop then asks
// for nothing per buffer (the probe measures that loop).
func newHostBlocks(flags result.MemFlags, size uint64) *hostBlocks {
	if flags.HostPtr() == result.HostPtrNone {
		return nil
	}
	return &hostBlocks{kind: flags.HostPtr(), size: size, mapHost: cl.MapHost}
}

// next is the host pointer of the next buffer: 0 for flags without one.
func (h *hostBlocks) next() (cl.HostPtr, error) {
	switch h.kind {
	case result.HostPtrUse:
		if n := len(h.spare); n > 0 {
			p := h.spare[n-1]
			h.spare = h.spare[:n-1]
			return p, nil
		}
		return h.mapHost(h.size, blockFill)
	case result.HostPtrCopy:
		if h.shared == 0 {
			p, err := h.mapHost(h.size, blockFill)
			if err != nil {
				return 0, err
			}
			h.shared = p
		}
		return h.shared, nil
	}
	return 0, nil
}

// giveBack keeps the block of a buffer that was released, for the next buffer (use-host-ptr only: the
// shared source stays where it is).
func (h *hostBlocks) giveBack(p cl.HostPtr) {
	if h != nil && h.kind == result.HostPtrUse && p != 0 {
		h.spare = append(h.spare, p)
	}
}
