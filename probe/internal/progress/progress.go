// Package progress is the shared-memory cell through which a child tells its parent how far it got. The
// child stores the count of completed steps and its current stage after every step (two plain stores, a
// few nanoseconds); the parent reads them at any time, also after the child crashed or while it hangs inside
// a runtime call, which is how a crash at allocation N is reported with exactly N-1 buffers done. It uses
// unsafe only to view the mapped page as 64-bit words: the one other unsafe boundary of the project besides
// the OpenCL and NVML bindings, kept this small on purpose.
package progress

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

const size = 4096

// Cell is a mapped page shared by parent and child.
type Cell struct {
	mem                              []byte
	count, stage, confirmed          *atomic.Uint64 // the parent's view: atomic loads
	countRaw, stageRaw, confirmedRaw *uint64        // the child's view: plain stores
}

// Create makes the backing file in dir ("" is the system's temporary folder), unlinked at once so nothing
// stays on disk, and maps it. Its page is written, not only sized, so a full file system is an error here
// and not a SIGBUS when the page is first touched. The returned file is handed to the child.
func Create(dir string) (*Cell, *os.File, error) {
	f, err := os.CreateTemp(dir, "clmemprobe-progress-*")
	if err != nil {
		return nil, nil, fmt.Errorf("progress cell: %w", err)
	}
	_ = os.Remove(f.Name())
	if _, err := f.Write(make([]byte, size)); err != nil {
		f.Close()
		where, hint := dir, "free some space there"
		if dir == "" {
			where, hint = os.TempDir(), "free some space there, or point TMPDIR elsewhere"
		}
		return nil, nil, fmt.Errorf("progress cell in %s: %w (%s)", where, err, hint)
	}
	c, err := Map(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return c, f, nil
}

// Map maps an existing cell file (the child's side). A file shorter than the page is refused: touching the
// mapping past its end would be a SIGBUS.
func Map(f *os.File) (*Cell, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("progress cell: %w", err)
	}
	if fi.Size() < size {
		return nil, fmt.Errorf("progress cell: %s holds %d bytes, not the cell's page of %d", f.Name(), fi.Size(), size)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("progress cell: mmap: %w", err)
	}
	return &Cell{
		mem:          mem,
		count:        (*atomic.Uint64)(unsafe.Pointer(&mem[0])),
		stage:        (*atomic.Uint64)(unsafe.Pointer(&mem[8])),
		confirmed:    (*atomic.Uint64)(unsafe.Pointer(&mem[16])),
		countRaw:     (*uint64)(unsafe.Pointer(&mem[0])),
		stageRaw:     (*uint64)(unsafe.Pointer(&mem[8])),
		confirmedRaw: (*uint64)(unsafe.Pointer(&mem[16])),
	}, nil
}

// SetCount records that n steps have completed. It is a plain aligned 64-bit store, single-copy atomic on
// the 64-bit machines Go supports. Its readers are another process and, in the worker, the host guard's
// goroutine, which compares it with the count of finished buffers: a count seen late there makes a reading
// look settled while at most one more buffer is being made, which the guard allows for. An atomic Store
// would add a full barrier (XCHG on amd64) to every allocation of the loop being measured, for nothing.
func (c *Cell) SetCount(n uint64) { *c.countRaw = n }

// SetStage records the stage the child is entering (an index into the caller's own list of stages).
func (c *Cell) SetStage(s uint64) { *c.stageRaw = s }

// SetConfirmed records that n of the counted steps are confirmed, where a child counts steps before it
// knows they succeeded (a batch of buffers whose commands it waits for once): a child that dies between
// lies between the two. It stores n+1, so that 0 means a child that confirms nothing apart from its count.
func (c *Cell) SetConfirmed(n uint64) { *c.confirmedRaw = n + 1 }

// Confirmed returns the last recorded confirmed count; ok is false where the child recorded none.
func (c *Cell) Confirmed() (n uint64, ok bool) {
	v := c.confirmed.Load()
	return v - min(v, 1), v > 0
}

// Count returns the last recorded count.
func (c *Cell) Count() uint64 { return c.count.Load() }

// Stage returns the last recorded stage.
func (c *Cell) Stage() uint64 { return c.stage.Load() }

// Close unmaps the cell.
func (c *Cell) Close() error { return syscall.Munmap(c.mem) }
