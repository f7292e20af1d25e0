package result

import (
	"errors"
	"slices"
	"strconv"
	"testing"
)

// A flag list parses into the union of its flags, by name, C name or raw value, joined by "+" or ",", and
// a list without a kernel-access flag is read-write, as OpenCL reads it.
func TestParseMemFlagsReadsEverySpelling(t *testing.T) {
	intel := VendorFlags[2] // CL_MEM_ALLOW_UNRESTRICTED_SIZE_INTEL
	for _, c := range []struct {
		name string
		in   string
		want MemFlags
	}{
		{"the default by name", "read-write", MemReadWrite},
		{"read-only", "read-only", MemReadOnly},
		{"no access flag is read-write", "use-host-ptr", MemUseHostPtr | MemReadWrite},
		{"joined by plus", "read-only+alloc-host-ptr", MemReadOnly | MemAllocHostPtr},
		{"joined by comma, with blanks", "write-only, host-no-access", MemWriteOnly | MemHostNoAccess},
		{"a C name", "CL_MEM_COPY_HOST_PTR", MemCopyHostPtr | MemReadWrite},
		{"a C name in lower case", "cl_mem_read_only", MemReadOnly},
		{"a vendor flag by its C name", intel.C, intel.Value | MemReadWrite},
		{"a raw value", "0x800000", MemFlags(0x800000) | MemReadWrite},
		{"a raw value with a capital X", "read-only+0X40", MemReadOnly | MemFlags(0x40)},
		{"a flag twice", "read-only+read-only", MemReadOnly},
	} {
		got, err := ParseMemFlags(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: ParseMemFlags(%q) = %#x, %v; want %#x", c.name, c.in, uint64(got), err, uint64(c.want))
		}
	}
}

// Flag lists that name nothing, an unknown flag, a zero or malformed raw value, or a combination OpenCL
// forbids are refused with an error; an unknown name is an *UnknownFlagError carrying that name.
func TestParseMemFlagsRefusesWhatOpenCLForbids(t *testing.T) {
	for _, c := range []struct {
		name    string
		in      string
		unknown string // the name an *UnknownFlagError must carry, where that is the error
	}{
		{"empty", "", ""},
		{"only separators", "+,+", ""},
		{"unknown name", "read-mostly", "read-mostly"},
		{"unknown beside a good one", "read-only+fast", "fast"},
		{"zero raw value", "0x0", ""},
		{"malformed raw value", "0xZZ", ""},
		{"two kernel accesses", "read-only+write-only", ""},
		{"read-write and read-only", "read-write,read-only", ""},
		{"use with alloc host ptr", "use-host-ptr+alloc-host-ptr", ""},
		{"use with copy host ptr", "use-host-ptr+copy-host-ptr", ""},
		{"two host accesses", "host-read-only+host-no-access", ""},
	} {
		_, err := ParseMemFlags(c.in)
		if err == nil {
			t.Errorf("%s: ParseMemFlags(%q) gave no error", c.name, c.in)
			continue
		}
		var u *UnknownFlagError
		if isUnknown := errors.As(err, &u); isUnknown != (c.unknown != "") || isUnknown && u.Name != c.unknown {
			t.Errorf("%s: error %v (unknown flag error: %v), want one naming %q only for an unknown name", c.name, err, isUnknown, c.unknown)
		} else if want := "unknown flag " + strconv.Quote(c.unknown) + ": choose read-write, write-only, read-only, use-host-ptr, alloc-host-ptr, copy-host-ptr, " +
			"host-write-only, host-read-only, host-no-access, a C name (CL_MEM_...), or a raw value such as 0x800000"; isUnknown && err.Error() != want {
			// The message is what a user reads: it says which word was not a flag, and what is.
			t.Errorf("%s: %q, want %q", c.name, err, want)
		}
	}
}

// The standard flags' names are listed in bit order, each a name ParseMemFlags reads back to its bit.
func TestFlagNamesAreTheStandardFlagsInBitOrder(t *testing.T) {
	names := FlagNames()
	if len(names) != len(StandardFlags) || names[0] != "read-write" {
		t.Fatalf("FlagNames() = %q, want the %d standard flags, read-write first", names, len(StandardFlags))
	}
	for i, n := range names {
		if i > 0 && StandardFlags[i].Value <= StandardFlags[i-1].Value {
			t.Errorf("%s comes after a higher bit", n)
		}
		f, err := ParseMemFlags(n)
		if err != nil || f&StandardFlags[i].Value == 0 {
			t.Errorf("%s parses to %#x, %v: want its bit %#x", n, uint64(f), err, uint64(StandardFlags[i].Value))
		}
	}
}

// Flags are written with read-write implied beside other flags, standard names in bit order, and other
// bits as one hex value; what String writes, ParseMemFlags reads back to the same flags.
func TestMemFlagsStringRoundTrips(t *testing.T) {
	for _, c := range []struct {
		name string
		f    MemFlags
		want string
	}{
		{"the default", MemReadWrite, "read-write"},
		{"no bits", 0, "read-write"},
		{"read-write implied", MemReadWrite | MemUseHostPtr, "use-host-ptr"},
		{"bit order", MemAllocHostPtr | MemReadOnly, "read-only+alloc-host-ptr"},
		{"a vendor bit", MemReadWrite | 0x800000, "0x800000"},
		{"vendor bits as one value", MemWriteOnly | 0x800000 | 0x100000, "write-only+0x900000"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%s: String() = %q, want %q", c.name, got, c.want)
		}
		back, err := ParseMemFlags(c.want)
		if want := withAccess(c.f); err != nil || back != want {
			t.Errorf("%s: ParseMemFlags(%q) = %#x, %v; want %#x", c.name, c.want, uint64(back), err, uint64(want))
		}
	}
}

// withAccess is f as OpenCL reads it: read-write where it names no kernel access.
func withAccess(f MemFlags) MemFlags {
	if f&(MemReadWrite|MemWriteOnly|MemReadOnly) == 0 {
		return f | MemReadWrite
	}
	return f
}

// Flags are written as C with every standard bit by its C name, known vendor bits by value with their C
// name beside, and the rest raw, all joined by " | " inside a cl_mem_flags cast.
func TestMemFlagsC(t *testing.T) {
	for _, c := range []struct {
		name string
		f    MemFlags
		want string
	}{
		{"the default", MemReadWrite, "(cl_mem_flags)(CL_MEM_READ_WRITE)"},
		{"two standard flags", MemReadWrite | MemUseHostPtr, "(cl_mem_flags)(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR)"},
		{"a known vendor bit", MemReadOnly | 1<<23, "(cl_mem_flags)(CL_MEM_READ_ONLY | 0x800000 /* CL_MEM_ALLOW_UNRESTRICTED_SIZE_INTEL */)"},
		{"an unknown bit", MemReadWrite | 1<<40, "(cl_mem_flags)(CL_MEM_READ_WRITE | 0x10000000000)"},
	} {
		if got := c.f.C(); got != c.want {
			t.Errorf("%s: C() = %q, want %q", c.name, got, c.want)
		}
	}
}

// A buffer takes its own host block with use-host-ptr, the shared source block with copy-host-ptr, and
// none otherwise.
func TestHostPtrFollowsTheHostPointerFlags(t *testing.T) {
	for _, c := range []struct {
		name string
		f    MemFlags
		want HostPtrKind
	}{
		{"read-write", MemReadWrite, HostPtrNone},
		{"alloc-host-ptr takes none from the tool", MemReadWrite | MemAllocHostPtr, HostPtrNone},
		{"use-host-ptr", MemReadOnly | MemUseHostPtr, HostPtrUse},
		{"copy-host-ptr", MemReadWrite | MemCopyHostPtr, HostPtrCopy},
		{"copy with alloc", MemReadWrite | MemCopyHostPtr | MemAllocHostPtr, HostPtrCopy},
	} {
		if got := c.f.HostPtr(); got != c.want {
			t.Errorf("%s: HostPtr() = %d, want %d", c.name, got, c.want)
		}
	}
}

// The vendor flags among a set are the table's entries whose bit it holds, in table order; only the one
// documented to lift the maximum allocation is returned by LiftsMaxAlloc.
func TestVendorFlagsAndLiftsMaxAlloc(t *testing.T) {
	amd, intelHost, intelSize := VendorFlags[0], VendorFlags[1], VendorFlags[2]
	f := MemReadWrite | intelSize.Value | amd.Value | 1<<40
	got := f.Vendor()
	var names []string
	for _, v := range got {
		names = append(names, v.C)
	}
	if want := []string{amd.C, intelSize.C}; !slices.Equal(names, want) {
		t.Errorf("Vendor() = %q, want %q", names, want)
	}
	if l := f.LiftsMaxAlloc(); l == nil || l.C != intelSize.C || !l.LiftsMaxAlloc {
		t.Errorf("LiftsMaxAlloc() = %+v, want %s", l, intelSize.C)
	}
	if l := (MemReadWrite | amd.Value | intelHost.Value).LiftsMaxAlloc(); l != nil {
		t.Errorf("flags without a lifting vendor flag: LiftsMaxAlloc() = %+v, want nil", l)
	}
	if v := (MemReadWrite | MemUseHostPtr).Vendor(); v != nil {
		t.Errorf("standard flags only: Vendor() = %+v, want none", v)
	}
}

// A job's recorded flags read back as the default when empty (older results, and jobs that asked for
// none), and as what ParseMemFlags reads otherwise.
func TestRecordedFlagsReadBack(t *testing.T) {
	if got := FlagsName(""); got != "read-write" {
		t.Errorf(`FlagsName("") = %q, want read-write`, got)
	}
	if got := FlagsName("use-host-ptr"); got != "use-host-ptr" {
		t.Errorf("FlagsName(use-host-ptr) = %q, want it as recorded", got)
	}
	if f, err := JobFlags(""); err != nil || f != DefaultFlags {
		t.Errorf(`JobFlags("") = %#x, %v; want the default`, uint64(f), err)
	}
	if f, err := JobFlags("read-only+use-host-ptr"); err != nil || f != MemReadOnly|MemUseHostPtr {
		t.Errorf("JobFlags(read-only+use-host-ptr) = %#x, %v", uint64(f), err)
	}
	if _, err := JobFlags("nonsense"); err == nil {
		t.Errorf("JobFlags(nonsense) gave no error")
	}
}
