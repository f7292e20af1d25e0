package cl

import (
	"fmt"
	"syscall"
)

// HostPtr is the address of host memory a buffer is created with (CL_MEM_USE_HOST_PTR's storage,
// CL_MEM_COPY_HOST_PTR's source). It only ever holds memory mapped by MapHost, outside Go's heap: Go
// never moves or frees it, so its address may be kept as a number, unlike a Go pointer (STYLE rule 1).
// 0 is no host pointer.
type HostPtr uintptr

// MapHost maps size bytes of anonymous, page-aligned host memory and writes every page of it with fill,
// as a program writes the data it hands to a buffer, so that the memory is resident and the process's RSS
// shows it. The mapping is never unmapped: like the probe's buffers, it lives until the process exits.
func MapHost(size uint64, fill byte) (HostPtr, error) {
	if size == 0 {
		return 0, fmt.Errorf("mapping host memory: size 0")
	}
	b, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return 0, fmt.Errorf("mapping %d bytes of host memory: %w", size, err)
	}
	page := syscall.Getpagesize()
	for i := 0; i < len(b); i += page {
		b[i] = fill
	}
	b[len(b)-1] = fill
	// The mapping outlives b: the address is of memory the Go runtime does not manage.
	return mappedAddr(b), nil
}
