package probe

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/icd"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/internal/supervise"
	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// DiagnoseICDs loads every registered runtime on its own, each in a supervised child (a runtime can crash
// or hang at load), with the loader at libPath pointed at that runtime alone: what each gave, and for one
// that gave nothing, why (the dynamic linker's words, the device nodes it needs and whether this user can
// open them). dir is the folder (or file) of .icd files read: OCL_ICD_VENDORS, else /etc/OpenCL/vendors.
func DiagnoseICDs(ctx context.Context, libPath string, setup time.Duration) (dir string, out []result.ICDStatus) {
	dir, files := icd.Registered(sample.System.Etc)
	if len(files) == 0 {
		return dir, nil
	}
	// The loader is pointed at a folder of one .icd file naming the one runtime: it lists only that
	// (ocl-icd and Khronos' loader both read OCL_ICD_VENDORS; ocl-icd ignores OCL_ICD_FILENAMES beside it).
	tmp, err := os.MkdirTemp("", "clmemprobe-icd-")
	if err != nil {
		return dir, nil
	}
	defer os.RemoveAll(tmp)
	groups, end := session(false)
	defer end()
	who := ""
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	// Each runtime is loaded in a child of its own, a few at once: they are independent, and one at a time
	// a machine with several runtimes paid each one's start in turn (260 ms for NVIDIA's alone); a runtime
	// can take hundreds of MiB to load, so a folder of many .icd files is not loaded all at once.
	out = make([]result.ICDStatus, len(files))
	asked := make([]bool, len(files))
	slots := make(chan struct{}, min(runtime.NumCPU(), maxICDsAtOnce))
	var wg sync.WaitGroup
	for i, f := range files {
		alone := filepath.Join(tmp, strconv.Itoa(i))
		if ctx.Err() != nil || os.Mkdir(alone, 0o700) != nil || os.WriteFile(filepath.Join(alone, "runtime.icd"), []byte(f.Library+"\n"), 0o600) != nil {
			break
		}
		asked[i] = true
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			out[i] = diagnoseICD(ctx, f, libPath, alone, setup, groups)
			out[i].User = who
		})
	}
	wg.Wait()
	n := 0
	for n < len(asked) && asked[n] {
		n++
	}
	return dir, out[:n]
}

// OneRuntimeRegistered says whether the ICD loader at libPath has one runtime to load: it is the default
// loader, with no source of runtimes besides the .icd files (OCL_ICD_FILENAMES, OPENCL_VENDOR_PATH), and
// one .icd file is registered. Then an inventory can tell what that runtime gave (RegisteredRuntimeGave);
// where more are, it cannot tell which gave what, and each is loaded on its own (DiagnoseICDs).
func OneRuntimeRegistered(libPath string) bool {
	if libPath != cl.DefaultLibrary || os.Getenv("OCL_ICD_FILENAMES") != "" || os.Getenv("OPENCL_VENDOR_PATH") != "" {
		return false
	}
	_, files := icd.Registered(sample.System.Etc)
	return len(files) == 1
}

// RegisteredRuntimeGave says whether an inventory listed through the ICD loader shows that the one runtime
// registered (OneRuntimeRegistered) gave its devices, so that loading it on its own would add nothing:
// every platform listed has a device.
func RegisteredRuntimeGave(libPath string, inv result.Inventory) bool {
	if len(inv) == 0 || !OneRuntimeRegistered(libPath) {
		return false
	}
	for _, p := range inv {
		if len(p.Devices) == 0 {
			return false
		}
	}
	return true
}

// maxICDsAtOnce bounds the runtimes DiagnoseICDs loads at once.
const maxICDsAtOnce = 4

// diagnoseICD loads one runtime in a child and says what it gave.
func diagnoseICD(ctx context.Context, f icd.File, libPath, alone string, setup time.Duration, groups *supervise.Groups) result.ICDStatus {
	s := result.ICDStatus{File: f.Path, Library: f.Library}
	e, err := supervise.Run(ctx, supervise.Child{Spec: wire.Spec{Kind: wire.KindICD, Library: libPath, ICDLibrary: f.Library},
		Env: []string{"OCL_ICD_VENDORS=" + alone}, Limits: Limits{Setup: setup},
		ReturnAtResult: true, Groups: groups})
	if err != nil {
		s.Outcome, s.Detail = result.ICDCrashed, "could not be asked: "+err.Error()
		return s
	}
	a, err := supervise.Answer[wire.ICDAnswer](e)
	if err != nil {
		s.Outcome, s.Detail = result.ICDCrashed, supervise.How(err)
		return s
	}
	switch {
	case a.Missing:
		s.Outcome, s.Detail = result.ICDNotFound, a.LoadError
	case a.NotICD:
		s.Outcome, s.Detail = result.ICDNotAnICD, a.LoadError
	case a.LoadError != "":
		s.Outcome, s.Detail = result.ICDNotLoadable, linkerWords(a.LoadError, f.Library)
	case a.Error != "":
		s.Outcome, s.Detail = result.ICDNotLoadable, a.Error
	case len(a.Devices) == 0:
		s.Outcome = result.ICDNoPlatform
		if need, ok := icd.NeedOf(f.Library); ok {
			s.Vendor, s.Drivers, s.Nodes = need.Vendor, need.Drivers, icd.Nodes(sample.System.Dev, need)
		}
	default:
		s.Platforms = len(a.Devices)
		for _, n := range a.Devices {
			s.Devices += n
		}
		s.Outcome = result.ICDOK
		if s.Devices == 0 {
			s.Outcome = result.ICDNoDevices
			if need, ok := icd.NeedOf(f.Library); ok {
				s.Vendor, s.Drivers, s.Nodes = need.Vendor, need.Drivers, icd.Nodes(sample.System.Dev, need)
			}
		}
	}
	return s
}

// linkerWords is the dynamic linker's message without the error's own prefix: "libigdgmm.so.12: cannot
// open shared object file: No such file or directory" (the library's path before it, said already, too).
func linkerWords(msg, library string) string {
	if _, rest, ok := strings.Cut(msg, ": "); ok {
		msg = rest
	}
	return strings.TrimPrefix(msg, library+": ")
}
