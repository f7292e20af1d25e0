package kernlog

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// maxText bounds one line's text.
const maxText = 1024

// parseKmsg parses /dev/kmsg records: "PRI,SEQ,USEC,FLAGS[,...];TEXT", each followed by continuation lines
// that start with a space (the record's KEY=VALUE dictionary), which are skipped. A malformed record is
// skipped, never guessed at.
func parseKmsg(b []byte) []record {
	var out []record
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) == 0 || line[0] == ' ' {
			continue
		}
		head, text, ok := bytes.Cut(line, []byte(";"))
		if !ok {
			continue
		}
		f := strings.Split(string(head), ",")
		if len(f) < 3 {
			continue
		}
		seq, err1 := strconv.ParseUint(f[1], 10, 64)
		usec, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, record{seq: seq + 1, seconds: float64(usec) / 1e6, text: cleanText(string(text))})
	}
	return out
}

// syslogLine is what syslog(2) and dmesg --raw give: "<PRI>[SECONDS] TEXT".
var syslogLine = regexp.MustCompile(`^(?:<\d+>)?\[\s*(\d+\.\d+)\] ?(.*)$`)

// parseSyslog parses syslog(2)'s buffer.
func parseSyslog(b []byte) []record {
	var out []record
	for _, line := range strings.Split(string(b), "\n") {
		if m := syslogLine.FindStringSubmatch(line); m != nil {
			t, _ := strconv.ParseFloat(m[1], 64)
			out = append(out, record{seconds: t, text: cleanText(m[2])})
		}
	}
	return out
}

// journalLine is journalctl -o short-monotonic's "[SECONDS] HOST kernel: TEXT".
var journalLine = regexp.MustCompile(`^\[\s*(\d+\.\d+)\] \S+ kernel: (.*)$`)

// parseJournal parses the journal's kernel lines (the host name between is dropped).
func parseJournal(b []byte) []record {
	var out []record
	for _, line := range strings.Split(string(b), "\n") {
		if m := journalLine.FindStringSubmatch(line); m != nil {
			t, _ := strconv.ParseFloat(m[1], 64)
			out = append(out, record{seconds: t, text: cleanText(m[2])})
		}
	}
	return out
}

// cleanText keeps a line's printable text, at most maxText bytes (the kernel escapes control bytes as
// \xNN itself; anything else is replaced).
func cleanText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, strings.TrimRight(s, "\r"))
	if len(s) > maxText {
		s = strings.ToValidUTF8(s[:maxText], "") + "..."
	}
	return s
}

// What a line is about, by the words the kernel writes.
var (
	oomPhrases = []string{"invoked oom-killer", "oom-kill:", "Out of memory", "Killed process", "oom_reaper: reaped process",
		"Memory cgroup out of memory"}
	faultPhrases = []string{"NVRM: Xid", "GPU HANG", "GPU hang", "GPU reset", "gpu reset", "Resetting chip", "GT reset", "Timedout job",
		"fallen off the bus", "ring gfx timeout", "ring sdma", "ring comp", "page fault", "GPU fault", "MMU fault", "engine reset"}
	gpuPrefixes = []string{"NVRM:", "nvidia", "[drm", "i915 ", "i915:", "xe ", "xe:", "amdgpu", "nouveau", "radeon", "[TTM]", "amdkfd",
		"kfd ", "habanalabs", "intel_vpu"}
	pidPatterns = []*regexp.Regexp{
		regexp.MustCompile(`Killed process (\d+) `),
		regexp.MustCompile(`reaped process (\d+) `),
		regexp.MustCompile(`[,\s]pid=(\d+)`),
	}
	segfaultLine = regexp.MustCompile(`^(?:traps: )?(\S{1,64})\[(\d+)\](?::| ) ?(?:segfault at|trap |general protection)`)
)

// classifier tells what a line is about, with the processes of the window to keep their faults.
type classifier struct {
	pids  map[int]bool
	comms map[string]bool
}

func newClassifier(pids []int, comms []string) *classifier {
	c := &classifier{pids: map[int]bool{}, comms: map[string]bool{}}
	for _, p := range pids {
		c.pids[p] = true
	}
	for _, n := range comms {
		if len(n) > 15 { // the kernel's task name is at most 15 bytes
			n = n[:15]
		}
		c.comms[n] = true
	}
	return c
}

// classify returns the line's kind ("" for a line that does not matter) and the process it names.
func (c *classifier) classify(text string) (result.KernelLineKind, int) {
	switch {
	case containsAny(text, oomPhrases):
		return result.KernelOOM, firstPID(text)
	case hasPrefixAny(text, gpuPrefixes...) || strings.Contains(text, " [drm]") || strings.Contains(text, "NVRM"):
		if containsAny(text, faultPhrases) {
			return result.KernelGPUFault, firstPID(text)
		}
		return result.KernelGPU, 0
	}
	if m := segfaultLine.FindStringSubmatch(text); m != nil {
		pid, _ := strconv.Atoi(m[2])
		if c.pids[pid] || c.comms[m[1]] {
			return result.KernelSegfault, pid
		}
	}
	return "", 0
}

func containsAny(s string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func firstPID(text string) int {
	for _, re := range pidPatterns {
		if m := re.FindStringSubmatch(text); m != nil {
			if pid, err := strconv.Atoi(m[1]); err == nil {
				return pid
			}
		}
	}
	return 0
}
