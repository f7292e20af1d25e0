package kernlog

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// kmsgRoot is a fixture tree whose dev/kmsg holds records (a regular file: a read returns them all).
func kmsgRoot(t *testing.T, records string) (sample.Root, string) {
	t.Helper()
	dir := t.TempDir()
	root := sample.Under(dir)
	if err := os.MkdirAll(root.Dev, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root.Dev, "kmsg")
	if err := os.WriteFile(path, []byte(records), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, path
}

const bootRecords = "6,100,4000000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.159.04\n" +
	" SUBSYSTEM=pci\n DEVICE=+pci:0000:18:00.0\n" +
	"6,101,4100000,-;EXT4-fs (vda): mounted filesystem\n"

// The window's records as the kernel writes them when a memory cgroup's OOM killer ends a worker, with a
// GPU fault and an unrelated process's segfault between.
const windowRecords = "4,102,240739197,-;clmemprobe invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=1000\n" +
	"6,103,240743849,-;Tasks state (memory values in pages):\n" +
	"6,104,240743869,-;oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/cmp512,task_memcg=/cmp512,task=clmemprobe,pid=5668,uid=0\n" +
	"3,105,240743926,-;Memory cgroup out of memory: Killed process 5668 (clmemprobe) total-vm:2591340kB, anon-rss:517632kB, file-rss:21472kB, shmem-rss:0kB, UID:0 pgtables:1564kB oom_score_adj:1000\n" +
	"4,106,241000000,-;NVRM: Xid (PCI:0000:18:00): 31, pid=5670, name=clmemprobe, Ch 00000008, intr 10000000. MMU Fault\n" +
	"6,107,241100000,-;other[777]: segfault at 0 ip 0000 sp 0000 error 4 in other[400000+1000]\n" +
	"6,108,241200000,-;clmemprobe[5671]: segfault at 10 ip 00007f sp 00007ffd error 4 in libpocl.so.2\n" +
	"6,109,241300000,-;evil \x1b[2J\x07 bytes\n" +
	"garbage without a header\n" +
	"6,x,1,-;a bad sequence number\n"

func TestWindowKeepsTheRunsLinesAndNamesTheirProcesses(t *testing.T) {
	root, path := kmsgRoot(t, bootRecords)
	w := Start(root)
	if w.why != "" || w.source != SourceKmsg || w.lastSeq != 102 { // seq 101, stored +1
		t.Fatalf("start: source %q why %q last %d", w.source, w.why, w.lastSeq)
	}
	if err := os.WriteFile(path, []byte(bootRecords+windowRecords), 0o644); err != nil {
		t.Fatal(err)
	}
	kl := w.End([]int{5668}, []string{"clmemprobe"})
	if kl.Source != SourceKmsg || kl.Unreadable != "" || kl.Lost {
		t.Fatalf("log = %+v", kl)
	}
	// The window is the 8 well-formed records after the start's last; the two boot lines are not in it.
	if len(kl.Window) != 8 {
		t.Errorf("window has %d lines, want 8", len(kl.Window))
	}
	kinds := map[result.KernelLineKind][]result.KernelLine{}
	for _, l := range kl.Lines {
		kinds[l.Kind] = append(kinds[l.Kind], l)
	}
	if oom := kinds[result.KernelOOM]; len(oom) != 3 || oom[1].PID != 5668 || oom[2].PID != 5668 || oom[2].Seconds != 240.743926 {
		t.Errorf("OOM lines = %+v, want invoked, oom-kill and Killed process, the last two naming 5668 at 240.743926", oom)
	}
	if f := kinds[result.KernelGPUFault]; len(f) != 1 || f[0].PID != 5670 {
		t.Errorf("GPU fault lines = %+v", f)
	}
	// Only the window's own process's segfault: by name here (clmemprobe), not the other program's.
	if sf := kinds[result.KernelSegfault]; len(sf) != 1 || sf[0].PID != 5671 {
		t.Errorf("segfault lines = %+v", sf)
	}
	for _, l := range kl.Window {
		if strings.ContainsAny(l.Text, "\x1b\x07") {
			t.Errorf("a control byte was kept: %q", l.Text)
		}
	}
	// Before the window: the GPU driver's load line, not the file system's.
	if len(kl.Before) != 1 || !strings.HasPrefix(kl.Before[0].Text, "NVRM: loading") {
		t.Errorf("before = %+v", kl.Before)
	}
}

func TestWindowSaysWhenTheRingOverwroteIt(t *testing.T) {
	root, path := kmsgRoot(t, bootRecords)
	w := Start(root)
	// By the end the ring holds only records from 105 on: 102 to 104 were overwritten.
	if err := os.WriteFile(path, []byte(windowRecords[strings.Index(windowRecords, "3,105"):]), 0o644); err != nil {
		t.Fatal(err)
	}
	if kl := w.End(nil, nil); !kl.Lost {
		t.Errorf("lost records were not noticed: %+v", kl)
	}
}

// A log larger than what one read keeps loses its oldest records, never the window's newest lines.
func TestWindowKeepsTheNewestOfAHugeLog(t *testing.T) {
	root, path := kmsgRoot(t, bootRecords)
	w := Start(root)
	var b strings.Builder
	b.WriteString(bootRecords)
	line := strings.Repeat("y", 900)
	for i := 0; b.Len() < maxLogBytes+(1<<20); i++ {
		b.WriteString("6," + strconv.Itoa(102+i) + ",300000000,-;" + line + "\n")
	}
	b.WriteString("3,999999,400000000,-;Memory cgroup out of memory: Killed process 5668 (clmemprobe)\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	kl := w.End([]int{5668}, nil)
	if _, ok := kl.Killed(5668); !ok || !kl.Lost {
		t.Errorf("the newest line is gone (%d lines kept) or the gap unsaid (lost %v)", len(kl.Lines), kl.Lost)
	}
}

func TestWindowBoundsWhatItKeeps(t *testing.T) {
	root, path := kmsgRoot(t, bootRecords)
	w := Start(root)
	var b strings.Builder
	b.WriteString(bootRecords)
	n := result.KernelWindowLines + 50
	for i := range n {
		b.WriteString("6," + itoa(200+i) + ",300000000,-;nouveau 0000:01:00.0: " + strings.Repeat("x", 2000) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	kl := w.End(nil, nil)
	if len(kl.Window) != result.KernelWindowLines || kl.WindowDropped != 50 || len(kl.Lines) != maxLines {
		t.Errorf("kept %d lines (%d dropped), %d that matter", len(kl.Window), kl.WindowDropped, len(kl.Lines))
	}
	if l := len(kl.Window[0].Text); l > maxText+3 {
		t.Errorf("a line kept %d bytes", l)
	}
}

func TestUnreadableLogSaysWhy(t *testing.T) {
	dir := t.TempDir()
	root := sample.Under(dir) // no dev/kmsg in the tree
	kl := Start(root).End(nil, nil)
	if want := "the kernel log is not readable: " + filepath.Join(root.Dev, "kmsg") + ": no such file or directory"; kl.Unreadable != want || len(kl.Lines) != 0 {
		t.Errorf("log = %+v", kl)
	}
}

// A restricted log names the sysctl that closes it and what opens it.
func TestRestrictedLogSaysWhatGivesAccess(t *testing.T) {
	dir := t.TempDir()
	root := sample.Under(dir)
	if err := os.MkdirAll(filepath.Join(root.Proc, "sys/kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root.Proc, "sys/kernel/dmesg_restrict"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, want := restricted(root).Error(), "the kernel log is not readable by this user (kernel.dmesg_restrict=1): "+
		"run as root or with CAP_SYSLOG, or allow it with `sudo sysctl kernel.dmesg_restrict=0`"; msg != want {
		t.Errorf("%q, want %q", msg, want)
	}
	// A /dev/kmsg that is a folder is not readable either: said, not guessed at.
	if err := os.MkdirAll(filepath.Join(root.Dev, "kmsg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if kl := Start(root).End(nil, nil); kl.Unreadable != "the kernel log is not readable: "+filepath.Join(root.Dev, "kmsg")+": is a directory" {
		t.Errorf("a folder for /dev/kmsg: %+v", kl)
	}
}

func TestParseSyslogAndJournal(t *testing.T) {
	recs := parseSyslog([]byte("<6>[  240.743926] Memory cgroup out of memory: Killed process 5668 (clmemprobe)\n<4>[    1.0] x\nnot a line\n"))
	if len(recs) != 2 || recs[0].seconds != 240.743926 || !strings.HasPrefix(recs[0].text, "Memory cgroup") {
		t.Errorf("syslog records = %+v", recs)
	}
	recs = parseJournal([]byte("[  240.743926] gpu-node-07 kernel: NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n-- Boot 1 --\n"))
	if len(recs) != 1 || recs[0].text != "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus." {
		t.Errorf("journal records = %+v (the host name is not kept)", recs)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// The kernel's own /dev/kmsg, placed at its end at the start: a record logged before the start is not in
// the window, one logged after it is, and the log before the window (read beside it) holds the first and
// not the second. A record is logged by writing it to /dev/kmsg, which needs root; as root (CI) it runs.
func TestWindowOfTheKernelsLog(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("logging a record into /dev/kmsg needs root")
	}
	if f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0); err != nil {
		t.Skipf("no kernel log to write to here (a container without /dev/kmsg): %v", err)
	} else {
		f.Close()
	}
	tag := "clmemprobe-kernlog-test-" + strconv.Itoa(os.Getpid())
	logRecord(t, tag+" before")
	w := Start(sample.System)
	if w.kmsg == nil {
		t.Fatalf("/dev/kmsg was not opened at its end: source %q why %q", w.source, w.why)
	}
	logRecord(t, tag+" inside")
	window, before, _ := w.kmsg.end(w.startMono)
	tagged := func(recs []record) (texts []string) {
		for _, r := range recs {
			if strings.HasPrefix(r.text, tag) {
				texts = append(texts, r.text)
			}
		}
		return texts
	}
	if got := tagged(window); len(got) != 1 || got[0] != tag+" inside" {
		t.Errorf("the window's own records are %q, want only %q", got, tag+" inside")
	}
	if got := tagged(before); len(got) != 1 || got[0] != tag+" before" {
		t.Errorf("the records before the window are %q, want only %q", got, tag+" before")
	}
	// End, once, gives the window's lines; a second End says it was read.
	w = Start(sample.System)
	logRecord(t, tag+" second")
	if kl := w.End(nil, nil); kl.Source != SourceKmsg || len(kl.Window) == 0 || kl.Window[len(kl.Window)-1].Text != tag+" second" {
		t.Errorf("End: %+v", kl)
	}
	if again := w.End(nil, nil); len(again.Window) != 0 || again.Unreadable == "" {
		t.Errorf("a second End: %+v", again)
	}
}

// logRecord logs text into the kernel's log at level 6 (info) of the user facility ("<14>").
func logRecord(t *testing.T, text string) {
	t.Helper()
	f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("no kernel log to write to: %v", err)
	}
	defer f.Close()
	if _, err := f.WriteString("<14>" + text + "\n"); err != nil {
		t.Fatalf("logging %q: %v", text, err)
	}
}
