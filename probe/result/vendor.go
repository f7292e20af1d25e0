package result

import "strings"

// Vendor is whose OpenCL runtime a platform is, worked out once (VendorOf, VendorOfLibraries) from what
// the runtime says of itself, and used wherever a vendor decides something: the runtime's known behaviour,
// its logging variables and settings, its flags, its bug tracker, how its batches report a failure. Intel's
// GPU runtime (NEO) is told apart from Intel's others, and rusticl from Clover, where facts differ.
type Vendor string

// The vendors the tool knows something of; VendorOther is any other (oclgrind, a runtime not met yet).
const (
	VendorOther       Vendor = ""
	VendorIntelGPU    Vendor = "intel-neo"    // Intel's compute-runtime (NEO): "Intel(R) OpenCL Graphics"
	VendorIntelOther  Vendor = "intel"        // Intel's CPU and FPGA-emulation runtimes
	VendorAMD         Vendor = "amd"          // AMD's ROCm (CLR) and APP
	VendorNVIDIA      Vendor = "nvidia"       // NVIDIA's driver ("NVIDIA CUDA")
	VendorPoCL        Vendor = "pocl"         // Portable Computing Language
	VendorRusticl     Vendor = "mesa-rusticl" // Mesa's rusticl
	VendorClover      Vendor = "mesa-clover"  // Mesa's Clover
	VendorImagination Vendor = "imagination"  // Imagination's PowerVR
	VendorQualcomm    Vendor = "qualcomm"     // Qualcomm's Adreno
	VendorFaultCL     Vendor = "faultcl"      // the project's fault-injection runtime
)

// VendorOf is the vendor of a platform, by its name and vendor strings and those of its devices
// (platformWords).
func VendorOf(p Platform, devices ...Device) Vendor {
	text := p.Name + " " + p.Vendor
	for _, d := range devices {
		text += " " + d.Vendor
	}
	return platformWords.match(text)
}

// VendorOfLibraries is the vendor of the runtime libraries a traced program mapped, where no platform was
// recorded (libraryWords).
func VendorOfLibraries(libs []string) Vendor { return libraryWords.match(strings.Join(libs, " ")) }

// vendorWords is an ordered table of words and the vendor the first of them found in a text names.
type vendorWords []struct {
	words  []string // lower case
	vendor Vendor
}

// platformWords read a platform's strings: a runtime named for itself (PoCL, Mesa's) before the hardware
// vendors whose devices it may drive (PoCL on an Intel CPU has a "GenuineIntel" device), and the
// fault-injection runtime last (its tests give it the name of a runtime it stands in for).
var platformWords = vendorWords{
	{[]string{"portable computing language", "pocl"}, VendorPoCL},
	{[]string{"rusticl"}, VendorRusticl},
	{[]string{"clover", "mesa"}, VendorClover},
	{[]string{"nvidia"}, VendorNVIDIA},
	{[]string{"advanced micro devices", "amd"}, VendorAMD},
	{[]string{"intel(r) opencl graphics", "intel(r) opencl hd graphics"}, VendorIntelGPU},
	{[]string{"intel"}, VendorIntelOther},
	{[]string{"imagination", "powervr"}, VendorImagination},
	{[]string{"qualcomm", "adreno"}, VendorQualcomm},
	{[]string{"faultcl"}, VendorFaultCL},
}

// libraryWords read the file names of runtime libraries: libpocl, libnvidia-opencl, libigdrcl (NEO),
// libintelocl, libamdocl64, libRusticlOpenCL, libMesaOpenCL (Clover), libfaultcl.
var libraryWords = vendorWords{
	{[]string{"pocl"}, VendorPoCL},
	{[]string{"nvidia"}, VendorNVIDIA},
	{[]string{"igdrcl"}, VendorIntelGPU},
	{[]string{"intel"}, VendorIntelOther},
	{[]string{"amdocl", "rocm"}, VendorAMD},
	{[]string{"rusticl"}, VendorRusticl},
	{[]string{"mesa"}, VendorClover},
	{[]string{"faultcl"}, VendorFaultCL},
}

// match is the vendor of the first row with a word in text (any case), VendorOther where none has.
func (t vendorWords) match(text string) Vendor {
	text = strings.ToLower(text)
	for _, row := range t {
		for _, w := range row.words {
			if strings.Contains(text, w) {
				return row.vendor
			}
		}
	}
	return VendorOther
}

// Intel says the runtime is one of Intel's.
func (v Vendor) Intel() bool { return v == VendorIntelGPU || v == VendorIntelOther }

// Mesa says the runtime is one of Mesa's.
func (v Vendor) Mesa() bool { return v == VendorRusticl || v == VendorClover }

// Is says whether the runtime is the named hardware vendor's, as the vendor flags' table names them
// ("Intel", "AMD", "Imagination", "Qualcomm"; TestEveryFlagsVendorIsKnown holds the two together).
func (v Vendor) Is(name string) bool {
	switch strings.ToLower(name) {
	case "intel":
		return v.Intel()
	case "amd":
		return v == VendorAMD
	case "nvidia":
		return v == VendorNVIDIA
	case "imagination":
		return v == VendorImagination
	case "qualcomm":
		return v == VendorQualcomm
	}
	return false
}
