package result

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// MemFlags is a cl_mem_flags value: what a job passes to clCreateBuffer. A job's flags are part of its
// identity, as its size is: the same strategy with other flags is another job.
type MemFlags uint64

// The standard cl_mem_flags bits (OpenCL 3.0, section 5.2.1).
const (
	MemReadWrite     MemFlags = 1 << 0
	MemWriteOnly     MemFlags = 1 << 1
	MemReadOnly      MemFlags = 1 << 2
	MemUseHostPtr    MemFlags = 1 << 3
	MemAllocHostPtr  MemFlags = 1 << 4
	MemCopyHostPtr   MemFlags = 1 << 5
	MemHostWriteOnly MemFlags = 1 << 7
	MemHostReadOnly  MemFlags = 1 << 8
	MemHostNoAccess  MemFlags = 1 << 9

	// kernelAccess are the bits that say how kernels may use a buffer; with none of them, OpenCL reads the
	// flags as read-write.
	kernelAccess = MemReadWrite | MemWriteOnly | MemReadOnly
)

// DefaultFlags are the flags of the user's loop, and of every job that asks for none: CL_MEM_READ_WRITE.
const DefaultFlags = MemReadWrite

// MemFlag is one named flag: the name the command line and the results use, and its C name.
type MemFlag struct {
	Name  string
	C     string
	Value MemFlags
	Help  string
}

// StandardFlags are the flags of the OpenCL specification that run --flags names, in bit order.
var StandardFlags = []MemFlag{
	{"read-write", "CL_MEM_READ_WRITE", MemReadWrite, "kernels read and write it (the default)"},
	{"write-only", "CL_MEM_WRITE_ONLY", MemWriteOnly, "kernels only write it"},
	{"read-only", "CL_MEM_READ_ONLY", MemReadOnly, "kernels only read it"},
	{"use-host-ptr", "CL_MEM_USE_HOST_PTR", MemUseHostPtr, "the buffer is host memory the tool allocates: one page-aligned block per buffer, written once, never freed"},
	{"alloc-host-ptr", "CL_MEM_ALLOC_HOST_PTR", MemAllocHostPtr, "the runtime allocates it from host-accessible memory"},
	{"copy-host-ptr", "CL_MEM_COPY_HOST_PTR", MemCopyHostPtr, "the runtime copies its contents from host memory (one source block the tool shares over all buffers)"},
	{"host-write-only", "CL_MEM_HOST_WRITE_ONLY", MemHostWriteOnly, "the host only writes it"},
	{"host-read-only", "CL_MEM_HOST_READ_ONLY", MemHostReadOnly, "the host only reads it"},
	{"host-no-access", "CL_MEM_HOST_NO_ACCESS", MemHostNoAccess, "the host never reads or writes it"},
}

// VendorFlag is a documented vendor extension's cl_mem_flags bit, given to run --flags as its raw value
// (0x800000) or its C name, and named in results and findings with its source.
type VendorFlag struct {
	C      string
	Value  MemFlags
	Vendor string
	What   string
	// LiftsMaxAlloc: the vendor documents that the flag allows a buffer over CL_DEVICE_MAX_MEM_ALLOC_SIZE,
	// so a larger --size is not refused up front and the runtime's answer is the result.
	LiftsMaxAlloc bool
	Source        string
}

// VendorFlags are the vendor flags whose meaning has a public source. A raw value not in this table is
// still passed as given, and results write it as its hex value.
var VendorFlags = []VendorFlag{
	{"CL_MEM_USE_PERSISTENT_MEM_AMD", 1 << 6, "AMD", "allocate from the device's host-visible heap", false,
		"https://registry.khronos.org/OpenCL/api/CL/cl_ext.h (cl_amd_device_memory_flags)"},
	{"CL_MEM_FORCE_HOST_MEMORY_INTEL", 1 << 20, "Intel", "place the buffer in host memory", false,
		"https://registry.khronos.org/OpenCL/extensions/intel/cl_intel_mem_force_host_memory.html"},
	{"CL_MEM_ALLOW_UNRESTRICTED_SIZE_INTEL", 1 << 23, "Intel", "allow a buffer over the device's maximum allocation size", true,
		"https://github.com/intel/compute-runtime/blob/master/opencl/extensions/public/cl_ext_private.h"},
	{"CL_MEM_USE_UNCACHED_CPU_MEMORY_IMG", 1 << 26, "Imagination", "host memory, uncached", false,
		"https://registry.khronos.org/OpenCL/extensions/img/cl_img_cached_allocations.txt"},
	{"CL_MEM_USE_CACHED_CPU_MEMORY_IMG", 1 << 27, "Imagination", "host memory, cached", false,
		"https://registry.khronos.org/OpenCL/extensions/img/cl_img_cached_allocations.txt"},
	{"CL_MEM_EXT_HOST_PTR_QCOM", 1 << 29, "Qualcomm", "the host pointer is an external allocation (ION, Android buffer)", false,
		"https://registry.khronos.org/OpenCL/extensions/qcom/cl_qcom_ext_host_ptr.txt"},
}

// ParseMemFlags reads one set of flags: names (read-only, use-host-ptr), C names (CL_MEM_USE_HOST_PTR)
// and raw values (0x800000, for vendor flags), joined by "+" or ",". Without a kernel-access flag the
// set is read-write, as OpenCL reads it, and says so: CL_MEM_READ_WRITE is passed.
func ParseMemFlags(s string) (MemFlags, error) {
	var f MemFlags
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '+' || r == ',' || r == '|' })
	if len(parts) == 0 {
		return 0, fmt.Errorf("no flags in %q: name at least one (%s)", s, strings.Join(FlagNames(), ", "))
	}
	for _, p := range parts {
		v, err := parseOneFlag(strings.TrimSpace(p))
		if err != nil {
			return 0, err
		}
		f |= v
	}
	if f&kernelAccess == 0 {
		f |= MemReadWrite
	}
	if bits.OnesCount64(uint64(f&kernelAccess)) > 1 {
		return f, fmt.Errorf("%q names more than one of read-write, read-only, write-only: a buffer has one kernel access", s)
	}
	if f&MemUseHostPtr != 0 && f&(MemAllocHostPtr|MemCopyHostPtr) != 0 {
		return f, fmt.Errorf("%q: use-host-ptr cannot be combined with alloc-host-ptr or copy-host-ptr (OpenCL forbids it)", s)
	}
	if bits.OnesCount64(uint64(f&(MemHostWriteOnly|MemHostReadOnly|MemHostNoAccess))) > 1 {
		return f, fmt.Errorf("%q names more than one of host-write-only, host-read-only, host-no-access", s)
	}
	return f, nil
}

func parseOneFlag(p string) (MemFlags, error) {
	for _, f := range StandardFlags {
		if strings.EqualFold(p, f.Name) || strings.EqualFold(p, f.C) {
			return f.Value, nil
		}
	}
	for _, f := range VendorFlags {
		if strings.EqualFold(p, f.C) {
			return f.Value, nil
		}
	}
	if strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X") {
		v, err := strconv.ParseUint(p[2:], 16, 64)
		if err != nil || v == 0 {
			return 0, fmt.Errorf("%q is not a cl_mem_flags value: give a non-zero hex number such as 0x800000", p)
		}
		return MemFlags(v), nil
	}
	return 0, &UnknownFlagError{Name: p}
}

// UnknownFlagError is a flag name that is no flag: the command line adds the closest name.
type UnknownFlagError struct{ Name string }

func (e *UnknownFlagError) Error() string {
	return fmt.Sprintf("unknown flag %q: choose %s, a C name (CL_MEM_...), or a raw value such as 0x800000", e.Name, strings.Join(FlagNames(), ", "))
}

// FlagNames are the standard flags' names, in bit order.
func FlagNames() []string {
	out := make([]string, len(StandardFlags))
	for i, f := range StandardFlags {
		out[i] = f.Name
	}
	return out
}

// String writes the flags as results and keys do: standard names in bit order joined by "+", read-write
// only where it is the whole set (it is implied otherwise), and any other bits as one hex value.
// "read-write", "use-host-ptr", "read-only+alloc-host-ptr", "0x800000".
func (f MemFlags) String() string {
	if f == DefaultFlags || f == 0 {
		return "read-write"
	}
	var names []string
	rest := f
	for _, n := range StandardFlags {
		if f&n.Value != 0 {
			rest &^= n.Value
			if n.Value != MemReadWrite {
				names = append(names, n.Name)
			}
		}
	}
	if rest != 0 {
		names = append(names, fmt.Sprintf("%#x", uint64(rest)))
	}
	if len(names) == 0 {
		return "read-write"
	}
	return strings.Join(names, "+")
}

// C writes the flags as a C expression, for the reproducer: CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, with
// vendor bits by their C name where the table knows them (and their value beside, since a header may lack
// them) and raw otherwise.
func (f MemFlags) C() string {
	var parts []string
	rest := f
	for _, n := range StandardFlags {
		if f&n.Value != 0 {
			parts = append(parts, n.C)
			rest &^= n.Value
		}
	}
	for _, v := range VendorFlags {
		if rest&v.Value != 0 {
			parts = append(parts, fmt.Sprintf("%#x /* %s */", uint64(v.Value), v.C))
			rest &^= v.Value
		}
	}
	if rest != 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint64(rest)))
	}
	return "(cl_mem_flags)(" + strings.Join(parts, " | ") + ")"
}

// HostPtr says which host pointer a buffer of these flags is created with: use (a block of its own),
// copy (the shared source block), or none.
func (f MemFlags) HostPtr() HostPtrKind {
	switch {
	case f&MemUseHostPtr != 0:
		return HostPtrUse
	case f&MemCopyHostPtr != 0:
		return HostPtrCopy
	}
	return HostPtrNone
}

// HostPtrKind is how a job's buffers take host memory from the tool.
type HostPtrKind int

const (
	HostPtrNone HostPtrKind = iota
	HostPtrUse              // CL_MEM_USE_HOST_PTR: one block per buffer, the buffer's own storage
	HostPtrCopy             // CL_MEM_COPY_HOST_PTR: one block, copied into every buffer
)

// LiftsMaxAlloc is the vendor flag among f that is documented to allow a buffer over the device's
// maximum allocation, or nil.
func (f MemFlags) LiftsMaxAlloc() *VendorFlag {
	for _, v := range f.Vendor() {
		if v.LiftsMaxAlloc {
			return &v
		}
	}
	return nil
}

// Vendor lists the documented vendor flags among f.
func (f MemFlags) Vendor() []VendorFlag {
	var out []VendorFlag
	for _, v := range VendorFlags {
		if f&v.Value != 0 {
			out = append(out, v)
		}
	}
	return out
}

// FlagsName is a job's recorded flags as keys and labels write them: results before flags were recorded,
// and jobs that asked for none, wrote "", which is read-write.
func FlagsName(recorded string) string {
	if recorded == "" {
		return DefaultFlags.String()
	}
	return recorded
}

// JobFlags reads a job's recorded flags back into their value ("" is the default).
func JobFlags(recorded string) (MemFlags, error) {
	if recorded == "" {
		return DefaultFlags, nil
	}
	return ParseMemFlags(recorded)
}
