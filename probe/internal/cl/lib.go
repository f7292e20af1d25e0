// Package cl is clmemprobe's binding to the OpenCL C API: the only package that loads the library, holds raw
// handles and calls C (besides the NVML binding). It loads the library at run time through purego (no cgo),
// so the binary builds and runs without OpenCL headers and says clearly when no OpenCL library is present.
//
// Every Go pointer the package hands to C is converted in ptr.go and nowhere else: its functions, named
// after the C functions they call, take Go values (a pointer to an out-parameter, a slice, a string) and
// convert each in the call expression that passes it to C (STYLE.md, rule 1; ptr.go says why). The rest of
// the package passes only Go values and handles.
//
// One exception, for the calls whose pointer arguments fit in a small block (the allocation loop's, and a
// queue's migrations, kernels and events and a kernel's arguments, whose lists and values are copied into
// it): each Context and Queue has a call block (hotBlock) pinned with runtime.Pinner for the object's life,
// and a Kernel uses its context's. Pinned memory never moves, so its addresses may sit in the block's
// argument array before the call (runtime.Pinner: a pointer to a pinned object "can be contained in Go
// memory passed to C functions"). The block also holds the function to call and its result; on amd64 these
// calls go through a trampoline of this package (hotcall_amd64.s), which runtime.cgocall calls with the
// block's address as its one argument: it loads the nine argument words and nothing else, where SyscallN
// copies forty through a pool (hotcall_amd64.go says what that cost). Because of the block, a Context, a
// Queue or a Kernel is not safe for concurrent use.
package cl

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// DefaultLibrary is the OpenCL library opened when neither a flag nor CLMEMPROBE_OPENCL_LIB names one: the
// ICD loader's soname, which dispatches to every installed vendor runtime.
const DefaultLibrary = "libOpenCL.so.1"

// LibraryEnv names the environment variable that overrides DefaultLibrary.
const LibraryEnv = "CLMEMPROBE_OPENCL_LIB"

// Library is an opened OpenCL library with its entry points resolved.
type Library struct {
	Path string
	h    uintptr
	fn   entryPoints
}

// entryPoints holds the C function addresses. Optional ones are 0 when the library lacks them.
type entryPoints struct {
	getPlatformIDs, getPlatformInfo, getDeviceIDs, getDeviceInfo                uintptr
	createContext, releaseContext                                               uintptr
	createCommandQueue, releaseCommandQueue, finish, flush                      uintptr
	createBuffer, releaseMemObject                                              uintptr
	enqueueFillBuffer, enqueueWriteBuffer, enqueueReadBuffer, enqueueCopyBuffer uintptr
	enqueueMigrateMemObjects                                                    uintptr
	waitForEvents, getEventInfo, getEventProfilingInfo, releaseEvent            uintptr
	createProgramWithSource, buildProgram, getProgramBuildInfo, releaseProgram  uintptr
	createKernel, setKernelArg, enqueueNDRangeKernel                            uintptr
	createBufferWithProperties                                                  uintptr // OpenCL 3.0, optional
	createSubBuffer                                                             uintptr // OpenCL 1.1, optional
}

// ResolveLibraryPath picks the library to open: the flag value, else CLMEMPROBE_OPENCL_LIB, else the default.
func ResolveLibraryPath(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv(LibraryEnv); env != "" {
		return env
	}
	return DefaultLibrary
}

// dlopen is purego.Dlopen on one OS thread. Its error is dlerror's, which is kept per thread: a goroutine
// moved to another thread between the dlopen and the dlerror read nothing, and the set-up failure said
// "cannot load the OpenCL library: " without why (a fresh Debian root's test run did, once).
func dlopen(path string, mode int) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(path, mode)
}

// Open loads the OpenCL library at path and resolves its entry points. A missing library gives an error
// wrapping ErrLibraryNotFound; a library without clGetPlatformIDs one wrapping ErrNotOpenCL; one with it
// and without another entry point the tool calls, one wrapping ErrIncomplete.
func Open(path string) (*Library, error) {
	h, err := dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		why := strings.TrimSpace(err.Error())
		if strings.Contains(why, "No such file or directory") {
			// Said plainly: the usual case, a runtime not installed.
			return nil, fmt.Errorf("%w: %s not found", ErrLibraryNotFound, path)
		}
		// dlerror names the file itself: "libOpenCL.so.1: failed to map segment from shared object".
		return nil, fmt.Errorf("%w: %s", ErrLibraryNotFound, why)
	}
	l := &Library{Path: path, h: h}
	required := []struct {
		name string
		p    *uintptr
	}{
		{"clGetPlatformIDs", &l.fn.getPlatformIDs}, {"clGetPlatformInfo", &l.fn.getPlatformInfo},
		{"clGetDeviceIDs", &l.fn.getDeviceIDs}, {"clGetDeviceInfo", &l.fn.getDeviceInfo},
		{"clCreateContext", &l.fn.createContext}, {"clReleaseContext", &l.fn.releaseContext},
		{"clCreateCommandQueue", &l.fn.createCommandQueue}, {"clReleaseCommandQueue", &l.fn.releaseCommandQueue},
		{"clFinish", &l.fn.finish}, {"clFlush", &l.fn.flush},
		{"clCreateBuffer", &l.fn.createBuffer}, {"clReleaseMemObject", &l.fn.releaseMemObject},
		{"clEnqueueFillBuffer", &l.fn.enqueueFillBuffer}, {"clEnqueueWriteBuffer", &l.fn.enqueueWriteBuffer},
		{"clEnqueueReadBuffer", &l.fn.enqueueReadBuffer}, {"clEnqueueCopyBuffer", &l.fn.enqueueCopyBuffer},
		{"clEnqueueMigrateMemObjects", &l.fn.enqueueMigrateMemObjects},
		{"clWaitForEvents", &l.fn.waitForEvents}, {"clGetEventInfo", &l.fn.getEventInfo},
		{"clGetEventProfilingInfo", &l.fn.getEventProfilingInfo}, {"clReleaseEvent", &l.fn.releaseEvent},
		{"clCreateProgramWithSource", &l.fn.createProgramWithSource}, {"clBuildProgram", &l.fn.buildProgram},
		{"clGetProgramBuildInfo", &l.fn.getProgramBuildInfo}, {"clReleaseProgram", &l.fn.releaseProgram},
		{"clCreateKernel", &l.fn.createKernel}, {"clSetKernelArg", &l.fn.setKernelArg},
		{"clEnqueueNDRangeKernel", &l.fn.enqueueNDRangeKernel},
	}
	var missing []string
	for _, s := range required {
		p, err := purego.Dlsym(h, s.name)
		if err != nil || p == 0 {
			missing = append(missing, s.name)
			continue
		}
		*s.p = p
	}
	if len(missing) > 0 {
		icd, err := purego.Dlsym(h, "clIcdGetPlatformIDsKHR")
		_ = purego.Dlclose(h)
		return nil, lacking(path, missing, err == nil && icd != 0)
	}
	// Optional: looked up, never assumed.
	if p, err := purego.Dlsym(h, "clCreateBufferWithProperties"); err == nil {
		l.fn.createBufferWithProperties = p
	}
	if p, err := purego.Dlsym(h, "clCreateSubBuffer"); err == nil {
		l.fn.createSubBuffer = p
	}
	return l, nil
}

// lacking is the error of a library that loads without the entry points the tool calls (missing, in the
// order looked up, clGetPlatformIDs first): without clGetPlatformIDs it is no OpenCL library, and that one
// name says so; the other names would be a line of every entry point (issue 46). With it, the library is
// an OpenCL library of another version or an incomplete one: the first it lacks and how many more. icd:
// it exports the ICD entry point, a vendor runtime that the loader, not a program, loads.
func lacking(path string, missing []string, icd bool) error {
	if missing[0] == "clGetPlatformIDs" {
		if icd {
			return fmt.Errorf("%s: %w: it lacks clGetPlatformIDs; it is a vendor runtime for the ICD loader (libOpenCL.so.1), see OCL_ICD_VENDORS", path, ErrNotOpenCL)
		}
		return fmt.Errorf("%s: %w: it lacks clGetPlatformIDs", path, ErrNotOpenCL)
	}
	more := ""
	if len(missing) > 1 {
		more = fmt.Sprintf(" and %d more", len(missing)-1)
	}
	return fmt.Errorf("%s: %w: it lacks %s%s", path, ErrIncomplete, missing[0], more)
}

// ProbeICD loads a vendor runtime's library on its own, as the ICD loader would (RTLD_LOCAL: nothing
// of it is seen by what loads after), and looks for the ICD entry point. The error wraps
// ErrLibraryNotFound where the library itself is not there, ErrNotLoadable with the dynamic linker's
// words where it is and cannot be loaded (they name the missing dependency), ErrNotOpenCL where it lacks
// both ways to the ICD entry point. The library stays loaded: unloading a runtime is not always safe.
func ProbeICD(path string) error {
	h, err := dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		why := strings.TrimSpace(err.Error())
		if strings.HasPrefix(why, path+": cannot open shared object file") {
			return fmt.Errorf("%w: %s", ErrLibraryNotFound, why)
		}
		return fmt.Errorf("%w: %s", ErrNotLoadable, why)
	}
	// Loaders find clIcdGetPlatformIDsKHR through clGetExtensionFunctionAddress (PoCL exports no other
	// way in); a runtime that exports neither is no ICD.
	for _, name := range []string{"clIcdGetPlatformIDsKHR", "clGetExtensionFunctionAddress"} {
		if p, err := purego.Dlsym(h, name); err == nil && p != 0 {
			return nil
		}
	}
	return fmt.Errorf("%w: %s exports neither clIcdGetPlatformIDsKHR nor clGetExtensionFunctionAddress", ErrNotOpenCL, path)
}

// HasCreateBufferWithProperties reports whether the library exports clCreateBufferWithProperties (OpenCL 3.0).
func (l *Library) HasCreateBufferWithProperties() bool { return l.fn.createBufferWithProperties != 0 }

// HasCreateSubBuffer says whether the library has clCreateSubBuffer (OpenCL 1.1).
func (l *Library) HasCreateSubBuffer() bool { return l.fn.createSubBuffer != 0 }

// call makes a foreign call whose arguments are all plain values (handles, sizes, flags): none is a Go
// pointer. Calls that pass a Go pointer go through ptr.go (the package's rule).
func call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}

// maxInfoBytes bounds what one info query may ask us to allocate: a runtime that answers an absurd size is
// broken, and must not take the process down with it.
const maxInfoBytes = 16 << 20

// queryInfo runs the two-step OpenCL info query (size, then value). ask makes the call: the value into value
// (nil: not asked), its size into sizeRet (nil: not asked).
func queryInfo(call string, ask func(value []byte, sizeRet *uintptr) int32) ([]byte, error) {
	var size uintptr
	if err := check(ask(nil, &size), call); err != nil || size == 0 {
		return nil, err
	}
	if size > maxInfoBytes {
		return nil, fmt.Errorf("%s: the runtime answered an implausible size of %d bytes", call, size)
	}
	buf := make([]byte, size)
	if err := check(ask(buf, nil), call); err != nil {
		return nil, err
	}
	return buf, nil
}

// infoOf makes the query function of a clGet*Info entry point whose leading argument is one handle
// (platform and device info).
func infoOf(fn uintptr, param uint32, h uintptr) func(value []byte, sizeRet *uintptr) int32 {
	return func(value []byte, sizeRet *uintptr) int32 { return clGetInfo(fn, h, param, value, sizeRet) }
}

// info2Of is infoOf for entry points with two leading handles (per-device program info).
func info2Of(fn uintptr, param uint32, h1, h2 uintptr) func(value []byte, sizeRet *uintptr) int32 {
	return func(value []byte, sizeRet *uintptr) int32 { return clGetInfo2(fn, h1, h2, param, value, sizeRet) }
}

func cString(b []byte) string {
	if i := indexNUL(b); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// Notice is a message a runtime passed to a context's notify callback.
type Notice struct {
	Context int    `json:"context"`
	Message string `json:"message"`
}

var notify struct {
	once sync.Once
	cb   uintptr
	mu   sync.Mutex
	hook func(Notice)
}

// OnNotice sets a function called for every context notify message (in the runtime's thread: keep it
// short).
func OnNotice(f func(Notice)) {
	notify.mu.Lock()
	notify.hook = f
	notify.mu.Unlock()
}

func notifyCallback() uintptr {
	notify.once.Do(func() {
		notify.cb = purego.NewCallback(func(errinfo *byte, privateInfo, cb, userData uintptr) {
			n := Notice{Context: int(userData), Message: goStringFromC(errinfo)}
			notify.mu.Lock()
			hook := notify.hook
			notify.mu.Unlock()
			if hook != nil {
				hook(n)
			}
		})
	})
	return notify.cb
}
