package cl

import (
	"fmt"

	"github.com/clmemprobe/clmemprobe/probe/result/clcode"
)

// Status is an OpenCL status code (cl_int) as a call returns it. A Status other than Success is an error,
// so a code can be compared with errors.Is wherever it is wrapped: errors.Is(err, cl.OutOfHostMemory).
type Status int32

// The codes the probe tests for by name. They are constants: nothing outside the package can change them.
const (
	Success                    Status = 0
	DeviceNotFound             Status = -1
	MemObjectAllocationFailure Status = -4
	OutOfResources             Status = -5
	OutOfHostMemory            Status = -6
	ExecStatusErrorInWaitList  Status = -14
	InvalidValue               Status = -30
	InvalidHostPtr             Status = -37
	InvalidOperation           Status = -59
	InvalidProperty            Status = -64
	PlatformNotFoundKHR        Status = -1001
)

// Error returns the standard name and the number, as in "CL_OUT_OF_HOST_MEMORY (-6)".
func (s Status) Error() string { return fmt.Sprintf("%s (%d)", s.Name(), int32(s)) }

// Name is the standard name of the code, for every code of the OpenCL 3.0 headers (cl.h and cl_ext.h);
// unknown codes get a name that still shows the number.
func (s Status) Name() string {
	return clcode.Name(int32(s))
}

// CallError is a failed call: which call, and the status it returned. It unwraps to the Status.
type CallError struct {
	Call   string
	Status Status
}

func (e *CallError) Error() string { return e.Call + ": " + e.Status.Error() }

// Unwrap returns the status, so errors.Is(err, cl.OutOfHostMemory) works whatever call failed.
func (e *CallError) Unwrap() error { return e.Status }

// check turns a returned status into nil or a *CallError naming the call.
func check(status int32, call string) error {
	if status != 0 {
		return &CallError{Call: call, Status: Status(status)}
	}
	return nil
}

// loadError is an error of loading the library; its values are constants.
type loadError string

func (e loadError) Error() string { return string(e) }

// Errors of loading and enumerating, before any OpenCL call can fail.
const (
	// ErrLibraryNotFound: the OpenCL library cannot be loaded.
	// The words cover both: a library that is not there, and one that is and cannot be mapped (under an
	// address-space limit, say), which dlopen reports alike.
	ErrLibraryNotFound = loadError("cannot load the OpenCL library")
	// ErrNotLoadable: a runtime's library exists and the dynamic linker refuses it (a dependency missing,
	// an unresolved symbol): its words say which.
	ErrNotLoadable = loadError("the dynamic linker refused the library")
	// ErrNotOpenCL: the library loads but lacks clGetPlatformIDs, the entry point every OpenCL library has.
	ErrNotOpenCL = loadError("not an OpenCL library")
	// ErrIncomplete: the library has clGetPlatformIDs but lacks another entry point the tool calls (an
	// OpenCL library older than 1.2, or a partial one).
	ErrIncomplete = loadError("an OpenCL library without an entry point clmemprobe calls")
	// ErrNoPlatform: the library loads but reports no platform.
	ErrNoPlatform = loadError("no OpenCL platform found")
	// ErrUnsupported: an optional entry point or extension is absent.
	ErrUnsupported = loadError("not supported by this OpenCL runtime")
)
