package worker

import (
	"os"
	"syscall"
)

// The Go runtime maps memory for itself as it runs (a growing heap, its own metadata) and cannot go on
// where mmap fails: "fatal error: runtime: cannot allocate memory". A runtime that maps a region per buffer
// ends the loop at vm.max_map_count, where no mapping is left for anyone; the worker, which must still take
// the last sample and send its answer, died there about one run in five (the Go runtime's sweeper, mid-way
// through the last sample). So the worker holds a few mappings through the loop and gives them back the
// moment the loop ends: the room it reports in. Held, they count toward the limit, as a program's own code
// and libraries do; the readings taken after they are given back count them (mapReserve.given), so the
// mappings reported at the end are those the process held when the loop ended.

// mapReservePages is how many pages of the reserve are made readable: each splits the region, so the
// reserve holds 2*mapReservePages+1 mappings (129, 0.2% of Linux's default vm.max_map_count) and no memory
// (nothing is ever written to it).
const mapReservePages = 64

// mapReserve is a region of alternating protections: one mapping per run of pages alike.
type mapReserve struct {
	mem   []byte
	held  uint64 // the mappings it holds
	given uint64 // the mappings it gave back
}

// holdMappings maps the reserve; where that fails (no room: the limit is already near), it holds none.
func holdMappings(pages int) *mapReserve {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, (2*pages+1)*page, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		return &mapReserve{}
	}
	r := &mapReserve{mem: mem, held: 1}
	for i := 1; i < 2*pages; i += 2 {
		if syscall.Mprotect(mem[i*page:(i+1)*page], syscall.PROT_READ) != nil {
			break
		}
		r.held += 2 // one mapping split in three
	}
	return r
}

// giveBack unmaps the reserve: what the process held with it is counted in given from then on.
func (r *mapReserve) giveBack() {
	if r == nil || r.mem == nil {
		return
	}
	if syscall.Munmap(r.mem) == nil {
		r.mem, r.given, r.held = nil, r.held, 0
	}
}
