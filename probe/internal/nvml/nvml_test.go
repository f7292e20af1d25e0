package nvml

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ebitengine/purego"
)

// Error strings work without the library, and a missing library is a value callers can test for.
func TestReturnIsAnErrorWithoutTheLibrary(t *testing.T) {
	if got := ErrorLibraryNotFound.Error(); got != "NVML_ERROR_LIBRARY_NOT_FOUND (12)" {
		t.Errorf("ErrorLibraryNotFound reads %q", got)
	}
	if got := Return(4242).Error(); got != "NVML error 4242" {
		t.Errorf("an unknown code reads %q", got)
	}
	if _, err := purego.Dlopen(Library, purego.RTLD_NOW); err == nil {
		t.Skip("NVML is installed here: nothing to test about its absence")
	}
	_, err := Open()
	if !errors.Is(err, ErrorLibraryNotFound) || errors.Is(err, ErrorNotFound) {
		t.Fatalf("Open without NVML: %v, want an error that is ErrorLibraryNotFound", err)
	}
}

// Memory reads every device it is given, in order; one that fails is left out, the others still read, and
// the first failure is the error.
func TestReadMemorySkipsADeviceThatFails(t *testing.T) {
	devs := []Device{{PCIBusID: "0000:01:00.0"}, {PCIBusID: "0000:02:00.0"}, {PCIBusID: "0000:03:00.0"}, {PCIBusID: "0000:04:00.0"}}
	fails := map[string]error{"0000:02:00.0": ErrorGPUIsLost, "0000:04:00.0": ErrorUnknown}
	var asked []string
	read := func(d Device) (uint64, uint64, uint64, error) {
		asked = append(asked, d.PCIBusID)
		if err := fails[d.PCIBusID]; err != nil {
			return 0, 0, 0, err
		}
		bus := uint64(d.PCIBusID[6] - '0') // a figure of each device's own: 1 for bus 01, 3 for bus 03
		return 16 * bus << 30, 10 * bus << 30, 6 * bus << 30, nil
	}
	got, err := readMemory(devs, read)
	if !errors.Is(err, ErrorGPUIsLost) {
		t.Errorf("error %v, want the first failure (%v)", err, ErrorGPUIsLost)
	}
	if len(asked) != len(devs) {
		t.Errorf("asked %v, want every device", asked)
	}
	var want []MemoryInfo
	for i, d := range devs {
		if fails[d.PCIBusID] == nil {
			total, free, used, _ := read(d)
			want = append(want, MemoryInfo{Of: i, Total: total, Free: free, Used: used})
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read %+v, want %+v", got, want)
	}
	if got, err := readMemory(devs[:1], read); err != nil || len(got) != 1 || got[0].Of != 0 {
		t.Errorf("one device that reads: %+v, %v", got, err)
	}
}

// TestNVMLMemoryLive reads every device's memory where NVML is; it skips where it is absent.
func TestNVMLMemoryLive(t *testing.T) {
	n := openLive(t)
	got, err := n.Memory(n.Devices)
	if err != nil || len(got) != len(n.Devices) {
		t.Fatalf("%d of %d devices read: %v", len(got), len(n.Devices), err)
	}
	for i, m := range got {
		// v2 splits total into reserved, free and used; v1 into free and used.
		if m.Of != i || m.Total == 0 || m.Free+m.Used > m.Total {
			t.Errorf("device %d (%s): %+v", i, n.Devices[i].PCIBusID, m)
		}
		t.Logf("device %d (%s): total %d, free %d, used %d", i, n.Devices[i].PCIBusID, m.Total, m.Free, m.Used)
	}
}

// openLive opens NVML for a live test, closed when the test ends; the test skips where NVML is absent.
func openLive(t *testing.T) *NVML {
	t.Helper()
	n, err := Open()
	if errors.Is(err, ErrorLibraryNotFound) || errors.Is(err, ErrorDriverNotLoaded) {
		t.Skipf("no NVML here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}
