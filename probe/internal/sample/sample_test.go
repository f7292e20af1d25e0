package sample

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/result"
)

var fixtures = Under("testdata")

// The host sampler reads everything under its root: a fixture tree gives the fixture's figures.
func TestHostFiguresFromAFixtureTree(t *testing.T) {
	var s result.Sample
	if err := NewHost(fixtures).Read(&s, true); err != nil {
		t.Fatal(err)
	}
	want := result.Sample{RSSBytes: 100000 << 10, VMSBytes: 1500000 << 10, HWMBytes: 123456 << 10, AvailBytes: 20000000 << 10,
		CommittedBytes: 3000000 << 10, Mappings: 3}
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
	if s, why := newAMDGPUSysfsSampler([]Target{{Index: 0, PCIBusID: "0000:05:00.0"}}, fixtures); s != nil || why == "" {
		t.Errorf("no card at that address: sampler %v, reason %q", s, why)
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
	failing := func() (uint64, error) { return 0, errors.New("CL_INVALID_VALUE") }
	if s, why := newCLQuerySampler([]Target{{Index: 0, FreeMemory: failing}}); s != nil || why == "" {
		t.Errorf("a runtime without the query must say so: %v %q", s, why)
	}
}

// With no NVML, no query, no sysfs card and no DRM client, no sampler applies, and each one says why.
func TestNoSamplerSaysWhy(t *testing.T) {
	s, why := DeviceSamplerFor([]Target{{Index: 0}}, fixtures)
	if s != nil {
		t.Fatalf("got sampler %s", s.Name())
	}
	for _, part := range []string{"NVML", "CL_DEVICE_GLOBAL_FREE_MEMORY_AMD", "amdgpu sysfs", "DRM fdinfo"} {
		if !strings.Contains(why, part) {
			t.Errorf("reason %q does not mention %s", why, part)
		}
	}
}
