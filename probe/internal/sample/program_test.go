package sample

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// A traced program's DRM memory is read from its own /proc/PID/fdinfo (the fixture of
// TestDRMProcessesFromFdinfo): process 100 holds client 7 on 0000:03:00.0 through two descriptors, 1 GiB of
// VRAM and 256 MiB of system memory, counted once; process 200 holds client 8 there (512 MiB) and client 9 on
// 0000:04:00.0 (2 GiB), matched whatever function number the runtime gave.
func TestDRMUsedByAProgram(t *testing.T) {
	root := Root{Proc: filepath.Join("testdata", "drm", "proc")}
	tests := []struct {
		name    string
		pid     int
		devices map[string]int
		want    []result.DeviceSample
	}{
		{"one client through two descriptors", 100, map[string]int{"0000:03:00.0": 0}, []result.DeviceSample{{Device: 0, UsedBytes: 1<<30 + 262144<<10}}},
		{"two devices, in device order", 200, map[string]int{"0000:04:00.1": 0, "0000:03:00.0": 1},
			[]result.DeviceSample{{Device: 0, UsedBytes: 2 << 30}, {Device: 1, UsedBytes: 512 << 20}}},
		{"a device the program does not use", 100, map[string]int{"0000:05:00.0": 0}, []result.DeviceSample{}},
		{"a process without fdinfo it may read", 400, map[string]int{"0000:03:00.0": 0}, []result.DeviceSample{}},
	}
	for _, tc := range tests {
		if got := drmUsedBy(root, tc.pid, tc.devices); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v; want %+v", tc.name, got, tc.want)
		}
	}
}

// drmUsedBy is process pid's DRM memory as a program's chain reads it, for the devices whose PCI bus ids
// devices maps to their indices.
func drmUsedBy(root Root, pid int, devices map[string]int) []result.DeviceSample {
	var ts []Target
	for id, idx := range devices {
		ts = append(ts, Target{Index: idx, PCIBusID: id})
	}
	s, _ := drmSource(root, pid, true).open(ts)
	got, _ := s.Read()
	return got
}

// A program's ids are its own and those its status's NStgid line gives in the namespaces the procfs sees.
func TestPIDsOfAProgram(t *testing.T) {
	root := Root{Proc: filepath.Join("testdata", "drm", "proc")}
	if got := PIDsOf(root, 100); !reflect.DeepEqual(got, []uint32{100, 7}) {
		t.Errorf("pids of 100: %v, want [100 7] (NStgid)", got)
	}
	if got := PIDsOf(root, 400); !reflect.DeepEqual(got, []uint32{400}) {
		t.Errorf("pids of 400 (no status): %v, want [400]", got)
	}
}
