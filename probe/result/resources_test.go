package result

import "testing"

// A ledger's cgroup reads as nil for a nil ledger and for one without a cgroup, so that callers need not
// test the ledger first.
func TestCgroupOfIsNilSafe(t *testing.T) {
	var none *Resources
	if got := none.CgroupOf(); got != nil {
		t.Errorf("nil ledger: CgroupOf() = %+v, want nil", got)
	}
	if got := (&Resources{}).CgroupOf(); got != nil {
		t.Errorf("ledger without a cgroup: CgroupOf() = %+v, want nil", got)
	}
	cg := &Cgroup{Version: 2, Path: "/job"}
	if got := (&Resources{Cgroup: cg}).CgroupOf(); got != cg {
		t.Errorf("CgroupOf() = %p, want the ledger's cgroup %p", got, cg)
	}
}

// What other processes hold on a device is summed over the process list at the end, else the one at the
// start, leaving the worker's own out; with neither list read nothing is known.
func TestOthersBytesSumsOtherProcesses(t *testing.T) {
	own := DeviceProcess{PID: 1, UsedBytes: 1000, Own: true}
	a, b := DeviceProcess{PID: 2, UsedBytes: 30}, DeviceProcess{PID: 3, UsedBytes: 400}
	for _, c := range []struct {
		name      string
		d         DeviceLedger
		want      uint64
		wantKnown bool
	}{
		{"no list read", DeviceLedger{}, 0, false},
		{"end only", DeviceLedger{ProcessesAtEnd: []DeviceProcess{own, a, b}}, a.UsedBytes + b.UsedBytes, true},
		{"start only", DeviceLedger{ProcessesAtStart: []DeviceProcess{a, own}}, a.UsedBytes, true},
		{"end wins over start", DeviceLedger{ProcessesAtStart: []DeviceProcess{a, b}, ProcessesAtEnd: []DeviceProcess{b}}, b.UsedBytes, true},
		{"only the worker", DeviceLedger{ProcessesAtEnd: []DeviceProcess{own}}, 0, true},
		{"an empty list read", DeviceLedger{ProcessesAtEnd: []DeviceProcess{}}, 0, true},
	} {
		got, known := c.d.OthersBytes()
		if got != c.want || known != c.wantKnown {
			t.Errorf("%s: OthersBytes() = %d, %v; want %d, %v", c.name, got, known, c.want, c.wantKnown)
		}
	}
}

// A device's global memory is the job's own reading where it has one (a variant may change it), else the
// run's listing, else 0.
func TestGlobalOfPrefersTheJobsReading(t *testing.T) {
	run := &Run{Devices: []Device{{Index: 0, GlobalMemBytes: 8 << 30}, {Index: 1, GlobalMemBytes: 16 << 30}}}
	job := &JobResult{DeviceSizes: []DeviceSize{{Device: 1, GlobalMemBytes: 1 << 30}}}
	for _, c := range []struct {
		name string
		dev  int
		want uint64
	}{
		{"the job's reading", 1, 1 << 30},
		{"the run's listing", 0, 8 << 30},
		{"neither", 7, 0},
	} {
		if got := GlobalOf(run, job, c.dev); got != c.want {
			t.Errorf("%s: GlobalOf(device %d) = %d, want %d", c.name, c.dev, got, c.want)
		}
	}
}
