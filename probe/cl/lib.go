// Package cl is clmemprobe's binding to the OpenCL C API: the only package that loads the library, holds raw
// handles and imports unsafe. It loads the library at run time through purego (no cgo), so the binary builds
// and runs without OpenCL headers and says clearly when no OpenCL library is present.
package cl

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

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
	createContext, releaseContext, getContextInfo                               uintptr
	createCommandQueue, releaseCommandQueue, finish, flush                      uintptr
	createBuffer, releaseMemObject, getMemObjectInfo                            uintptr
	enqueueFillBuffer, enqueueWriteBuffer, enqueueReadBuffer, enqueueCopyBuffer uintptr
	enqueueMigrateMemObjects                                                    uintptr
	waitForEvents, getEventInfo, getEventProfilingInfo, releaseEvent            uintptr
	createProgramWithSource, buildProgram, getProgramBuildInfo, releaseProgram  uintptr
	createKernel, setKernelArg, enqueueNDRangeKernel, releaseKernel             uintptr
	createBufferWithProperties                                                  uintptr // OpenCL 3.0, optional
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

// Open loads the OpenCL library at path and resolves its entry points. A missing library gives an error
// wrapping ErrLibraryNotFound; a library without the core entry points one wrapping ErrNotOpenCL.
func Open(path string) (*Library, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrLibraryNotFound, path, strings.TrimSpace(err.Error()))
	}
	l := &Library{Path: path, h: h}
	required := []struct {
		name string
		p    *uintptr
	}{
		{"clGetPlatformIDs", &l.fn.getPlatformIDs}, {"clGetPlatformInfo", &l.fn.getPlatformInfo},
		{"clGetDeviceIDs", &l.fn.getDeviceIDs}, {"clGetDeviceInfo", &l.fn.getDeviceInfo},
		{"clCreateContext", &l.fn.createContext}, {"clReleaseContext", &l.fn.releaseContext},
		{"clGetContextInfo", &l.fn.getContextInfo},
		{"clCreateCommandQueue", &l.fn.createCommandQueue}, {"clReleaseCommandQueue", &l.fn.releaseCommandQueue},
		{"clFinish", &l.fn.finish}, {"clFlush", &l.fn.flush},
		{"clCreateBuffer", &l.fn.createBuffer}, {"clReleaseMemObject", &l.fn.releaseMemObject},
		{"clGetMemObjectInfo", &l.fn.getMemObjectInfo},
		{"clEnqueueFillBuffer", &l.fn.enqueueFillBuffer}, {"clEnqueueWriteBuffer", &l.fn.enqueueWriteBuffer},
		{"clEnqueueReadBuffer", &l.fn.enqueueReadBuffer}, {"clEnqueueCopyBuffer", &l.fn.enqueueCopyBuffer},
		{"clEnqueueMigrateMemObjects", &l.fn.enqueueMigrateMemObjects},
		{"clWaitForEvents", &l.fn.waitForEvents}, {"clGetEventInfo", &l.fn.getEventInfo},
		{"clGetEventProfilingInfo", &l.fn.getEventProfilingInfo}, {"clReleaseEvent", &l.fn.releaseEvent},
		{"clCreateProgramWithSource", &l.fn.createProgramWithSource}, {"clBuildProgram", &l.fn.buildProgram},
		{"clGetProgramBuildInfo", &l.fn.getProgramBuildInfo}, {"clReleaseProgram", &l.fn.releaseProgram},
		{"clCreateKernel", &l.fn.createKernel}, {"clSetKernelArg", &l.fn.setKernelArg},
		{"clEnqueueNDRangeKernel", &l.fn.enqueueNDRangeKernel}, {"clReleaseKernel", &l.fn.releaseKernel},
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
		_ = purego.Dlclose(h)
		return nil, fmt.Errorf("%w: %s lacks %s", ErrNotOpenCL, path, strings.Join(missing, ", "))
	}
	// Optional: looked up, never assumed.
	if p, err := purego.Dlsym(h, "clCreateBufferWithProperties"); err == nil {
		l.fn.createBufferWithProperties = p
	}
	return l, nil
}

// HasCreateBufferWithProperties reports whether the library exports clCreateBufferWithProperties (OpenCL 3.0).
func (l *Library) HasCreateBufferWithProperties() bool { return l.fn.createBufferWithProperties != 0 }

// check turns a status code into nil or an *Error naming the call.
func check(status uintptr, call string) error {
	if c := int32(status); c != 0 {
		return &Error{Code: c, Call: call}
	}
	return nil
}

// infoBytes runs the two-step OpenCL info query (size, then value). handles are the query's leading
// arguments: one for device or platform info, two for per-device program info.
func (l *Library) infoBytes(fn uintptr, param uint32, call string, handles ...uintptr) ([]byte, error) {
	args := func(size, value, sizeRet uintptr) []uintptr {
		return append(append([]uintptr{}, handles...), uintptr(param), size, value, sizeRet)
	}
	var size uintptr
	if err := check(sys(fn, args(0, 0, uintptr(unsafe.Pointer(&size)))...), call); err != nil || size == 0 {
		return nil, err
	}
	buf := make([]byte, size)
	if err := check(sys(fn, args(size, uintptr(unsafe.Pointer(&buf[0])), 0)...), call); err != nil {
		return nil, err
	}
	return buf, nil
}

// sys calls a C function. It is the one place that calls purego.SyscallN, so hot-path wrappers stay thin.
func sys(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
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

// goStringFromC copies a NUL-terminated C string; used only for callback arguments.
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
// short). The worker streams them to the parent, which keeps the first 100 per strategy.
func OnNotice(f func(Notice)) {
	notify.mu.Lock()
	notify.hook = f
	notify.mu.Unlock()
}

func notifyCallback() uintptr {
	notify.once.Do(func() {
		notify.cb = purego.NewCallback(func(errinfo *byte, privateInfo unsafe.Pointer, cb, userData uintptr) {
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

// ErrNoPlatform is returned when the library loads but reports no platform.
var ErrNoPlatform = errors.New("no OpenCL platform found")
