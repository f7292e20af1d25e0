package sample

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/nvml"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// procFixtures holds comm files of made-up processes (PIDs past Linux's pid_max, so never this test's own)
// and a /proc/self/status whose NStgid names this process 5000001 in an outer namespace.
var procFixtures = Under(filepath.Join("testdata", "procs"))

// Names come from the root's /proc, own is marked by any of this process's ids, and the list runs from the
// largest memory down, the unknown figures last.
func TestProcessesOfNamesSortsAndMarksOwn(t *testing.T) {
	own := ownIn(OwnPIDs(procFixtures))
	for _, tc := range []struct {
		name  string
		infos []nvml.Process
		want  []result.DeviceProcess
	}{
		{"none", nil, []result.DeviceProcess{}},
		{"shared device", []nvml.Process{
			{PID: 5000200, UsedBytes: 300 << 20, UsedKnown: true, Graphics: true},
			{PID: 5000300}, // memory unknown, not visible here
			{PID: 5000001, UsedBytes: 2 << 30, UsedKnown: true, Compute: true},
			{PID: 5000100, UsedBytes: 8 << 30, UsedKnown: true, Compute: true},
			{PID: 5000400, UsedBytes: 123, UsedKnown: false}, // a stray figure beside "unknown" is not kept
		}, []result.DeviceProcess{
			{PID: 5000100, Name: "python3", UsedBytes: 8 << 30},
			{PID: 5000001, Name: "clmemprobe", UsedBytes: 2 << 30, Own: true},
			{PID: 5000200, Name: "Xorg", UsedBytes: 300 << 20},
			{PID: 5000300},
			{PID: 5000400, Name: "ollama serve"},
		}},
		{"equal memory in pid order", []nvml.Process{
			{PID: 5000400, UsedBytes: 1 << 20, UsedKnown: true}, {PID: 5000100, UsedBytes: 1 << 20, UsedKnown: true},
		}, []result.DeviceProcess{
			{PID: 5000100, Name: "python3", UsedBytes: 1 << 20}, {PID: 5000400, Name: "ollama serve", UsedBytes: 1 << 20},
		}},
		{"this process by its own pid", []nvml.Process{{PID: uint32(os.Getpid()), UsedBytes: 1, UsedKnown: true}},
			[]result.DeviceProcess{{PID: uint32(os.Getpid()), UsedBytes: 1, Own: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := processesOf(tc.infos, procFixtures, own)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if got := processesOf([]nvml.Process{{PID: 5000001}}, procFixtures, nil); got[0].Own {
		t.Errorf("without an own test nothing is own: %+v", got)
	}
}

// OwnPIDs reads NStgid, else NSpid, and always holds os.Getpid(); a status without either, or none at all,
// leaves os.Getpid() alone.
func TestOwnPIDsFromNamespaceIDs(t *testing.T) {
	self := uint32(os.Getpid())
	if got, want := OwnPIDs(procFixtures), []uint32{self, 5000001, 5000002}; !reflect.DeepEqual(got, want) {
		t.Errorf("NStgid fixture: %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name, status string
		want         []uint32
	}{
		{"NSpid only", "Name:\tx\nNSpid:\t900\t17\n", []uint32{self, 900, 17}},
		{"no namespace lines", "Name:\tx\nPid:\t17\n", []uint32{self}},
		{"garbage", "NStgid:\tnope\t-1\t31\n", []uint32{self, 31}},
	} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "proc", "self"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "proc", "self", "status"), []byte(tc.status), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := OwnPIDs(Under(dir)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := OwnPIDs(Under(t.TempDir())); !reflect.DeepEqual(got, []uint32{self}) {
		t.Errorf("no /proc: %v, want only os.Getpid()", got)
	}
}

// TestNVMLProcessesLive lists what NVML sees on every device of this machine, through the sampler's
// Processes, and prints it. It skips where NVML is absent. Where an NVIDIA OpenCL device is there too, it
// first fills a 64 MiB buffer on it, so the list must hold this process, marked own.
func TestNVMLProcessesLive(t *testing.T) {
	n := openNVMLLive(t)
	s := &nvmlSampler{n: n, devs: n.Devices, root: System}
	pcis := make([]string, len(n.Devices))
	for i, d := range n.Devices {
		s.order, pcis[i] = append(s.order, i), d.PCIBusID
	}
	held, release := holdOpenCLBuffer(t, pcis)
	defer release()
	t.Logf("own ids %v", OwnPIDs(System))
	got, err := s.Processes()
	if err != nil {
		t.Errorf("Processes: %v", err)
	}
	for _, i := range s.order {
		t.Logf("device %d (%s): %d process(es)", i, pcis[i], len(got[i]))
		for _, p := range got[i] {
			t.Logf("  pid %-8d %-16q %12d bytes  own=%v", p.PID, p.Name, p.UsedBytes, p.Own)
		}
	}
	if held < 0 {
		// The listing was read, but nothing here can say it is right: a skip, not a pass.
		t.Skip("no OpenCL device at an NVML device's PCI address held a buffer: the own-process mark is not checked")
	}
	for _, p := range got[held] {
		if p.Own {
			return
		}
	}
	t.Errorf("device %d holds this process's buffer, yet no process there is marked own (ids %v): NVML may "+
		"name processes in a PID namespace this /proc does not show", held, OwnPIDs(System))
}

// noOpenCL says why no OpenCL buffer is held: a log line (the caller then skips), or a failure where
// CLMEMPROBE_REQUIRE_OPENCL=1 says this machine has a runtime, so that a broken one is never taken as none.
func noOpenCL(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CLMEMPROBE_REQUIRE_OPENCL") == "1" {
		t.Fatalf("required by CLMEMPROBE_REQUIRE_OPENCL=1: "+format, args...)
	}
	t.Logf(format, args...)
}

// holdOpenCLBuffer fills a 64 MiB buffer on the first OpenCL device at one of the PCI addresses, and
// returns that device's index in pcis (-1 where no OpenCL device matched) and what releases it.
func holdOpenCLBuffer(t *testing.T, pcis []string) (int, func()) {
	lib, err := cl.Open(cl.ResolveLibraryPath(""))
	if err != nil {
		noOpenCL(t, "no OpenCL buffer held: %v", err)
		return -1, func() {}
	}
	_, devs, err := lib.AllDevices()
	if err != nil {
		noOpenCL(t, "no OpenCL buffer held: %v", err)
		return -1, func() {}
	}
	for _, pd := range devs {
		for _, d := range pd {
			for i, pci := range pcis {
				if d.PCIBusID == "" || !SamePCI(d.PCIBusID, pci) {
					continue
				}
				release, err := fillOn(lib, d, 64<<20)
				if err != nil {
					noOpenCL(t, "no OpenCL buffer held on %s: %v", pci, err)
					return -1, func() {}
				}
				t.Logf("holding a 64 MiB OpenCL buffer on device %d (%s, %s)", i, pci, d.Name)
				return i, release
			}
		}
	}
	t.Logf("no OpenCL device at the NVML devices' PCI addresses %v", pcis)
	return -1, func() {}
}

// fillOn creates and fills one buffer of size bytes on d, waiting until the device has it.
func fillOn(lib *cl.Library, d *cl.Device, size uint64) (func(), error) {
	ctx, err := lib.CreateContext([]*cl.Device{d}, 0)
	if err != nil {
		return nil, err
	}
	q, err := ctx.CreateQueue(d, false)
	if err != nil {
		ctx.Release()
		return nil, err
	}
	release := func() { q.Release(); ctx.Release() }
	m, err := ctx.CreateBuffer(cl.MEM_READ_WRITE, size, 0)
	if err != nil {
		release()
		return nil, err
	}
	q.SetFillPattern([]byte{0x5a})
	if _, err = q.Fill(m, size, false); err == nil {
		err = q.Finish()
	}
	if err != nil {
		_ = ctx.ReleaseMem(m)
		release()
		return nil, err
	}
	return func() { _ = ctx.ReleaseMem(m); release() }, nil
}

// TestNVMLSamplerLive picks NVML for every NVIDIA GPU (given here in reverse, with their function numbers
// changed, as a runtime may report them) and reads each at its run index; it skips where NVML is absent.
func TestNVMLSamplerLive(t *testing.T) {
	n := openNVMLLive(t)
	var ts []Target
	for i := len(n.Devices) - 1; i >= 0; i-- {
		id := n.Devices[i].PCIBusID
		ts = append(ts, Target{Index: 10 + i, PCIBusID: strings.ToUpper(id[:len(id)-1]) + "1"})
	}
	s, why := DeviceSamplerFor(ts, System)
	ns, ok := s.(*nvmlSampler)
	if !ok {
		t.Fatalf("sampler %v, want NVML: %s", s, why)
	}
	defer ns.n.Close()
	got, err := s.Read()
	if err != nil || len(got) != len(ts) {
		t.Fatalf("%+v, %v", got, err)
	}
	for k, d := range got {
		if d.Device != ts[k].Index || d.FreeBytes == 0 && d.UsedBytes == 0 {
			t.Errorf("reading %d: %+v, want device %d", k, d, ts[k].Index)
		}
	}
}

// openNVMLLive opens NVML for a live test, closed when the test ends; the test skips where NVML is absent.
func openNVMLLive(t *testing.T) *nvml.NVML {
	t.Helper()
	n, err := nvml.Open()
	if errors.Is(err, nvml.ErrorLibraryNotFound) || errors.Is(err, nvml.ErrorDriverNotLoaded) {
		t.Skipf("no NVML here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}
