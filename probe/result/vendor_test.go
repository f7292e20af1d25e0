package result

import "testing"

// TestVendorOf: the platforms the runtimes report (and the tests' stand-ins) each give their vendor; a
// runtime named for itself wins over the hardware vendor of its devices: PoCL on an Intel CPU is PoCL, where
// a substring of the platform's and device's strings ("intel") had named Intel's flag to lift its maximum.
func TestVendorOf(t *testing.T) {
	for _, c := range []struct {
		name, vendor, device string
		want                 Vendor
	}{
		{"Intel(R) OpenCL Graphics", "Intel(R) Corporation", "Intel(R) Corporation", VendorIntelGPU},
		{"Intel(R) OpenCL HD Graphics", "Intel(R) Corporation", "Intel(R) Corporation", VendorIntelGPU},
		{"Intel(R) OpenCL", "Intel(R) Corporation", "Intel(R) Corporation", VendorIntelOther},
		{"Intel(R) CPU Runtime for OpenCL(TM) Applications", "Intel(R) Corporation", "Intel(R) Corporation", VendorIntelOther},
		{"AMD Accelerated Parallel Processing", "Advanced Micro Devices, Inc.", "Advanced Micro Devices, Inc.", VendorAMD},
		{"NVIDIA CUDA", "NVIDIA Corporation", "NVIDIA Corporation", VendorNVIDIA},
		{"Portable Computing Language", "The pocl project", "GenuineIntel", VendorPoCL},
		{"Portable Computing Language", "The pocl project", "AuthenticAMD", VendorPoCL},
		{"rusticl", "Mesa/X.org", "Mesa", VendorRusticl},
		{"Clover", "Mesa", "AMD", VendorClover},
		{"Oclgrind", "University of Bristol", "University of Bristol", VendorOther},
		{"faultcl", "clmemprobe tests", "clmemprobe tests", VendorFaultCL},
		{"NVIDIA CUDA (faultcl standing in)", "clmemprobe tests", "clmemprobe tests", VendorNVIDIA},
		{"Intel(R) OpenCL Graphics", "clmemprobe tests", "clmemprobe tests", VendorIntelGPU},
		{"PowerVR", "Imagination Technologies", "Imagination Technologies", VendorImagination},
		{"QUALCOMM Snapdragon(TM)", "QUALCOMM", "QUALCOMM", VendorQualcomm},
	} {
		if got := VendorOf(Platform{Name: c.name, Vendor: c.vendor}, Device{Vendor: c.device}); got != c.want {
			t.Errorf("%q by %q with a %q device: %q, want %q", c.name, c.vendor, c.device, got, c.want)
		}
	}
	if !VendorIntelGPU.Is("Intel") || !VendorIntelOther.Is("intel") || VendorPoCL.Is("Intel") || !VendorAMD.Is("AMD") || VendorNVIDIA.Is("AMD") {
		t.Error("Is names the hardware vendors wrong")
	}
}

// TestVendorOfLibraries: a traced program's runtime, by the libraries it mapped.
func TestVendorOfLibraries(t *testing.T) {
	for lib, want := range map[string]Vendor{
		"libpocl.so.2":          VendorPoCL,
		"libnvidia-opencl.so.1": VendorNVIDIA,
		"libigdrcl.so":          VendorIntelGPU,
		"libintelocl.so":        VendorIntelOther,
		"libamdocl64.so":        VendorAMD,
		"libRusticlOpenCL.so.1": VendorRusticl,
		"libMesaOpenCL.so.1":    VendorClover,
		"libfaultcl.so":         VendorFaultCL,
		"liboclgrind-rt-icd.so": VendorOther,
	} {
		if got := VendorOfLibraries([]string{lib}); got != want {
			t.Errorf("%s: %q, want %q", lib, got, want)
		}
	}
}

// TestEveryFlagsVendorIsKnown: each vendor the flags' table names is one VendorOf can give, so that remedy
// tries its flags on its runtime (the Imagination and Qualcomm flags were tried by substring before the
// vendor type, and by no vendor for a moment after it).
func TestEveryFlagsVendorIsKnown(t *testing.T) {
	known := []Vendor{VendorIntelGPU, VendorIntelOther, VendorAMD, VendorNVIDIA, VendorPoCL, VendorRusticl, VendorClover,
		VendorImagination, VendorQualcomm, VendorFaultCL}
	for _, f := range VendorFlags {
		ok := false
		for _, v := range known {
			ok = ok || v.Is(f.Vendor)
		}
		if !ok {
			t.Errorf("%s: no vendor is %q", f.C, f.Vendor)
		}
	}
}
