package findings

import (
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Runtime is what is known of one OpenCL runtime's allocation behaviour, each fact with where it comes
// from. The findings cite the row they rely on; the table is data, tested, and meant to grow.
type Runtime struct {
	Name string
	// Vendor is the runtime's (result.VendorOf); the specification's row has none and stands for the rest.
	Vendor result.Vendor
	// Codes says what each allocation-failure code means on this runtime.
	Codes map[int32]string
	// Lazy says whether buffers get their memory at first use rather than at clCreateBuffer.
	Lazy string
	// MultiDevice says what a buffer of a context over several devices costs.
	MultiDevice string
	// Aborts says how the runtime fails where it does not return a code, if it is known to.
	Aborts string
	// Source is where the facts come from: source files at a commit, the specification, or an observation.
	Source string
}

// Runtimes is the table, most specific first; the OpenCL specification's row matches every platform.
var Runtimes = []Runtime{
	{
		Name:   "Intel compute-runtime (NEO)",
		Vendor: result.VendorIntelGPU,
		Codes: map[int32]string{
			-6: "any allocation failure inside clCreateBuffer, device memory included (Buffer::create sets CL_OUT_OF_HOST_MEMORY when the graphics allocation fails)",
			-5: "the copy from a host pointer failed",
		},
		Lazy:        "no: Buffer::create allocates at clCreateBuffer",
		MultiDevice: "an allocation per root device of the context (a MultiGraphicsAllocation); small buffers are pooled only in single-device contexts unless ExperimentalSmallBufferPoolAllocator=2",
		Source:      "https://github.com/intel/compute-runtime/blob/fe851da327b275e489d1e1e4bfd7e37815896527/opencl/source/mem_obj/buffer.cpp",
	},
	{
		Name:   "ROCm CLR",
		Vendor: result.VendorAMD,
		Codes: map[int32]string{
			-4: "the memory object could not be created on the device (clCreateBuffer; read and write enqueues when the memory cannot be validated)",
			-6: "the host could not allocate the object itself",
		},
		Lazy:        "yes in contexts over several devices: memory comes at first use unless DISABLE_DEFERRED_ALLOC=1; single-device contexts allocate at create",
		MultiDevice: "a slot per device, allocated on use; ALLOC_HOST_PTR and COPY_HOST_PTR buffers get an extra host backing store",
		Source:      "https://github.com/ROCm/clr/blob/078cf802d7ed6a0de41b69bdd5cce347dd1b9b4f/rocclr/platform/memory.cpp (Memory::create), opencl/amdocl/cl_memobj.cpp",
	},
	{
		Name:   "PoCL",
		Vendor: result.VendorPoCL,
		Codes: map[int32]string{
			-5: "the device allocation at the first command that uses the buffer failed (pocl_create_command_full)",
			-4: "older releases allocated at clCreateBuffer and failed there with -4",
		},
		Lazy:        "yes: device memory (host memory, for CPU devices) is allocated at the first command that uses the buffer",
		Aborts:      "under an address-space limit (ulimit -v) its allocator fails an assertion and aborts the process instead of returning -4 (pocl/pocl#1155): a crash with SIGABRT is that limit",
		MultiDevice: "an allocation only on the device that uses the buffer; a host staging copy when a migration needs one",
		Source:      "https://github.com/pocl/pocl/blob/25dd411b0b3f3bd3901d255a7d49bb4f362f6a21/lib/CL/pocl_util.c (can_run_command, alloc_mem_obj)",
	},
	{
		Name:   "Mesa rusticl",
		Vendor: result.VendorRusticl,
		Codes: map[int32]string{
			-5: "the buffer's memory could not be allocated at clCreateBuffer (rusticl allocates eagerly and reports it as CL_OUT_OF_RESOURCES)",
			-4: "a buffer larger than the device's maximum allocation, at clCreateBuffer",
		},
		Lazy:        "no: clCreateBuffer allocates the resource at once",
		MultiDevice: "a resource per device of the context, created with the buffer",
		Source:      "https://gitlab.freedesktop.org/mesa/mesa/-/blob/main/src/gallium/frontends/rusticl/api/memory.rs (create_buffer_with_properties), and on llvmpipe (Debian's mesa-opencl-icd) a reported 2 GiB of global memory that it does not enforce",
	},
	{
		Name:   "NVIDIA OpenCL",
		Vendor: result.VendorNVIDIA,
		Codes: map[int32]string{
			-4: "the device's memory ran out at the first use of the buffer (a fill, a kernel, a migration)",
		},
		Lazy:        "yes: clCreateBuffer places nothing; memory is taken at first use",
		MultiDevice: "no copy on the other devices of the context (1.00x the device memory per buffer on two H200)",
		Source:      "observed by clmemprobe on two NVIDIA H200 (driver 580.159.04): docs/examples/nvidia-h200-x2; no public source",
	},
	{
		Name:   "clmemprobe's fault-injection runtime (faultcl)",
		Vendor: result.VendorFaultCL,
		Codes: map[int32]string{
			-6: "a device or the host staging budget is full (FAULTCL_CREATE_ERROR changes the code)",
			-4: "in its lazy model, a device is full at first use",
		},
		Lazy:        "in its lazy model (FAULTCL_MODEL=lazy) only",
		MultiDevice: "in its replicating model, a buffer on every device of its context and a host staging copy with more than one device",
		Source:      "scripts/faultcl/faultcl.c",
	},
	{
		Name: "the OpenCL specification",
		Codes: map[int32]string{
			-4: "a failure to allocate memory for a buffer object, at clCreateBuffer or at any enqueue that uses its data store: allocation may be deferred to first use",
			-5: "a failure to allocate resources required by the implementation on the device",
			-6: "a failure to allocate resources required by the implementation on the host",
		},
		Lazy:   "allowed: enqueues may report CL_MEM_OBJECT_ALLOCATION_FAILURE for a buffer's data store",
		Source: "https://github.com/KhronosGroup/OpenCL-Docs/blob/cd9ec40d90a9ec5992d765eac7f7c01b7a3be606/api/opencl_runtime_layer.asciidoc",
	},
}

// RuntimeOf returns the row of a platform's vendor (result.VendorOf), else the specification's.
func RuntimeOf(p result.Platform) *Runtime {
	if v := result.VendorOf(p); v != result.VendorOther {
		for i := range Runtimes {
			if Runtimes[i].Vendor == v {
				return &Runtimes[i]
			}
		}
	}
	return &Runtimes[len(Runtimes)-1]
}
