package probe

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/clmemprobe/clmemprobe/probe/internal/cl"
	"github.com/clmemprobe/clmemprobe/probe/internal/progress"
	"github.com/clmemprobe/clmemprobe/report/result"
)

// ChildCommand is the hidden command under which the binary re-executes itself as a child. main hands it to
// RunChild before any command-line parsing.
const ChildCommand = "__child"

// protocolVersion is the version of the parent-child protocol below; a child of another version is refused.
const protocolVersion = 1

// The child's file descriptors, as the parent sets them (ExtraFiles start at 3).
const (
	childEventsFD = 3
	childCellFD   = 4
)

// The kinds of job a child runs.
const (
	kindStrategy = "strategy" // one strategy's allocation loop
	kindDescribe = "describe" // list platforms and devices
	kindExchange = "exchange" // the halo exchange
)

// childSpec is what the parent asks a child to do, as one JSON object on the child's standard input.
type childSpec struct {
	Protocol int           `json:"protocol"`
	Kind     string        `json:"kind"`
	Library  string        `json:"library"`
	Strategy *strategySpec `json:"strategy,omitempty"`
	Exchange *exchangeSpec `json:"exchange,omitempty"`
}

// Event types a child sends, one JSON object per line on its events descriptor.
const (
	evHello  = "hello"  // first: the protocol version
	evInfo   = "info"   // a strategy's set-up is done, its loop starts
	evSample = "sample" // one memory sample
	evNotice = "notice" // a context notify message
	evEnd    = "end"    // a strategy's loop ended: what its devices held then
	evResult = "result" // the last word: the job's answer
)

// event is one line of the protocol; T says which field is set.
type event struct {
	T       string         `json:"t"`
	Version int            `json:"v,omitempty"`
	Sample  *result.Sample `json:"s,omitempty"`
	Notice  string         `json:"n,omitempty"`
	Info    *strategyInfo  `json:"i,omitempty"`
	// Ledger is, per device, the processes holding its memory when the loop ended (evEnd).
	Ledger map[int][]result.DeviceProcess `json:"l,omitempty"`
	Result json.RawMessage                `json:"r,omitempty"`
}

// eventWriter serialises events from the loop and the sampler goroutine onto one stream.
type eventWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
	err error
}

func newEventWriter(w io.Writer) *eventWriter {
	bw := bufio.NewWriterSize(w, 64<<10)
	return &eventWriter{w: bw, enc: json.NewEncoder(bw)}
}

// send writes one event and flushes it, so the parent has it even if the child dies right after.
func (e *eventWriter) send(ev event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return e.err
	}
	if err := e.enc.Encode(ev); err != nil {
		e.err = err
		return err
	}
	e.err = e.w.Flush()
	return e.err
}

// sendResult sends the child's answer as its last word.
func (e *eventWriter) sendResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return e.send(event{T: evResult, Result: b})
}

// child is what every kind of job has: its spec, the progress cell and the event stream.
type child struct {
	spec childSpec
	cell *progress.Cell
	ev   *eventWriter
	lib  *cl.Library
}

// RunChild is the child process: it reads its spec, runs the job and streams events to the parent. It
// returns the process exit code. Whatever the runtime does to this process (crash, hang, OOM kill), the
// parent learns how far it got from the progress cell.
func RunChild(stdin io.Reader) int {
	// First of all, before the runtime can start helper processes: the protocol's descriptors are this
	// process's alone. A helper that inherited them would keep the parent waiting for their end.
	for _, fd := range []int{childEventsFD, childCellFD} {
		if _, err := fcntl(fd, syscall.F_SETFD, syscall.FD_CLOEXEC); err != nil {
			fmt.Fprintln(os.Stderr, "clmemprobe: this hidden command is started by clmemprobe itself, not by hand")
			return 2
		}
	}
	c := &child{ev: newEventWriter(os.NewFile(childEventsFD, "events"))}
	var err error
	cellFile := os.NewFile(childCellFD, "progress")
	c.cell, err = progress.Map(cellFile)
	// The mapping outlives the descriptor. Closed now, not by the garbage collector at a moment of its own:
	// that would move the worker's descriptor count in the middle of a loop that a descriptor limit ends.
	_ = cellFile.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "clmemprobe child:", err)
		return 2
	}
	if err := json.NewDecoder(stdin).Decode(&c.spec); err != nil || c.spec.Protocol != protocolVersion {
		fmt.Fprintf(os.Stderr, "clmemprobe child: spec of protocol %d (%v); this build speaks %d\n", c.spec.Protocol, err, protocolVersion)
		return 2
	}
	// The job's limits, before this process opens anything more and before the runtime loads (which may size
	// its tables by them): the user's descriptor limit, which this process's Go runtime raised as it started,
	// and a variant's. A limit that cannot be set is the job's answer, at set-up.
	var limitErr error
	if c.spec.Strategy != nil {
		limitErr = setLimits(c.spec.Strategy.Limits)
	}
	if c.ev.send(event{T: evHello, Version: protocolVersion}) != nil {
		return 3
	}
	// If memory runs out, the kernel's OOM killer should pick this process, not the parent holding the data.
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	c.cell.SetStage(cellSetup)
	var answer any
	switch c.spec.Kind {
	case kindStrategy:
		if limitErr != nil {
			answer = limitFailure(limitErr)
		} else {
			answer = c.runStrategy()
		}
	case kindDescribe:
		answer = c.describe()
	case kindExchange:
		answer = c.exchange()
	default:
		fmt.Fprintf(os.Stderr, "clmemprobe child: unknown kind %q\n", c.spec.Kind)
		return 2
	}
	c.cell.SetStage(cellDone)
	if err := c.ev.sendResult(answer); err != nil {
		return 3
	}
	return 0
}

// open loads the OpenCL library in the child.
func (c *child) open() error {
	lib, err := cl.Open(c.spec.Library)
	c.lib = lib
	return err
}

func fcntl(fd int, cmd int, arg int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), uintptr(arg))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
