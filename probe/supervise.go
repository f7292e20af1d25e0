package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/progress"
	"github.com/clmemprobe/clmemprobe/probe/internal/sample"
	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
)

// Stages as the child stores them in the progress cell.
const (
	cellSetup uint64 = iota
	cellCreate
	cellTouch
	cellMigrate
	cellFinish
	cellRunning // the exchange's steps
	cellDone
)

// cellStage names a cell stage as the result does.
func cellStage(s uint64) result.Stage {
	switch s {
	case cellSetup:
		return result.StageSetup
	case cellCreate:
		return result.StageCreate
	case cellTouch:
		return result.StageTouch
	case cellMigrate:
		return result.StageMigrate
	case cellFinish:
		return result.StageFinish
	case cellRunning:
		return "running"
	}
	return result.StageDone
}

// exitGrace is how long a child may take to exit once it has sent its result; then its process group is
// killed. Its result stands either way.
const exitGrace = 2 * time.Second

// outputDrain is how long the parent reads a child's output pipes after the child exited, when something
// else (a detached helper of the runtime) still holds them open.
const outputDrain = 250 * time.Millisecond

// supervision is one child to run and how.
type supervision struct {
	spec childSpec
	// env is added to this process's environment for the child: a variant's settings, logging variables.
	env    []string
	limits Limits
	// hostReserve, when set, is the backstop for the child's own host guard: at half of it the parent
	// kills a child that is stuck in a call while memory drains.
	hostReserve uint64
	// cgroup, when the tool runs in a memory cgroup with a limit, is watched the same way: at half the
	// cgroup's reserve (cgroupReserve) the parent kills the child.
	cgroup *sample.Cgroup
	// onEvent hears every event but hello and result, from the reading goroutine.
	onEvent func(event)
	// onTick is called about every 50 ms with the cell's count and how long the child has run.
	onTick func(count uint64, elapsed time.Duration)
	// returnAtResult returns the child's result as soon as it arrives, while the child's exit (a runtime's
	// teardown) is supervised in the background: for a child whose work is only its answer (listing the
	// devices), not for a worker, whose memory the next job must find freed.
	returnAtResult bool
}

// ending is how a child ended.
type ending struct {
	answer   json.RawMessage // the child's result, nil when it sent none
	killed   result.Outcome  // set when the parent killed it: hung or stopped
	reason   string          // why it was killed, or how it died
	signal   string          // the signal that ended it, when it crashed
	detail   string          // what the Go runtime said of the fault ("segmentation violation at address 0x0")
	printed  string          // the last line the runtime printed before it died, if any
	exitCode *int            // its exit status, when it crashed without a signal
	output   string          // the head and tail of what it printed
	count    uint64          // the cell's count at the end
	stage    uint64          // the cell's stage at the end
	took     time.Duration
	badLines int // event lines that did not parse
}

// crashed reports whether the child died without a result and without being killed by the parent.
func (e *ending) crashed() bool { return e.answer == nil && e.killed == "" }

// children are the process groups of the children running now, so that Abort can end them.
var children struct {
	mu   sync.Mutex
	pgid map[int]bool
}

// Abort kills every child process group the engine is running. It is for a second Ctrl-C: the command
// exits at once after it, without waiting for the engine to return.
func Abort() {
	children.mu.Lock()
	defer children.mu.Unlock()
	for pgid := range children.pgid {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

func trackChild(pgid int, live bool) {
	children.mu.Lock()
	defer children.mu.Unlock()
	if children.pgid == nil {
		children.pgid = map[int]bool{}
	}
	if live {
		children.pgid[pgid] = true
	} else {
		delete(children.pgid, pgid)
	}
}

// supervise runs a child to its end. It runs on a goroutine locked to its OS thread: the child's
// parent-death signal fires when the thread that started it exits, so that thread must outlive it.
func supervise(ctx context.Context, s supervision) (*ending, error) {
	type answer struct {
		e   *ending
		err error
	}
	ch := make(chan answer, 2)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after the child
		e, err := superviseLocked(ctx, s, func(res json.RawMessage) {
			if s.returnAtResult {
				ch <- answer{&ending{answer: res}, nil}
			}
		})
		ch <- answer{e, err}
	}()
	a := <-ch
	return a.e, a.err
}

func superviseLocked(ctx context.Context, s supervision, onResult func(json.RawMessage)) (*ending, error) {
	s.spec.Protocol = protocolVersion
	specJSON, err := json.Marshal(s.spec)
	if err != nil {
		return nil, err
	}
	cell, cellFile, err := progress.Create("")
	if err != nil {
		return nil, err
	}
	defer cell.Close()
	defer cellFile.Close()
	evR, evW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("child pipe: %w", err)
	}
	defer evR.Close()

	exe, err := os.Executable()
	if err != nil {
		evW.Close()
		return nil, fmt.Errorf("cannot find this program to start a child process: %w", err)
	}
	// The kind rides in the arguments too, so ps shows what each child does.
	cmd := exec.Command(exe, ChildCommand, s.spec.Kind)
	// Its own process group, so it is killed as a group with any helper the runtime forked and does not get
	// the terminal's Ctrl-C before the parent decides; SIGKILL when the parent's thread dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if len(s.env) > 0 {
		cmd.Env = append(os.Environ(), s.env...)
	}
	out := &outputBuffer{}
	cmd.Stdin = bytes.NewReader(specJSON)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{evW, cellFile}
	// A helper the runtime started and detached (setsid) may hold the output pipes open after the child
	// exited: what the child wrote is in the pipe already, so a short wait drains it.
	cmd.WaitDelay = outputDrain
	start := time.Now()
	if err := cmd.Start(); err != nil {
		evW.Close()
		return nil, fmt.Errorf("cannot start a child process: %w", err)
	}
	evW.Close()
	pid := cmd.Process.Pid
	trackChild(pid, true)
	defer trackChild(pid, false)

	e := &ending{}
	var mu sync.Mutex // guards e.answer and e.badLines against the reader
	gotResult := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(evR)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		first := true
		for sc.Scan() {
			var ev event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || (first && (ev.T != evHello || ev.Version != protocolVersion)) {
				mu.Lock()
				e.badLines++
				mu.Unlock()
				first = false
				continue
			}
			first = false
			switch ev.T {
			case evHello:
			case evResult:
				mu.Lock()
				first := e.answer == nil
				if first {
					e.answer = ev.Result
					close(gotResult)
				}
				mu.Unlock()
				if first {
					onResult(ev.Result)
				}
			default:
				if s.onEvent != nil {
					s.onEvent(ev)
				}
			}
		}
		if sc.Err() != nil {
			mu.Lock()
			e.badLines++
			mu.Unlock()
		}
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	waitErr := watch(ctx, s, pid, cell, start, e, gotResult, waitDone)
	// The events pipe closes when the child exits (no helper holds it: it is close-on-exec there); give the
	// reader a moment for the last lines, then stop it.
	select {
	case <-readDone:
	case <-time.After(exitGrace):
		evR.Close()
		<-readDone
	}
	e.took = time.Since(start)
	e.count, e.stage = cell.Count(), cell.Stage()
	if e.answer != nil {
		// The result completes the job: whatever happened after it (a slow exit, a kill) changes nothing.
		e.killed, e.reason = "", ""
	}
	e.output = out.String()
	if e.crashed() {
		describeCrash(e, waitErr)
	}
	return e, nil
}

// watch supervises a running child until it exits and returns its wait error. It kills the child's process
// group when the run is interrupted, the job's time is up, set-up takes too long, the loop stops moving (a
// hang), host memory drains past the backstop, or the child lingers after its result.
func watch(ctx context.Context, s supervision, pid int, cell *progress.Cell, start time.Time, e *ending,
	gotResult <-chan struct{}, waitDone <-chan error) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	lastCount, lastStage, lastMove := cell.Count(), cell.Stage(), time.Now()
	setupSince := time.Now()
	var resultAt time.Time
	// kill ends the child's process group. Before the child's result it records why; after it, the result
	// stands and the child is only being made to leave.
	kill := func(o result.Outcome, why string) {
		if e.killed == "" && resultAt.IsZero() {
			e.killed, e.reason = o, why
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	for {
		select {
		case err := <-waitDone:
			return err
		case <-gotResult:
			resultAt = time.Now()
			gotResult = nil
		case <-ctx.Done():
			kill(result.OutcomeStopped, "interrupted")
		case now := <-tick.C:
			if n, st := cell.Count(), cell.Stage(); n != lastCount || st != lastStage {
				if st != lastStage && st == cellSetup {
					setupSince = now
				}
				lastCount, lastStage, lastMove = n, st, now
			}
			switch {
			case !resultAt.IsZero():
				// The job is over; a child that does not leave is not waited for.
				if now.Sub(resultAt) > exitGrace {
					kill("", "")
				}
			case s.limits.Total > 0 && now.Sub(start) > s.limits.Total:
				kill(result.OutcomeStopped, fmt.Sprintf("timeout: the strategy ran longer than %s", s.limits.Total))
			case lastStage == cellSetup && s.limits.Setup > 0 && now.Sub(setupSince) > s.limits.Setup:
				kill(result.OutcomeHung, fmt.Sprintf("set-up (loading the runtime, listing devices, creating contexts, building kernels) did not finish within %s (--setup-timeout)", s.limits.Setup))
			case lastStage != cellSetup && lastStage != cellDone && s.limits.Hang > 0 && now.Sub(lastMove) > s.limits.Hang:
				kill(result.OutcomeHung, fmt.Sprintf("watchdog: no progress for %s in stage %s", s.limits.Hang, cellStage(lastStage)))
			}
			if s.hostReserve > 0 && resultAt.IsZero() {
				if why := s.backstop(); why != "" {
					kill(result.OutcomeStopped, why)
				}
			}
			if s.onTick != nil {
				s.onTick(lastCount, now.Sub(start))
			}
		}
	}
}

// backstop says why a child must be killed because memory drained while it was stuck in a call: system
// available memory, or the memory cgroup's free memory, below half its reserve.
func (s *supervision) backstop() string {
	if mi, err := sample.System.Meminfo(); err == nil && mi.Available < s.hostReserve/2 {
		return fmt.Sprintf("host guard: system available memory %s fell below half the reserve %s",
			units.Bytes(mi.Available), units.Bytes(s.hostReserve))
	}
	if s.cgroup == nil {
		return ""
	}
	limit := s.cgroup.Limit()
	ws, err := s.cgroup.WorkingSet()
	if reserve := cgroupReserve(s.hostReserve, limit); limit > 0 && err == nil && limit-min(limit, ws) < reserve/2 {
		return fmt.Sprintf("host guard: the memory cgroup %s has %s free (its limit %s less its working set), below half its reserve %s",
			s.cgroup.Path, units.Bytes(limit-min(limit, ws)), units.Bytes(limit), units.Bytes(reserve))
	}
	return ""
}

// goFatalSignal finds the signal in the Go runtime's report of a fault in native code ("SIGSEGV:
// segmentation violation\nPC=... addr=0x0\nsignal arrived during cgo execution", or "[signal SIGSEGV: ...]"):
// the runtime catches such a fault, prints it and exits with status 2, so the wait status alone does not
// show the signal.
var goFatalSignal = regexp.MustCompile(`(?m)(?:^|\[signal )(SIG[A-Z]+): ([^\n\]]*)(?:\n(PC=[^\n]*))?`)

// faultAddr finds the faulting address in the Go runtime's PC line.
var faultAddr = regexp.MustCompile(`addr=(0x[0-9a-f]+)`)

// goReportStart is the first line of a report the Go runtime prints when the process dies.
var goReportStart = regexp.MustCompile(`(?m)^(SIG[A-Z]+: |fatal error: |panic: |runtime: |\[signal )`)

// runtimeMessage is the last line a child printed before the Go runtime's report of its death (a runtime's
// assertion message, say), or "".
func runtimeMessage(output string) string {
	if loc := goReportStart.FindStringIndex(output); loc != nil {
		output = output[:loc[0]]
	}
	return strings.TrimPrefix(lastLine(output), ": ")
}

// describeCrash says how a child that sent no result died: the signal, or its exit status.
func describeCrash(e *ending, waitErr error) {
	e.reason = describeExit(waitErr)
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.signal = signalName(ws.Signal())
		} else {
			code := ee.ExitCode()
			e.exitCode = &code
		}
	}
	if m := goFatalSignal.FindStringSubmatch(e.output); m != nil && e.signal == "" {
		e.signal, e.exitCode, e.detail = m[1], nil, m[2]
		if a := faultAddr.FindStringSubmatch(m[3]); a != nil {
			e.detail += " at address " + a[1]
		}
		if strings.Contains(e.output, "signal arrived during cgo execution") {
			e.detail += ", inside a call into the OpenCL runtime"
		}
		e.reason = fmt.Sprintf("the worker faulted with %s (%s)", e.signal, e.detail)
	}
	if e.printed = runtimeMessage(e.output); e.printed != "" {
		e.reason += "; it printed: " + e.printed
	}
}

func describeExit(err error) string {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		if err == nil {
			return "the worker exited without reporting a result"
		}
		return "the worker failed: " + err.Error()
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		why := fmt.Sprintf("the worker was killed by %s", signalName(ws.Signal()))
		if ws.Signal() == syscall.SIGKILL {
			why += " (not by clmemprobe: the kernel's OOM killer is the usual sender; see dmesg)"
		}
		return why
	}
	return fmt.Sprintf("the worker exited with status %d without reporting a result", ee.ExitCode())
}

func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGSEGV: "SIGSEGV", syscall.SIGKILL: "SIGKILL", syscall.SIGABRT: "SIGABRT",
		syscall.SIGBUS: "SIGBUS", syscall.SIGILL: "SIGILL", syscall.SIGFPE: "SIGFPE", syscall.SIGTERM: "SIGTERM",
		syscall.SIGINT: "SIGINT", syscall.SIGTRAP: "SIGTRAP"}
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}

// outputBuffer keeps the head and the tail of what a child printed (runtime warnings and logs, an abort
// message, the Go runtime's report of a fault in native code), 64 KiB at most whatever the child prints:
// the head holds the first lines of a crash report, the tail (a ring) the last words.
type outputBuffer struct {
	mu    sync.Mutex
	head  []byte
	ring  [outputTail]byte
	next  int  // where the ring's next byte goes
	full  bool // the ring has wrapped
	total int64
}

const outputHead, outputTail = 2 << 10, 62 << 10

func (t *outputBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.total += int64(n)
	if room := outputHead - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > outputTail {
		p = p[len(p)-outputTail:]
		t.full = true
	}
	for len(p) > 0 {
		k := copy(t.ring[t.next:], p)
		p = p[k:]
		t.next += k
		if t.next == outputTail {
			t.next, t.full = 0, true
		}
	}
	return n, nil
}

func (t *outputBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	tail := string(t.ring[:t.next])
	if t.full {
		tail = string(t.ring[t.next:]) + tail
	}
	sep := ""
	if kept := int64(len(t.head) + len(tail)); t.total > kept {
		sep = fmt.Sprintf("\n[... %d bytes left out ...]\n", t.total-kept)
	}
	return strings.TrimSpace(string(t.head) + sep + tail)
}
