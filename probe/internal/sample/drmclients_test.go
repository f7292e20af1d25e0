package sample

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
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

// writeFdinfo writes a descriptor's fdinfo under dir/<pid>/fdinfo/<fd>; a client with no driver line is a
// descriptor of no DRM device.
func writeFdinfo(t *testing.T, dir string, pid, fd int, driver, pdev, client string, totals ...string) {
	t.Helper()
	d := filepath.Join(dir, strconv.Itoa(pid), "fdinfo")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "pos:\t0\nflags:\t02100002\n"
	if driver != "" {
		text += "drm-driver:\t" + driver + "\ndrm-client-id:\t" + client + "\ndrm-pdev:\t" + pdev + "\n"
	}
	for i, v := range totals {
		text += "drm-total-region" + strconv.Itoa(i) + ":\t" + v + "\n"
	}
	if err := os.WriteFile(filepath.Join(d, strconv.Itoa(fd)), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// One walk serves the program's own figure and every process's: each DRM client counts once over every folder
// walked with the same seen, whichever descriptor or process holds it; other devices and plain descriptors
// are passed over; a folder that is not there has no clients.
func TestEachDRMClient(t *testing.T) {
	dir := t.TempDir()
	writeFdinfo(t, dir, 10, 3, "xe", "0000:03:00.0", "7", "1 GiB", "4096 KiB")
	writeFdinfo(t, dir, 10, 4, "xe", "0000:03:00.0", "7", "1 GiB", "4096 KiB") // dup of 3
	writeFdinfo(t, dir, 10, 5, "", "", "")                                     // a socket
	writeFdinfo(t, dir, 10, 6, "amdgpu", "0000:04:00.0", "2", "300 MiB")       // a device not in the run
	writeFdinfo(t, dir, 20, 3, "xe", "0000:03:00.0", "7", "1 GiB", "4096 KiB") // inherited by fork
	writeFdinfo(t, dir, 20, 9, "xe", "0000:03:00.1", "8", "512 MiB")           // another function, same device
	byPCI := map[string]int{pciKey("0000:03:00.0"): 2}

	type visit struct {
		idx    int
		client string
		bytes  uint64
	}
	seen := map[string]bool{}
	var got []visit
	for _, pid := range []string{"10", "20", "30"} { // 30 has no folder
		eachDRMClient(filepath.Join(dir, pid, "fdinfo"), byPCI, seen, func(idx int, c DRMClient) {
			got = append(got, visit{idx, c.ClientID, c.TotalBytes})
		})
	}
	want := []visit{{2, "7", 1<<30 + 4096<<10}, {2, "8", 512 << 20}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("visited %+v, want %+v", got, want)
	}

	// The sampler of this process (proc/self) and the process list read the same walk.
	if err := os.Symlink("20", filepath.Join(dir, "self")); err != nil {
		t.Fatal(err)
	}
	s, why := newFdinfoSampler([]Target{{Index: 2, PCIBusID: "0000:03:00.0"}}, Root{Proc: dir})
	if s == nil {
		t.Fatalf("fdinfo sampler does not apply: %s", why)
	}
	if used, err := s.Read(); err != nil || !reflect.DeepEqual(used, []result.DeviceSample{{Device: 2, UsedBytes: want[0].bytes + want[1].bytes}}) {
		t.Errorf("this process: %+v, %v", used, err)
	}
	procs := drmProcesses(Root{Proc: dir}, byPCI)
	if len(procs[2]) != 2 || procs[2][0].PID != 10 || procs[2][0].UsedBytes != want[0].bytes ||
		procs[2][1].PID != 20 || procs[2][1].UsedBytes != want[1].bytes {
		t.Errorf("processes %+v: client 7 for process 10 (found first), client 8 for 20", procs)
	}
}
