// Package footprint keeps the tool's own process, the parent that holds the results, small enough to live
// within the limits a user's machine sets: an address-space limit (ulimit -v, as HPC sites and Slurm's
// VSizeFactor set) and a memory cgroup (a pod's or a batch job's limit). The workers push the machine to
// failure; the parent must not be the one that fails.
//
// Two things decide the parent's address space besides its own heap. Go's runtime reserves about a
// gigabyte of address space for its page allocator as it starts (mapped, never touched), and glibc gives
// each thread that frees or allocates through it an arena of its own, reserving 64 MiB of address space
// each (up to eight per core): purego runs every Go thread through pthread_create, so each thread the Go
// scheduler makes adds an arena. Once the threads made after main starts share one arena, the parent's
// peak went from 1.85 GiB to 1.57 GiB in the same run (docs/performance.md, "The parent's address space").
// The workers keep glibc's defaults: an OpenCL runtime's speed depends on them, and what they cost is
// what the probe measures.
package footprint

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"syscall"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/ebitengine/purego"
)

// MinAddressSpace is the least address-space limit (RLIMIT_AS) under which the parent documents that it
// runs: Go's runtime reserves about 1.05 GiB as it starts and failed to start in 1 of 30 tries under
// 1.5 GiB, and the arenas and thread stacks come on top. Below it the parent says so and exits before any
// work; far below it (about 1.2 GiB) Go's runtime cannot start at all, before any of this program's code runs.
const MinAddressSpace = 1792 << 20

// mArenaMax is glibc's mallopt parameter M_ARENA_MAX.
const mArenaMax = -8

// Fit prepares this process, the parent, for the limits it runs under: it asks glibc for one malloc arena,
// sets the Go runtime's memory limit from RLIMIT_AS and the memory cgroup (cgroupLimit, 0 for none), unless
// GOMEMLIMIT sets one, and refuses an address-space limit below MinAddressSpace with an error that says
// what to set. Nothing it cannot do (no glibc, no /proc) is an error: those are the limits of a machine the
// parent does not need to fit. root is where its own address space is read.
func Fit(root sample.Root, cgroupLimit uint64) error {
	oneArena()
	as := AddressSpaceLimit()
	if as < MinAddressSpace {
		return fmt.Errorf("the address-space limit is below what the tool needs for itself: ulimit -v is %d KiB; the tool needs at least %d KiB (ulimit -v %d). To see how a runtime does under a lower limit, give it to the workers alone: run --variant NAME:RLIMIT_AS=SIZE",
			as>>10, uint64(MinAddressSpace)>>10, uint64(MinAddressSpace)>>10)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		// VmSize: what this process has mapped so far (0 when it cannot be read: then the whole limit counts).
		own, _ := root.SelfMemory()
		if limit := memoryLimit(as, own.VMS, cgroupLimit); limit > 0 {
			debug.SetMemoryLimit(limit)
		}
	}
	return nil
}

// memoryLimit is the Go memory limit for a parent under an address-space limit as (math.MaxUint64: none)
// that has mapped mapped bytes so far, in a cgroup whose limit is cgroupLimit (0: none): half the room left
// under as, and a quarter of the cgroup's limit (the workers it starts live there too), at least
// leastMemoryLimit; 0 when neither limit is set. The limit is soft: the garbage collector works harder as
// the heap nears it, which keeps the parent's heap from growing into the room of the workers.
func memoryLimit(as, mapped, cgroupLimit uint64) int64 {
	limit := uint64(math.MaxUint64)
	if as != math.MaxUint64 && as > mapped {
		limit = (as - mapped) / 2
	}
	if cgroupLimit > 0 {
		limit = min(limit, cgroupLimit/4)
	}
	if limit == math.MaxUint64 {
		return 0
	}
	return int64(min(max(limit, leastMemoryLimit), math.MaxInt64))
}

// leastMemoryLimit keeps the Go memory limit above what the parent needs for a large merge or trace.
const leastMemoryLimit = 64 << 20

// AddressSpaceLimit is this process's soft RLIMIT_AS, math.MaxUint64 when there is none.
func AddressSpaceLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err != nil || rl.Cur == math.MaxUint64 {
		return math.MaxUint64
	}
	return rl.Cur
}

// oneArena asks glibc for a single malloc arena. Where libc is not glibc (musl has no arenas), or cannot
// be opened, it does nothing.
func oneArena() {
	h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return
	}
	sym, err := purego.Dlsym(h, "mallopt")
	if err != nil {
		return
	}
	var mallopt func(param, value int32) int32
	purego.RegisterFunc(&mallopt, sym)
	mallopt(mArenaMax, 1)
}
