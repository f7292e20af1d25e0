package cl

import (
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// This file is the package's one boundary for pointers (STYLE.md, rule 1): every Go pointer the package
// hands to C, and every address of C memory it reads, is converted here and nowhere else. The rest of the
// package passes Go values (a pointer to an out-parameter, a slice, a string) to the functions below, which
// are named after the C function they call and take its arguments in its order (a list and its length as
// one slice). The allocation loop's way into C on amd64 is here too (cgocall): its //go:linkname is allowed
// only in a file that imports unsafe.
//
// The rule: a Go pointer stays an unsafe.Pointer until the purego.SyscallN call expression that passes it
// to C, where it becomes a uintptr. SyscallN is marked //go:uintptrescapes, so the compiler moves what such
// a pointer points to onto the heap and keeps it alive for the call: a goroutine stack that grows (and is
// copied) on the way into C cannot leave C writing into the old copy. That holds only for a conversion
// written among SyscallN's own arguments (not one made before, nor one inside a slice passed with ...), so
// each call that passes a Go pointer has its own SyscallN expression here, and a helper that finds the
// pointer to pass (listPtr) returns an unsafe.Pointer, never a uintptr.
//
// Two kinds of memory never move, and only their addresses are numbers before a call: Go memory pinned with
// a runtime.Pinner (pinnedAddr; the call blocks of hotblock.go keep such addresses in their argument arrays),
// and memory mapped outside Go's heap (mappedAddr, for MapHost).

// pinnedAddr is the address of *p, which the caller has pinned with a runtime.Pinner and keeps pinned for as
// long as the address is used.
func pinnedAddr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// listPtr is a list argument's pointer: its first element, or NULL for an empty list (as OpenCL wants an
// empty wait list).
func listPtr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// Sizes of the kernel arguments a call block passes by address.
const (
	memArgSize    = unsafe.Sizeof(Mem(0))
	uint32ArgSize = unsafe.Sizeof(uint32(0))
)

// runtime_cgocall calls fn(arg) on the system stack with the C calling convention. The runtime exports it
// for this use (its comment names purego, go.dev/issue/67401).
//
//go:linkname runtime_cgocall runtime.cgocall
func runtime_cgocall(fn uintptr, arg unsafe.Pointer) int32

// cgocall calls the trampoline fn with the block b as its one argument (hotcall_amd64.go). b is pinned, and
// its address is converted in the call expression.
func cgocall(fn uintptr, b *hotBlock) { runtime_cgocall(fn, unsafe.Pointer(b)) }

// mappedAddr is the address of b's first byte, where b is memory mapped outside Go's heap (MapHost): Go
// never moves or frees it, so it may be kept as a number.
func mappedAddr(b []byte) HostPtr { return HostPtr(unsafe.Pointer(&b[0])) }

// goStringFromC copies a NUL-terminated C string of at most 64 KiB; used only for callback arguments.
func goStringFromC(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for n < 1<<16 && *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// nulTerminated is s as a C string.
func nulTerminated(s string) []byte { return append([]byte(s), 0) }

// clGetPlatformIDs writes up to len(ids) platforms into ids and their number into n (either may be nil).
func clGetPlatformIDs(fn uintptr, ids []uintptr, n *uint32) int32 {
	r, _, _ := purego.SyscallN(fn, uintptr(len(ids)), uintptr(listPtr(ids)), uintptr(unsafe.Pointer(n)))
	return int32(r)
}

// clGetDeviceIDs writes up to len(ids) devices of the platform into ids and their number into n (either may
// be nil).
func clGetDeviceIDs(fn, platform uintptr, deviceType uint64, ids []uintptr, n *uint32) int32 {
	r, _, _ := purego.SyscallN(fn, platform, uintptr(deviceType), uintptr(len(ids)), uintptr(listPtr(ids)), uintptr(unsafe.Pointer(n)))
	return int32(r)
}

// clGetInfo is a clGet*Info call whose leading argument is one handle (clGetPlatformInfo,
// clGetDeviceInfo): the value into value (nil: not asked), its size into sizeRet (nil: not asked).
func clGetInfo(fn, h uintptr, param uint32, value []byte, sizeRet *uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, h, uintptr(param), uintptr(len(value)), uintptr(listPtr(value)), uintptr(unsafe.Pointer(sizeRet)))
	return int32(r)
}

// clGetInfo2 is clGetInfo for entry points with two leading handles (clGetProgramBuildInfo).
func clGetInfo2(fn, h1, h2 uintptr, param uint32, value []byte, sizeRet *uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, h1, h2, uintptr(param), uintptr(len(value)), uintptr(listPtr(value)), uintptr(unsafe.Pointer(sizeRet)))
	return int32(r)
}

// clCreateContext makes a context over devices with the 0-terminated property list props; notify is the
// callback, userData what it is given.
func clCreateContext(fn uintptr, props, devices []uintptr, notify, userData uintptr, status *int32) uintptr {
	r, _, _ := purego.SyscallN(fn, uintptr(listPtr(props)), uintptr(len(devices)), uintptr(listPtr(devices)), notify, userData,
		uintptr(unsafe.Pointer(status)))
	return r
}

// clCreateCommandQueue makes a queue on dev with the property bits props.
func clCreateCommandQueue(fn, ctx, dev, props uintptr, status *int32) uintptr {
	r, _, _ := purego.SyscallN(fn, ctx, dev, props, uintptr(unsafe.Pointer(status)))
	return r
}

// clCreateSubBuffer makes a sub-buffer of parent over region.
func clCreateSubBuffer(fn uintptr, parent Mem, flags uint64, createType uintptr, region *bufferRegion, status *int32) uintptr {
	r, _, _ := purego.SyscallN(fn, uintptr(parent), uintptr(flags), createType, uintptr(unsafe.Pointer(region)), uintptr(unsafe.Pointer(status)))
	return r
}

// clEnqueueReadOrWriteBuffer is a blocking clEnqueueReadBuffer or clEnqueueWriteBuffer (fn says which) of
// len(data) bytes at offset, after the events of wait; ev receives the command's event (nil: none wanted).
func clEnqueueReadOrWriteBuffer(fn, queue uintptr, m Mem, offset uint64, data []byte, wait []Event, ev *Event) int32 {
	r, _, _ := purego.SyscallN(fn, queue, uintptr(m), 1, uintptr(offset), uintptr(len(data)), uintptr(listPtr(data)),
		uintptr(len(wait)), uintptr(listPtr(wait)), uintptr(unsafe.Pointer(ev)))
	return int32(r)
}

// clEnqueueCopyBuffer copies size bytes from src to dst after the events of wait; ev receives the
// command's event (nil: none wanted).
func clEnqueueCopyBuffer(fn, queue uintptr, src, dst Mem, srcOffset, dstOffset, size uint64, wait []Event, ev *Event) int32 {
	r, _, _ := purego.SyscallN(fn, queue, uintptr(src), uintptr(dst), uintptr(srcOffset), uintptr(dstOffset), uintptr(size),
		uintptr(len(wait)), uintptr(listPtr(wait)), uintptr(unsafe.Pointer(ev)))
	return int32(r)
}

// clEnqueueFillBuffer fills the first size bytes of m with pattern, waiting for nothing and giving no event.
// The runtime copies the pattern before it returns (the specification lets a program reuse it then).
func clEnqueueFillBuffer(fn, queue uintptr, m Mem, pattern []byte, size uint64) int32 {
	r, _, _ := purego.SyscallN(fn, queue, uintptr(m), uintptr(listPtr(pattern)), uintptr(len(pattern)), 0, uintptr(size), 0, 0, 0)
	return int32(r)
}

// clWaitForEvents blocks until every event of evs has completed.
func clWaitForEvents(fn uintptr, evs []Event) int32 {
	r, _, _ := purego.SyscallN(fn, uintptr(len(evs)), uintptr(listPtr(evs)))
	return int32(r)
}

// clGetEventProfilingInfo reads the 64-bit timestamp param of ev into v.
func clGetEventProfilingInfo(fn uintptr, ev Event, param uint32, v *uint64) int32 {
	r, _, _ := purego.SyscallN(fn, uintptr(ev), uintptr(param), unsafe.Sizeof(*v), uintptr(unsafe.Pointer(v)), 0)
	return int32(r)
}

// clCreateProgramWithSource makes a program of the one source string source.
func clCreateProgramWithSource(fn, ctx uintptr, source string, status *int32) uintptr {
	src := nulTerminated(source)
	// The call takes an array of string pointers: Go memory holding a Go pointer, so the string is pinned.
	var pin runtime.Pinner
	pin.Pin(&src[0])
	defer pin.Unpin()
	srcs := []unsafe.Pointer{unsafe.Pointer(&src[0])}
	length := uintptr(len(source))
	r, _, _ := purego.SyscallN(fn, ctx, 1, uintptr(unsafe.Pointer(&srcs[0])), uintptr(unsafe.Pointer(&length)), uintptr(unsafe.Pointer(status)))
	return r
}

// clBuildProgram builds the program for every device of its context with the compiler options, and
// returns when the build is done (no callback).
func clBuildProgram(fn, program uintptr, options string) int32 {
	opts := nulTerminated(options)
	r, _, _ := purego.SyscallN(fn, program, 0, 0, uintptr(unsafe.Pointer(&opts[0])), 0, 0)
	return int32(r)
}

// clCreateKernel makes the kernel named name of the program.
func clCreateKernel(fn, program uintptr, name string, status *int32) uintptr {
	n := nulTerminated(name)
	r, _, _ := purego.SyscallN(fn, program, uintptr(unsafe.Pointer(&n[0])), uintptr(unsafe.Pointer(status)))
	return r
}
