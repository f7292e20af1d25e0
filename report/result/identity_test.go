package result

import (
	"strings"
	"testing"
)

func TestScrubTakesTheIdentityOutOfEveryString(t *testing.T) {
	r := &Run{Command: []string{"clmemprobe", "run", "--out", "/home/alice/runs/a"},
		Environment: &Environment{Hostname: "gpu-node-07.cluster.example", ICDFiles: map[string]string{"/home/alice/icd/x.icd": "/home/alice/lib/libx.so"},
			EnvVars: map[string]string{"LD_LIBRARY_PATH": "/home/alice/lib"}},
		KernelLog:  &KernelLog{Lines: []KernelLine{{Text: "NVRM: GPU at PCI:0000:18:00: GPU-0f0e0d0c-aaaa-bbbb-cccc-000011112222 on gpu-node-07, eth0 aa:bb:cc:dd:ee:ff"}}},
		Strategies: []StrategyResult{{WorkerOutput: "loaded from /home/alice/lib"}}}
	if !IdentityOf(r.Environment).Scrub(r) {
		t.Fatal("nothing changed")
	}
	all := strings.Join(append([]string{r.Environment.Hostname, r.KernelLog.Lines[0].Text, r.Strategies[0].WorkerOutput, r.Environment.EnvVars["LD_LIBRARY_PATH"]}, r.Command...), " ")
	for k, v := range r.Environment.ICDFiles {
		all += " " + k + " " + v
	}
	for _, leak := range []string{"alice", "gpu-node-07", "0f0e0d0c", "aa:bb:cc"} {
		if strings.Contains(all, leak) {
			t.Errorf("%q is still in %s", leak, all)
		}
	}
	for _, kept := range []string{"/home/<user>/lib/libx.so", "<hostname>", "<uuid>", "<mac>", "PCI:0000:18:00"} {
		if !strings.Contains(all, kept) {
			t.Errorf("%q is not in %s", kept, all)
		}
	}
	if (Identity{}).Scrub(&Run{Command: []string{"clmemprobe", "run"}}) {
		t.Error("a run without identity changed")
	}
	// A short host name is replaced where it stands as a name, never inside another word.
	short := Identity{Hostname: "vm"}
	if got := short.Text("total-vm:2534116kB nested_pvm=1 on vm, vm.example vm"); got != "total-vm:2534116kB nested_pvm=1 on <hostname>, vm.example <hostname>" {
		t.Errorf("short host name: %q", got)
	}
}
