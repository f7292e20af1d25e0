package sample

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/clmemprobe/clmemprobe/report/result"
)

// The fixture: process 100 (game) holds client 7 on 0000:03:00.0 through two descriptors (1 GiB of VRAM and
// 256 MiB of system memory), and process 300 inherited it; process 200 (this one, by /proc/self) holds
// client 8 there (512 MiB) and client 9 on 0000:04:00.0, a device the run does not use; process 400 has no
// fdinfo folder it may read.
func TestDRMProcessesFromFdinfo(t *testing.T) {
	root := Root{Proc: filepath.Join("testdata", "drm", "proc")}
	got := drmProcesses(root, map[string]int{pciKey("0000:03:00.0"): 0})
	want := map[int][]result.DeviceProcess{0: {
		{PID: 100, Name: "game", UsedBytes: 1<<30 + 256<<20},
		{PID: 200, Name: "clmemprobe", UsedBytes: 512 << 20, Own: true},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("processes %+v, want %+v (a client counted once, for its first process; other devices left out)", got, want)
	}
	if got := drmProcesses(root, map[string]int{pciKey("0000:05:00.0"): 0}); len(got) != 0 {
		t.Errorf("a device no process uses: %+v", got)
	}
}
