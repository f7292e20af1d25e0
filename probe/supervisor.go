package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/internal/progress"
	"github.com/clmemprobe/clmemprobe/probe/sample"
	"github.com/clmemprobe/clmemprobe/report"
)

// Observer hears about a run while it goes. Calls come from one goroutine at a time.
type Observer interface {
	StrategyStarted(s Strategy, size uint64, devices []int)
	Progress(p Progress)
	StrategyDone(r *report.Strategy)
}

// Progress is a strategy's state, reported a few times a second.
type Progress struct {
	Strategy    Strategy
	Allocations uint64
	Bytes       uint64
	RSSBytes    uint64
	Elapsed     time.Duration
}

// Runner runs a plan's strategies, one worker process each, one after the other.
type Runner struct {
	Plan     Plan
	Observer Observer // may be nil
	// Checkpoint is called with the result so far after each strategy, so an interrupted or crashed run
	// still leaves a valid file. An error from it ends the run.
	Checkpoint func(*report.Run) error
	// Samples receives every sample as one JSON line as it arrives (the streamed samples file); may be nil.
	Samples io.Writer
	// Executable is the binary to start as the worker; "" means this one.
	Executable string
	// SamplesErr is the first error writing to Samples: the stream is incomplete, the result is not.
	SamplesErr error
}

// keptSamples bounds the samples a strategy keeps in memory and in run.json; the stream keeps them all.
const keptSamples = 1000

// Run runs every strategy at every size and appends the results to res. A cancelled ctx (Ctrl-C) stops the
// worker in flight, records it as stopped and returns ctx's error with res valid.
func (r *Runner) Run(ctx context.Context, res *report.Run) error {
	for _, size := range r.Plan.Sizes {
		for _, st := range r.Plan.Strategies {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if r.Observer != nil {
				r.Observer.StrategyStarted(st, size, r.Plan.Devices)
			}
			sr, err := r.runStrategy(ctx, st, size)
			if err != nil {
				return err
			}
			res.Strategies = append(res.Strategies, *sr)
			if r.Observer != nil {
				r.Observer.StrategyDone(sr)
			}
			if r.Checkpoint != nil {
				if err := r.Checkpoint(res); err != nil {
					return err
				}
			}
		}
	}
	return ctx.Err()
}

// runStrategy starts a worker and supervises it on a goroutine locked to its OS thread: the worker's
// parent-death signal fires when the thread that started it exits, so that thread must outlive it.
func (r *Runner) runStrategy(ctx context.Context, st Strategy, size uint64) (*report.Strategy, error) {
	type answer struct {
		s   *report.Strategy
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine, after the worker
		s, err := r.superviseWorker(ctx, st, size)
		ch <- answer{s, err}
	}()
	a := <-ch
	return a.s, a.err
}

// collector gathers a worker's events into a strategy result.
type collector struct {
	mu       sync.Mutex
	res      *report.Strategy
	result   *workerResult
	hostFit  slopeFit
	devFits  map[int]*slopeFit
	kept     []report.Sample
	stride   int
	total    int
	last     *report.Sample
	sink     io.Writer
	sinkErr  error // the first failed write to the samples stream
	strategy Strategy
}

func (c *collector) addSample(s *report.Sample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total++
	c.last = s
	x := float64(s.Index)
	c.hostFit.add(x, float64(s.RSSBytes))
	for _, d := range s.DeviceSamples {
		f := c.devFits[d.Device]
		if f == nil {
			f = &slopeFit{}
			c.devFits[d.Device] = f
		}
		f.add(x, float64(d.UsedBytes))
	}
	c.res.PeakRSSBytes = max(c.res.PeakRSSBytes, s.RSSBytes, s.HWMBytes)
	c.res.MaxMappings = max(c.res.MaxMappings, s.Mappings)
	// Keep every stride-th sample; when the kept set is full, drop every other one and double the stride.
	if (c.total-1)%c.stride == 0 {
		c.kept = append(c.kept, *s)
		if len(c.kept) >= 2*keptSamples {
			half := c.kept[:0]
			for i := 0; i < len(c.kept); i += 2 {
				half = append(half, c.kept[i])
			}
			c.kept = half
			c.stride *= 2
		}
	}
	if c.sink != nil && c.sinkErr == nil {
		line, _ := json.Marshal(struct {
			Strategy Strategy `json:"strategy"`
			Size     uint64   `json:"size_bytes"`
			*report.Sample
		}{c.strategy, c.res.SizeBytes, s})
		if _, err := c.sink.Write(append(line, '\n')); err != nil {
			c.sinkErr = err
		}
	}
}

func (c *collector) handle(ev event) {
	switch ev.T {
	case evSample:
		if ev.Sample != nil {
			c.addSample(ev.Sample)
		}
	case evNotice:
		c.mu.Lock()
		if len(c.res.Notices) < 100 {
			c.res.Notices = append(c.res.Notices, ev.Notice)
		}
		c.mu.Unlock()
	case evInfo:
		if ev.Info != nil {
			c.mu.Lock()
			c.res.DeviceSampler, c.res.MaxMapCount = ev.Info.DeviceSampler, ev.Info.MaxMapCount
			c.res.LoopStarted = ev.Info.LoopStarted.UTC().Format(time.RFC3339Nano)
			c.mu.Unlock()
		}
	case evResult:
		c.mu.Lock()
		c.result = ev.Result
		c.mu.Unlock()
	}
}

// outputBuffer keeps the head and the tail of what the worker printed (runtime warnings, an abort message,
// the Go runtime's report of a fault in native code) without growing without bound: the head holds the
// first lines of a crash report, the tail the last words.
type outputBuffer struct {
	mu         sync.Mutex
	head, tail []byte
	cut        bool
}

const outputHead, outputTail = 2 << 10, 6 << 10

func (t *outputBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if room := outputHead - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	t.tail = append(t.tail, p...)
	if len(t.tail) > outputTail {
		t.tail = append([]byte(nil), t.tail[len(t.tail)-outputTail:]...)
		t.cut = true
	}
	return n, nil
}

func (t *outputBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	sep := ""
	if t.cut {
		sep = "\n[...]\n"
	}
	return strings.TrimSpace(string(t.head) + sep + string(t.tail))
}

// goFatalSignal finds the signal in the Go runtime's report of a fault in native code ("SIGSEGV:
// segmentation violation\nPC=... addr=0x0\nsignal arrived during cgo execution", or "[signal SIGSEGV: ...]"):
// the runtime catches such a fault, prints it and exits with status 2, so the wait status alone does not
// show the signal.
var goFatalSignal = regexp.MustCompile(`(?m)(?:^|\[signal )(SIG[A-Z]+): ([^\n\]]*)(?:\n(PC=[^\n]*))?`)

func (r *Runner) superviseWorker(ctx context.Context, st Strategy, size uint64) (*report.Strategy, error) {
	p := r.Plan
	res := &report.Strategy{Strategy: string(st), Devices: p.Devices, SizeBytes: size, Samples: []report.Sample{}}
	spec := workerSpec{Library: p.Library, Platform: p.Platform, Devices: p.Devices, Strategy: st, Size: size,
		Count: p.Budget(size), Touch: p.Touch, HostReserve: p.HostReserve, SampleInterval: p.SampleInterval}
	specJSON, _ := json.Marshal(spec)

	cell, cellFile, err := progress.Create(p.WorkDir)
	if err != nil {
		return nil, err
	}
	defer cell.Close()
	defer cellFile.Close()
	evR, evW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("worker pipe: %w", err)
	}
	defer evR.Close()

	// Not bound to ctx: on interrupt the watchdog kills the worker's whole group and records why.
	cmd, err := childCommand(context.Background(), r.Executable, WorkerCommand)
	if err != nil {
		evW.Close()
		return nil, err
	}
	out := &outputBuffer{}
	cmd.Stdin = bytes.NewReader(specJSON)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{evW, cellFile}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		evW.Close()
		return nil, fmt.Errorf("cannot start a worker: %w", err)
	}
	evW.Close()

	col := &collector{res: res, devFits: map[int]*slopeFit{}, stride: 1, sink: r.Samples, strategy: st}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(evR)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var ev event
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				col.handle(ev)
			}
		}
	}()
	waitDone := make(chan error, 1)
	go func() { <-readDone; waitDone <- cmd.Wait() }()

	killOutcome, killReason, waitErr := r.watch(ctx, cmd.Process.Pid, cell, st, size, start, col, waitDone)
	return r.finish(res, col, cell, waitErr, killOutcome, killReason, out.String(), time.Since(start)), nil
}

// watch supervises a running worker until it exits. It kills the worker's process group when the run is
// interrupted, the strategy's time is up, the progress cell stops moving (a hang) or the host guard trips,
// and says which of those it was.
func (r *Runner) watch(ctx context.Context, pid int, cell *progress.Cell, st Strategy, size uint64, start time.Time,
	col *collector, waitDone <-chan error) (outcome, reason string, waitErr error) {
	p := r.Plan
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	lastCount, lastStage, lastMove := cell.Count(), cell.Stage(), time.Now()
	lastReport := time.Time{}
	kill := func(o, why string) {
		if outcome == "" {
			outcome, reason = o, why
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	for {
		select {
		case err := <-waitDone:
			return outcome, reason, err
		case <-ctx.Done():
			kill(report.OutcomeStopped, "interrupted")
		case now := <-tick.C:
			if n, s := cell.Count(), cell.Stage(); n != lastCount || s != lastStage {
				lastCount, lastStage, lastMove = n, s, now
			}
			switch {
			case p.Timeout > 0 && now.Sub(start) > p.Timeout:
				kill(report.OutcomeStopped, fmt.Sprintf("timeout: the strategy ran longer than %s", p.Timeout))
			case p.HangTimeout > 0 && lastStage != cellDone && now.Sub(lastMove) > p.HangTimeout:
				kill(report.OutcomeHung, fmt.Sprintf("watchdog: no progress for %s in stage %s", p.HangTimeout, stageNames[min(lastStage, cellDone)]))
			}
			// Backstop for the worker's own guard, in case the worker is stuck inside a runtime call while
			// memory keeps draining: at half the reserve the parent stops it.
			if avail, err := sample.Available(); err == nil && avail < p.HostReserve/2 {
				kill(report.OutcomeStopped, fmt.Sprintf("host guard: system available memory %s fell below half the reserve %s",
					report.FormatBytes(avail), report.FormatBytes(p.HostReserve)))
			}
			if r.Observer != nil && now.Sub(lastReport) > 200*time.Millisecond {
				lastReport = now
				var rss uint64
				col.mu.Lock()
				if col.last != nil {
					rss = col.last.RSSBytes
				}
				col.mu.Unlock()
				r.Observer.Progress(Progress{Strategy: st, Allocations: lastCount, Bytes: lastCount * size, RSSBytes: rss, Elapsed: now.Sub(start)})
			}
		}
	}
}

// finish turns what the worker said (or did not say) into the strategy's result.
func (r *Runner) finish(res *report.Strategy, col *collector, cell *progress.Cell, waitErr error, killOutcome, killReason, output string, took time.Duration) *report.Strategy {
	col.mu.Lock()
	defer col.mu.Unlock()
	res.Seconds = took.Seconds()
	wr := col.result
	switch {
	case killOutcome != "":
		res.Outcome, res.Reason = killOutcome, killReason
		res.AllocationsOK = cell.Count()
		res.LastStage = stageNames[min(cell.Stage(), cellDone)]
	case wr != nil:
		res.Outcome, res.Reason = wr.Outcome, wr.Reason
		res.AllocationsOK, res.FirstFailure = wr.AllocationsOK, wr.FirstFailure
		if wr.AllocationsOK > 0 && wr.LoopSeconds > 0 {
			res.NanosPerAlloc = wr.LoopSeconds * 1e9 / float64(wr.AllocationsOK)
		}
	default:
		// No last word: the runtime took the worker down. The cell still says how far it got.
		res.Outcome = report.OutcomeCrashed
		res.AllocationsOK = cell.Count()
		res.LastStage = stageNames[min(cell.Stage(), cellDone)]
		res.Reason = describeExit(waitErr)
		if ee, ok := waitErr.(*exec.ExitError); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				res.Signal = signalName(ws.Signal())
			} else {
				code := ee.ExitCode()
				res.ExitCode = &code
			}
		}
		if m := goFatalSignal.FindStringSubmatch(output); m != nil && res.Signal == "" {
			res.Signal = m[1]
			res.Reason = strings.TrimSpace(fmt.Sprintf("the worker faulted with %s (%s) %s", m[1], m[2], m[3]))
			if strings.Contains(output, "signal arrived during cgo execution") {
				res.Reason += ", inside a call into the OpenCL runtime"
			}
		}
	}
	if res.Outcome != report.OutcomeCompleted && output != "" {
		res.WorkerOutput = output
	}
	res.BytesOK = res.AllocationsOK * res.SizeBytes
	if b, ok := col.hostFit.slope(); ok {
		res.HostBytesPerBuffer = b
	}
	if len(col.devFits) > 0 {
		res.DeviceBytesPerBuffer = map[string]float64{}
		var sum float64
		keys := make([]int, 0, len(col.devFits))
		for d := range col.devFits {
			keys = append(keys, d)
		}
		sort.Ints(keys)
		for _, d := range keys {
			if b, ok := col.devFits[d].slope(); ok {
				res.DeviceBytesPerBuffer[strconv.Itoa(d)] = b
				sum += b
			}
		}
		if len(res.DeviceBytesPerBuffer) > 0 && res.SizeBytes > 0 {
			f := sum / float64(res.SizeBytes)
			res.ReplicationFactor = &f
		}
	}
	res.Samples = col.kept
	if col.last != nil && (len(res.Samples) == 0 || res.Samples[len(res.Samples)-1].Index != col.last.Index ||
		res.Samples[len(res.Samples)-1].Seconds != col.last.Seconds) {
		res.Samples = append(res.Samples, *col.last) // the failure sample always stays
	}
	if res.Samples == nil {
		res.Samples = []report.Sample{}
	}
	res.SamplesTotal = col.total
	if col.sinkErr != nil && r.SamplesErr == nil {
		r.SamplesErr = col.sinkErr
	}
	return res
}

func describeExit(err error) string {
	ee, ok := err.(*exec.ExitError)
	if !ok {
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
