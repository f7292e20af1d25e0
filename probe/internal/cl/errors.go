package cl

import "fmt"

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
	InvalidOperation           Status = -59
	InvalidProperty            Status = -64
	PlatformNotFoundKHR        Status = -1001
)

// Error returns the standard name and the number, as in "CL_OUT_OF_HOST_MEMORY (-6)".
func (s Status) Error() string { return fmt.Sprintf("%s (%d)", s.Name(), int32(s)) }

// Name is the standard name of the code, for every code of the OpenCL 3.0 headers (cl.h and cl_ext.h);
// unknown codes get a name that still shows the number.
func (s Status) Name() string {
	if n, ok := codeNames[s]; ok {
		return n
	}
	return fmt.Sprintf("CL_UNKNOWN_ERROR_%d", int32(s))
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
	ErrLibraryNotFound = loadError("OpenCL library not found")
	// ErrNotOpenCL: the library loads but lacks the core OpenCL entry points.
	ErrNotOpenCL = loadError("library is not an OpenCL library")
	// ErrNoPlatform: the library loads but reports no platform.
	ErrNoPlatform = loadError("no OpenCL platform found")
	// ErrUnsupported: an optional entry point or extension is absent.
	ErrUnsupported = loadError("not supported by this OpenCL runtime")
)

var codeNames = map[Status]string{
	0:     "CL_SUCCESS",
	-1:    "CL_DEVICE_NOT_FOUND",
	-2:    "CL_DEVICE_NOT_AVAILABLE",
	-3:    "CL_COMPILER_NOT_AVAILABLE",
	-4:    "CL_MEM_OBJECT_ALLOCATION_FAILURE",
	-5:    "CL_OUT_OF_RESOURCES",
	-6:    "CL_OUT_OF_HOST_MEMORY",
	-7:    "CL_PROFILING_INFO_NOT_AVAILABLE",
	-8:    "CL_MEM_COPY_OVERLAP",
	-9:    "CL_IMAGE_FORMAT_MISMATCH",
	-10:   "CL_IMAGE_FORMAT_NOT_SUPPORTED",
	-11:   "CL_BUILD_PROGRAM_FAILURE",
	-12:   "CL_MAP_FAILURE",
	-13:   "CL_MISALIGNED_SUB_BUFFER_OFFSET",
	-14:   "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
	-15:   "CL_COMPILE_PROGRAM_FAILURE",
	-16:   "CL_LINKER_NOT_AVAILABLE",
	-17:   "CL_LINK_PROGRAM_FAILURE",
	-18:   "CL_DEVICE_PARTITION_FAILED",
	-19:   "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
	-30:   "CL_INVALID_VALUE",
	-31:   "CL_INVALID_DEVICE_TYPE",
	-32:   "CL_INVALID_PLATFORM",
	-33:   "CL_INVALID_DEVICE",
	-34:   "CL_INVALID_CONTEXT",
	-35:   "CL_INVALID_QUEUE_PROPERTIES",
	-36:   "CL_INVALID_COMMAND_QUEUE",
	-37:   "CL_INVALID_HOST_PTR",
	-38:   "CL_INVALID_MEM_OBJECT",
	-39:   "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
	-40:   "CL_INVALID_IMAGE_SIZE",
	-41:   "CL_INVALID_SAMPLER",
	-42:   "CL_INVALID_BINARY",
	-43:   "CL_INVALID_BUILD_OPTIONS",
	-44:   "CL_INVALID_PROGRAM",
	-45:   "CL_INVALID_PROGRAM_EXECUTABLE",
	-46:   "CL_INVALID_KERNEL_NAME",
	-47:   "CL_INVALID_KERNEL_DEFINITION",
	-48:   "CL_INVALID_KERNEL",
	-49:   "CL_INVALID_ARG_INDEX",
	-50:   "CL_INVALID_ARG_VALUE",
	-51:   "CL_INVALID_ARG_SIZE",
	-52:   "CL_INVALID_KERNEL_ARGS",
	-53:   "CL_INVALID_WORK_DIMENSION",
	-54:   "CL_INVALID_WORK_GROUP_SIZE",
	-55:   "CL_INVALID_WORK_ITEM_SIZE",
	-56:   "CL_INVALID_GLOBAL_OFFSET",
	-57:   "CL_INVALID_EVENT_WAIT_LIST",
	-58:   "CL_INVALID_EVENT",
	-59:   "CL_INVALID_OPERATION",
	-60:   "CL_INVALID_GL_OBJECT",
	-61:   "CL_INVALID_BUFFER_SIZE",
	-62:   "CL_INVALID_MIP_LEVEL",
	-63:   "CL_INVALID_GLOBAL_WORK_SIZE",
	-64:   "CL_INVALID_PROPERTY",
	-65:   "CL_INVALID_IMAGE_DESCRIPTOR",
	-66:   "CL_INVALID_COMPILER_OPTIONS",
	-67:   "CL_INVALID_LINKER_OPTIONS",
	-68:   "CL_INVALID_DEVICE_PARTITION_COUNT",
	-69:   "CL_INVALID_PIPE_SIZE",
	-70:   "CL_INVALID_DEVICE_QUEUE",
	-71:   "CL_INVALID_SPEC_ID",
	-72:   "CL_MAX_SIZE_RESTRICTION_EXCEEDED",
	-1001: "CL_PLATFORM_NOT_FOUND_KHR",
	-1057: "CL_DEVICE_PARTITION_FAILED_EXT",
	-1058: "CL_INVALID_PARTITION_COUNT_EXT",
	-1059: "CL_INVALID_PARTITION_NAME_EXT",
	-1094: "CL_INVALID_ACCELERATOR_INTEL",
	-1095: "CL_INVALID_ACCELERATOR_TYPE_INTEL",
	-1096: "CL_INVALID_ACCELERATOR_DESCRIPTOR_INTEL",
	-1097: "CL_ACCELERATOR_TYPE_NOT_SUPPORTED_INTEL",
	-1108: "CL_COMMAND_TERMINATED_ITSELF_WITH_FAILURE_ARM",
	-1121: "CL_CONTEXT_TERMINATED_KHR",
	-1138: "CL_INVALID_COMMAND_BUFFER_KHR",
	-1139: "CL_INVALID_SYNC_POINT_WAIT_LIST_KHR",
	-1140: "CL_INCOMPATIBLE_COMMAND_QUEUE_KHR",
	-1141: "CL_INVALID_MUTABLE_COMMAND_KHR",
	-1142: "CL_INVALID_SEMAPHORE_KHR",
}
