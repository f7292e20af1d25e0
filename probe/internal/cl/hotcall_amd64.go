package cl

// The allocation loop's calls go through a trampoline of this package (hotcall_amd64.s) rather than
// purego.SyscallN. SyscallN copies 32 integer and 8 float arguments through a sync.Pool into a block its
// trampoline loads in full, whatever the call needs, a large part of a fast runtime's whole clCreateBuffer
// (see docs/performance.md#measurements-behind-comments-in-the-code). The loop's calls take
// at most 9 integer arguments, already sit in a pinned block, and need no errno, so the trampoline loads
// those 9 and nothing else; runtime.cgocall (which purego calls the same way) switches to the system stack
// and tells the scheduler the thread is in C. Other architectures keep SyscallN (hotcall_other.go).

// hotTrampolineABI0 is the address of the trampoline, set in hotcall_amd64.s.
var hotTrampolineABI0 uintptr

// hotCall calls fn with the block's arguments (the first n matter; the C ABI lets a callee ignore the
// rest) and returns its integer result. The block is pinned (see the package comment), so C may keep its
// addresses for the call; cgocall (ptr.go) passes it to the trampoline.
func hotCall(b *hotBlock, fn uintptr, _ int) uintptr {
	b.fn = fn
	cgocall(hotTrampolineABI0, b)
	return b.ret
}
