package sample

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

var fixtures = Under("testdata")

// The host sampler reads everything under its root: a fixture tree gives the fixture's figures.
func TestHostFiguresFromAFixtureTree(t *testing.T) {
	var s result.Sample
	if err := NewHost(fixtures).Read(&s, true); err != nil {
		t.Fatal(err)
	}
	// The fixture's fd folder holds seven entries (0, 1, 2 and 5 to 8); "." and ".." are not descriptors.
	want := result.Sample{RSSBytes: 100000 << 10, VMSBytes: 1500000 << 10, HWMBytes: 123456 << 10, AvailBytes: 20000000 << 10,
		CommittedBytes: 3000000 << 10, Mappings: 3, OpenFDs: 7, LockedBytes: 512 << 10}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
	if n, err := fixtures.MaxMapCount(); err != nil || n != 65530 {
		t.Fatalf("max_map_count = %d, %v", n, err)
	}
	if _, err := Under(t.TempDir()).Meminfo(); err == nil {
		t.Errorf("a tree without meminfo must be an error")
	}
}

func TestFdinfoCountsEachClientOnce(t *testing.T) {
	s, why := newFdinfoSampler([]Target{{Index: 0, PCIBusID: "0000:03:00.0"}, {Index: 1, PCIBusID: "0000:04:00.0"}}, fixtures)
	if s == nil {
		t.Fatalf("fdinfo sampler does not apply: %s", why)
	}
	got, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]uint64{0: 4096<<10 + 1<<30, 1: 300 << 20} // fds 5 and 6 are one client
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for _, d := range got {
		if d.UsedBytes != want[d.Device] {
			t.Errorf("device %d: %d bytes, want %d", d.Device, d.UsedBytes, want[d.Device])
		}
	}
	if s, _ := newFdinfoSampler([]Target{{Index: 0, PCIBusID: "0000:09:00.0"}}, fixtures); s != nil {
		t.Errorf("a device without a DRM client must not get the fdinfo sampler")
	}
}

func TestAMDGPUSysfsByPCIAddress(t *testing.T) {
	s, why := newAMDGPUSysfsSampler([]Target{{Index: 2, PCIBusID: "0000:03:00.0"}}, fixtures)
	if s == nil {
		t.Fatalf("amdgpu sysfs sampler does not apply: %s", why)
	}
	got, err := s.Read()
	if err != nil || len(got) != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	if got[0] != (result.DeviceSample{Device: 2, UsedBytes: 8 << 30, FreeBytes: 8 << 30, GTTUsedBytes: 2 << 30}) {
		t.Errorf("got %+v", got[0])
	}
	if s, why := newAMDGPUSysfsSampler([]Target{{Index: 0, PCIBusID: "0000:05:00.0"}}, fixtures); s != nil || !errors.Is(why, ErrNotThere) {
		t.Errorf("no card at that address: sampler %v, reason %v, want ErrNotThere", s, why)
	}
	if _, why := newAMDGPUSysfsSampler([]Target{{Index: 0}}, fixtures); !errors.Is(why, ErrNoPCIBusID) {
		t.Errorf("a device without a bus id: reason %v, want ErrNoPCIBusID", why)
	}
}

func TestCLQuerySampler(t *testing.T) {
	free := uint64(3 << 30)
	s, _ := newCLQuerySampler([]Target{{Index: 1, GlobalMem: 4 << 30, FreeMemory: func() (uint64, error) { return free, nil }}})
	if s == nil {
		t.Fatal("query sampler does not apply")
	}
	got, _ := s.Read()
	if got[0].UsedBytes != 1<<30 || got[0].FreeBytes != free {
		t.Errorf("got %+v", got[0])
	}
	invalid := errors.New("CL_INVALID_VALUE")
	failing := func() (uint64, error) { return 0, invalid }
	if s, why := newCLQuerySampler([]Target{{Index: 0, FreeMemory: failing}}); s != nil || !errors.Is(why, invalid) {
		t.Errorf("a query that fails must say with the runtime's error: %v %v", s, why)
	}
	if s, why := newCLQuerySampler([]Target{{Index: 0}}); s != nil || !errors.Is(why, ErrNotThere) {
		t.Errorf("a runtime without the query must say so: %v %v", s, why)
	}
}

// With no NVML, no query, no sysfs card and no DRM client, no sampler applies, and each one says why, in
// the order they were tried, one reason each (errors.Is tells them apart), joined into one line.
func TestNoSamplerSaysWhy(t *testing.T) {
	s, err := DeviceSamplerFor([]Target{{Index: 0}}, fixtures)
	if s != nil {
		t.Fatalf("got sampler %s", s.Name())
	}
	var why Unavailable
	if !errors.As(err, &why) || len(why) != 4 {
		t.Fatalf("reason %v (%T), want one of each of the four samplers", err, err)
	}
	for i, part := range []string{"NVML", "CL_DEVICE_GLOBAL_FREE_MEMORY_AMD", "amdgpu sysfs", "DRM fdinfo"} {
		if !strings.HasPrefix(why[i].Error(), part) {
			t.Errorf("reason %d %q is not %s's", i, why[i], part)
		}
	}
	if !errors.Is(err, ErrNoPCIBusID) || !errors.Is(err, ErrNotThere) || strings.Contains(err.Error(), "\n") || strings.Count(err.Error(), "; ") != 3 {
		t.Errorf("reason %q: want the kinds findable and one line of four parts", err)
	}
}

// A status file without VmLck (gVisor's /proc has none) tells nothing of locked memory: HasLocked is false,
// and a fixture's VmLck is read in bytes.
func TestLockedMemoryIsReadWhereTheKernelTells(t *testing.T) {
	pm, err := fixtures.SelfMemory()
	if err != nil || !pm.HasLocked || pm.Locked != 512<<10 {
		t.Errorf("fixture: %+v, %v; want VmLck 512 kB", pm, err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc", "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proc", "self", "status"), []byte("VmRSS:\t 10 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if pm, err := Under(dir).SelfMemory(); err != nil || pm.HasLocked || pm.Locked != 0 || pm.RSS != 10<<10 {
		t.Errorf("a status without VmLck: %+v, %v", pm, err)
	}
}

// The count reads every getdents batch: a folder of 3000 entries through a buffer of a few records each
// time is 3000, and "." and ".." are never among them.
func TestOpenFDsCountsEveryBatch(t *testing.T) {
	dir := t.TempDir()
	fdDir := filepath.Join(dir, "proc", "self", "fd")
	if err := os.MkdirAll(fdDir, 0o755); err != nil {
		t.Fatal(err)
	}
	const entries = 3000
	for i := range entries {
		if err := os.WriteFile(filepath.Join(fdDir, fmt.Sprint(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, size := range []int{64, 4096, 64 << 10} {
		if n, err := Under(dir).OpenFDs(make([]byte, size)); err != nil || n != entries {
			t.Errorf("a %d-byte buffer: %d entries, %v; want %d", size, n, err, entries)
		}
	}
	// The sampler keeps the folder open and reads it again from its start each time.
	h := NewHost(Under(dir))
	for range 3 {
		if n, err := h.openFDs(); err != nil || n != entries {
			t.Fatalf("read again: %d, %v", n, err)
		}
	}
}

// On the real /proc: every descriptor opened shows in the count, one for one, and a count costs no
// allocation however many descriptors there are (it runs every 10 ms in a process that may hold 100,000).
func TestOpenFDsOfThisProcess(t *testing.T) {
	h := NewHost(System)
	before, err := h.openFDs()
	if err != nil {
		t.Fatal(err)
	}
	const extra = 500
	fds := make([]int, 0, extra)
	defer func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}()
	for range extra {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Skipf("cannot open %d descriptors here: %v", extra, err)
		}
		fds = append(fds, fd)
	}
	after, err := h.openFDs()
	if err != nil || after != before+extra {
		t.Errorf("%d descriptors, then %d after opening %d more (%v)", before, after, extra, err)
	}
	if allocs := testing.AllocsPerRun(20, func() { _, _ = h.openFDs() }); allocs != 0 {
		t.Errorf("a count of %d descriptors allocates %.0f times", after, allocs)
	}
	var s result.Sample
	if err := h.Read(&s, false); err != nil || s.OpenFDs != after || s.RSSBytes == 0 {
		t.Errorf("a sample: %d descriptors, RSS %d (%v); want %d", s.OpenFDs, s.RSSBytes, err, after)
	}
}

// The sampler's own descriptors are open from the start, so it still reads the process's figures when the
// table is full: where a runtime that leaks descriptors leaves the process.
func TestHostReadsAtAFullDescriptorTable(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	h := NewHost(System)
	var fds []int
	defer func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}()
	open := func() bool {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == nil {
			fds = append(fds, fd)
		}
		return err == nil
	}
	for range 64 {
		if !open() {
			t.Fatal("cannot open 64 descriptors")
		}
	}
	n, err := h.openFDs()
	if err != nil {
		t.Fatal(err)
	}
	// Every descriptor below the soft limit in use: the limit just above the highest one opened, the rest of
	// the holes below it filled (descriptors inherited above it count all the same).
	lim := old
	lim.Cur = uint64(fds[len(fds)-1]) + 1
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot lower the descriptor limit: %v", err)
	}
	defer func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) }()
	filled := 0
	for open() {
		filled++
	}
	if f, err := os.Open("/proc/self/status"); err == nil {
		f.Close()
		t.Fatal("the table is not full")
	}
	var s result.Sample
	if err := h.Read(&s, true); err != nil || s.RSSBytes == 0 || s.OpenFDs != n+uint64(filled) {
		t.Errorf("at a full table: %d descriptors, RSS %d (%v); want %d", s.OpenFDs, s.RSSBytes, err, n+uint64(filled))
	}
}
