package result

import (
	"strings"
	"testing"
)

func TestScrubTakesTheIdentityOutOfEveryString(t *testing.T) {
	r := &Run{Command: []string{"clmemprobe", "run", "--out", "/home/alice/runs/a"},
		Environment: &Environment{Hostname: "gpu-node-07", ICDFiles: map[string]string{"/home/alice/icd/x.icd": "/home/bob/lib/libx.so"},
			EnvVars:      map[string]string{"POCL_CACHE_DIR": "/scratch/GPU-NODE-07.cluster.example.org/cache", "OCL_ICD_VENDORS": "/slurm/gpu-node-07/job"},
			MemoryCgroup: &CgroupInfo{Path: "/kubepods/pod0f0e/4c5b97271035748bd8b04f8f4b146c76"}},
		KernelLog: &KernelLog{Lines: []KernelLine{{Kind: KernelGPU, Text: "NVRM: GPU GPU-0f0e0d0c-aaaa-bbbb-cccc-000011112222 on gpu-node-07, eth0 aa:bb:cc:dd:ee:ff; nfs gpu-node-07.example.org."}}},
		Jobs:      []JobResult{{Strategy: Shared, WorkerOutput: "loaded from /home/alice/lib"}}}
	id := IdentityOf(r.Environment)
	id.Scrub(r)
	all := strings.Join(append([]string{r.Environment.Hostname, r.KernelLog.Lines[0].Text, r.Jobs[0].WorkerOutput, r.Environment.MemoryCgroup.Path,
		r.Environment.EnvVars["POCL_CACHE_DIR"], r.Environment.EnvVars["OCL_ICD_VENDORS"]}, r.Command...), " ")
	for k, v := range r.Environment.ICDFiles {
		all += " " + k + " " + v
	}
	for _, leak := range []string{"alice", "bob", "gpu-node-07", "GPU-NODE-07", "cluster.example", "0f0e0d0c", "aa:bb:cc", "4c5b9727"} {
		if strings.Contains(all, leak) {
			t.Errorf("%q is still in %s", leak, all)
		}
	}
	// Two users stay two; the first by name order is <user>.
	for _, kept := range []string{"/home/<user>/icd/x.icd", "/home/<user2>/lib/libx.so", "<hostname>", "<uuid>", "<mac>", "<id>", "PCI"} {
		if !strings.Contains(all+" PCI", kept) {
			t.Errorf("%q is not in %s", kept, all)
		}
	}
}

// A host name that is also a word of the tool or the runtime leaves those words alone: strategy names and
// other values of the model's own types, versions and device names; it is replaced where it names the
// host.
func TestScrubLeavesTheToolsAndRuntimesWords(t *testing.T) {
	for _, host := range []string{"shared", "debian", "vm", "runtime", "fill"} {
		r := &Run{Config: Config{Touch: TouchFill}, Environment: &Environment{Hostname: host, OS: "debian 12"},
			Devices: []Device{{Name: "pthread-debian", DriverVersion: "3.1+debian"}},
			Jobs:    []JobResult{{Strategy: Shared, Reason: "on " + host + ", total-vm:25kB nested_pvm=1"}}}
		id := IdentityOf(r.Environment)
		id.Scrub(r)
		if r.Jobs[0].Strategy != Shared || r.Config.Touch != TouchFill || r.Devices[0].DriverVersion != "3.1+debian" ||
			r.Devices[0].Name != "pthread-debian" || r.Environment.OS != "debian 12" {
			t.Errorf("host %q changed the tool's or the runtime's words: %+v %+v %q", host, r.Jobs[0].Strategy, r.Devices[0], r.Environment.OS)
		}
		if got := r.Jobs[0].Reason; got != "on <hostname>, total-vm:25kB nested_pvm=1" {
			t.Errorf("host %q: reason %q", host, got)
		}
		if r.Environment.Hostname != HostPlaceholder {
			t.Errorf("host %q: the host name field is %q", host, r.Environment.Hostname)
		}
	}
}

// A host name is replaced only where it is a whole word: not where it is part of a longer word of letters,
// digits, '_', '-' and '.' (issue 46: a host named "vm" turned the kernel's total_vm into total_<hostname>).
// The one longer word that is still the host is its name with a domain (node1.cluster.example.org).
func TestScrubReplacesHostNamesAsWholeWordsOnly(t *testing.T) {
	cases := []struct {
		name, host, in, want string
	}{
		{"vm in the OOM killer's fields", "vm", "Killed process 42 total-vm:25kB, anon-rss:1kB total_vm=9 pgtables_vm vm_max",
			"Killed process 42 total-vm:25kB, anon-rss:1kB total_vm=9 pgtables_vm vm_max"},
		{"vm as a sysctl's prefix", "vm", "vm.overcommit_memory=2 vm.swappiness=60 on vm", "vm.overcommit_memory=2 vm.swappiness=60 on <hostname>"},
		{"vm alone and in punctuation", "vm", "vm: (vm) 'vm', on vm.", "<hostname>: (<hostname>) '<hostname>', on <hostname>."},
		{"node1 is not node10", "node1", "node10 node1 node1a xnode1 node1-ib node1_scratch", "node10 <hostname> node1a xnode1 node1-ib node1_scratch"},
		{"node10 is not node1", "node10", "node1 node10 node100", "node1 <hostname> node100"},
		{"a short name and its domain of two labels or more", "node1", "nfs node1.cluster.example.org: ok; /scratch/NODE1.cluster.example.org/x; node1.local",
			"nfs <hostname>: ok; /scratch/<hostname>/x; node1.local"},
		{"an FQDN and its short name", "node1.cluster.example.org", "node1.cluster.example.org, node1 and node1.cluster.example.org.",
			"<hostname>, <hostname> and <hostname>."},
		{"an FQDN inside a longer word", "node1.cluster.example.org", "node1.cluster.example.org_backup sub.node1.cluster.example.org",
			"node1.cluster.example.org_backup sub.node1.cluster.example.org"},
		{"a path and a key", "gpu-07", "/slurm/gpu-07/job gpu-07=up host=gpu-07", "/slurm/<hostname>/job <hostname>=up host=<hostname>"},
		{"the placeholder's own word", "hostname", "hostname is hostname", "<hostname> is <hostname>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := Identity{Hostnames: []string{c.host}}
			if got := id.Text(c.in); got != c.want {
				t.Errorf("host %q:\n got %q\nwant %q", c.host, got, c.want)
			}
		})
	}
}
