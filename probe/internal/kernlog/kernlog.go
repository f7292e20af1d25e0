// Package kernlog reads the kernel's log over a window (a run, a trace): where the log is (/dev/kmsg, else
// syslog(2), which dmesg reads, else the journal), which of its lines matter to a ticket (the GPU drivers,
// the OOM killer, faults of the tool's workers or the traced program), and why it cannot be read where it
// cannot. Reading is separate from parsing: the parsers take bytes, so tests feed them fixture records.
package kernlog

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"golang.org/x/sys/unix"
)

// maxLogBytes bounds what one read of the log takes in: the kernel's ring is far smaller (a few MiB at most).
const maxLogBytes = 16 << 20

// The sources, as the report names them.
const (
	SourceKmsg    = "/dev/kmsg"
	SourceSyslog  = "syslog(2)"
	SourceJournal = "journalctl -k"
)

// A record is one line of the log.
type record struct {
	seq     uint64 // /dev/kmsg's sequence number; 0 from the other sources
	seconds float64
	text    string
}

// Window is a window of the kernel's log, from Start to End.
type Window struct {
	root      sample.Root
	source    string
	why       string // why no source could be read
	startMono float64
	startWall time.Time
	// From /dev/kmsg: a descriptor placed at the log's end when the window started, so that what it reads at
	// the end is the window and nothing else, and the log up to the start, read beside the window.
	kmsg *kmsgWindow
	// From the other sources, and a /dev/kmsg that is not the kernel's device (a test's fixture file): the
	// log as it was at the start, and its newest record's number where it numbers them.
	before  []record
	lastSeq uint64
	ended   bool
}

// kmsgWindow is a window of /dev/kmsg.
type kmsgWindow struct {
	fd   int
	ring chan []record // the log up to the start (GPU lines are kept from it)
}

// Start marks the window's start. From /dev/kmsg it reads nothing on the way: it opens the log at its end,
// and the records before are read beside whatever the window is about (they were the slowest part of a
// trace's start: 2,478 records, one read(2) each, on this project's VM). From the other sources it reads
// the log as it is now.
func Start(root sample.Root) *Window {
	w := &Window{root: root, startMono: monotonic(), startWall: time.Now()}
	path := filepath.Join(root.Dev, "kmsg")
	if fd, err := openAtEnd(path); err == nil {
		w.source, w.kmsg = SourceKmsg, &kmsgWindow{fd: fd, ring: make(chan []record, 1)}
		go func() {
			b, _, _ := readKmsg(path)
			w.kmsg.ring <- parseKmsg(b)
		}()
		return w
	}
	recs, source, err := read(root)
	if err != nil {
		w.why = err.Error()
		return w
	}
	w.source, w.before = source, recs
	if n := len(recs); n > 0 {
		w.lastSeq = recs[n-1].seq
	}
	return w
}

// openAtEnd opens /dev/kmsg placed after its newest record (lseek SEEK_END: the next read returns the first
// record logged after it). Only the kernel's character device is opened so; anything else at that path
// (a test's fixture file, a folder) is read whole by the other way. The descriptor is read raw, not through
// Go's poller, which would wait on EAGAIN instead of returning it.
func openAtEnd(path string) (fd int, err error) {
	fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return -1, err
	}
	var st syscall.Stat_t
	if err = syscall.Fstat(fd, &st); err == nil && st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
		err = errors.New("not a character device")
	}
	if err == nil {
		_, err = syscall.Seek(fd, 0, io.SeekEnd)
	}
	if err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// End reads the log again and returns the window's lines. pids are the processes the window is about (the
// workers, the traced program), comms their names as the kernel writes them: their faults are kept. A
// window ends once: a second End says so.
func (w *Window) End(pids []int, comms []string) *result.KernelLog {
	if w.why != "" {
		return &result.KernelLog{Unreadable: w.why}
	}
	if w.ended {
		return &result.KernelLog{Unreadable: "this window of the kernel log was read already"}
	}
	w.ended = true
	var window, before []record
	kl := &result.KernelLog{Source: w.source}
	if w.kmsg != nil {
		window, before, kl.Lost = w.kmsg.end(w.startMono)
		w.kmsg = nil
	} else {
		recs, source, err := read(w.root)
		if err != nil {
			return &result.KernelLog{Unreadable: err.Error()}
		}
		kl.Source = source
		endMono := monotonic()
		for _, r := range recs {
			if w.inWindow(r, endMono) {
				window = append(window, r)
			}
		}
		// Numbered records: a window whose first is not the one after the start's newest lost records to
		// the ring before they were read.
		if w.lastSeq > 0 && len(recs) > 0 && recs[0].seq > w.lastSeq+1 {
			kl.Lost = true
		}
		before = w.before
	}
	c := newClassifier(pids, comms)
	for _, r := range window {
		line := w.line(r, c)
		if len(kl.Window) < result.KernelWindowLines {
			kl.Window = append(kl.Window, line)
		} else {
			kl.WindowDropped++
		}
		if line.Kind != "" && len(kl.Lines) < maxLines {
			kl.Lines = append(kl.Lines, line)
		}
	}
	for _, r := range before {
		if line := w.line(r, c); line.Kind == result.KernelGPU || line.Kind == result.KernelGPUFault {
			kl.Before = append(kl.Before, line)
		}
	}
	if n := len(kl.Before); n > beforeLines {
		kl.Before = kl.Before[n-beforeLines:]
	}
	return kl
}

// Close ends a window that will not be read (the program could not be started).
func (w *Window) Close() {
	w.ended = true
	if w.kmsg != nil {
		syscall.Close(w.kmsg.fd)
		<-w.kmsg.ring
		w.kmsg = nil
	}
}

// inWindow says whether a record read whole at the end was logged after the start: by its sequence number
// where the log has them, else by its time (the kernel's clock and CLOCK_MONOTONIC both count from boot).
func (w *Window) inWindow(r record, endMono float64) bool {
	if r.seq > 0 && w.lastSeq > 0 {
		return r.seq > w.lastSeq
	}
	return r.seconds >= w.startMono && r.seconds <= endMono+1
}

// end reads the window's records from the descriptor placed at the start, and the records before it from
// the log read beside it: those numbered below the window's first (the log read beside may have gone on
// into the window; where the window is empty, those logged before its start, by the kernel's clock, as the
// log read beside may have gone on past the window's end). lost says records of the window were overwritten
// before they were read (the device says so with EPIPE), or that a window longer than maxLogBytes lost its
// oldest.
func (k *kmsgWindow) end(startMono float64) (window, before []record, lost bool) {
	b, lost, _ := readFrom(k.fd)
	syscall.Close(k.fd)
	window = parseKmsg(b)
	ring := <-k.ring
	if len(window) == 0 {
		for _, r := range ring {
			if r.seconds < startMono {
				before = append(before, r)
			}
		}
		return nil, before, lost
	}
	first := window[0].seq
	for _, r := range ring {
		if r.seq < first {
			before = append(before, r)
		}
	}
	return window, before, lost
}

// maxLines bounds the lines that matter; beforeLines is how many GPU lines from before the window are kept.
const (
	maxLines    = 500
	beforeLines = 20
)

func (w *Window) line(r record, c *classifier) result.KernelLine {
	kind, pid := c.classify(r.text)
	wall := w.startWall.Add(time.Duration((r.seconds - w.startMono) * float64(time.Second)))
	return result.KernelLine{Seconds: r.seconds, Wall: wall.UTC().Format(time.RFC3339Nano), Kind: kind, PID: pid, Text: r.text}
}

// monotonic is CLOCK_MONOTONIC in seconds.
func monotonic() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

// read reads the whole log from the first source that answers. Where none does, the error says why and
// what gives access.
func read(root sample.Root) ([]record, string, error) {
	path := filepath.Join(root.Dev, "kmsg")
	b, lost, err := readKmsg(path)
	if err == nil {
		recs := parseKmsg(b)
		_ = lost // a record overwritten while reading: the sequence numbers show the gap
		return recs, SourceKmsg, nil
	}
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
		return nil, "", restricted(root)
	}
	if root.Dev != sample.System.Dev {
		return nil, "", errors.New("the kernel log is not readable: " + path + ": " + err.Error())
	}
	// No /dev/kmsg (a container): syslog(2), what dmesg reads, then the journal.
	if b, err := readSyslog(); err == nil {
		return parseSyslog(b), SourceSyslog, nil
	} else if errors.Is(err, syscall.EPERM) {
		return nil, "", restricted(root)
	}
	if b, err := readJournal(); err == nil {
		return parseJournal(b), SourceJournal, nil
	}
	return nil, "", errors.New("the kernel log is not readable: no /dev/kmsg, syslog(2) refused and journalctl -k gave nothing (run where the host's kernel log is visible, or attach `dmesg` from the host)")
}

// restricted says why the log is closed to this process and what opens it.
func restricted(root sample.Root) error {
	why := "the kernel log is not readable by this user"
	if v := sample.ReadTrim(filepath.Join(root.Proc, "sys/kernel/dmesg_restrict")); v == "1" {
		why += " (kernel.dmesg_restrict=1)"
	}
	return errors.New(why + ": run as root or with CAP_SYSLOG, or allow it with `sudo sysctl kernel.dmesg_restrict=0`")
}

// readKmsg reads every record /dev/kmsg holds now.
func readKmsg(path string) (b []byte, lost bool, err error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, false, err
	}
	defer syscall.Close(fd)
	return readFrom(fd)
}

// readFrom reads /dev/kmsg's records from fd's place on. Each read(2) of it returns one record; EAGAIN ends
// the log, EPIPE says a record was overwritten before it was read (the next read goes on). It keeps the
// newest maxLogBytes, and says lost where it dropped older ones.
func readFrom(fd int) (b []byte, lost bool, err error) {
	var out bytes.Buffer
	buf := make([]byte, 64<<10)
	for {
		if out.Len() > maxLogBytes {
			// Keep the newest records: the window is at the end.
			b := out.Bytes()
			cut := bytes.IndexByte(b[len(b)/2:], '\n') + len(b)/2 + 1
			rest := append([]byte(nil), b[cut:]...)
			out.Reset()
			out.Write(rest)
			lost = true
		}
		n, err := syscall.Read(fd, buf)
		switch {
		case err == syscall.EPIPE:
			lost = true
			continue
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return out.Bytes(), lost, nil
		case err != nil:
			if out.Len() > 0 {
				return out.Bytes(), lost, nil
			}
			return nil, lost, err
		case n == 0:
			return out.Bytes(), lost, nil // a regular file (a fixture) ends
		}
		out.Write(buf[:n])
	}
}

// readSyslog reads the kernel's ring through syslog(2), as dmesg does.
func readSyslog() ([]byte, error) {
	size, err := unix.Klogctl(unix.SYSLOG_ACTION_SIZE_BUFFER, nil)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, min(max(size, 1<<16), maxLogBytes))
	n, err := unix.Klogctl(unix.SYSLOG_ACTION_READ_ALL, buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// journalTimeout bounds the journal's answer.
const journalTimeout = 10 * time.Second

// readJournal asks the journal for this boot's kernel messages.
func readJournal() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), journalTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "journalctl", "-k", "-b", "-o", "short-monotonic", "--no-pager", "-q")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(io.LimitReader(out, maxLogBytes))
	if err := cmd.Wait(); err != nil && len(b) == 0 {
		return nil, err
	}
	if len(b) == 0 {
		return nil, errors.New("journalctl -k gave nothing")
	}
	return b, nil
}

// hasPrefixAny says whether s starts with one of the prefixes.
func hasPrefixAny(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
