package probe

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/clmemprobe/clmemprobe/report"
)

// workerSpec is what the parent tells a worker to do, as JSON on the worker's standard input.
type workerSpec struct {
	Library        string        `json:"library"`
	Platform       int           `json:"platform"`
	Devices        []int         `json:"devices"`
	Strategy       Strategy      `json:"strategy"`
	Size           uint64        `json:"size"`
	Count          uint64        `json:"count"`
	Touch          Touch         `json:"touch"`
	HostReserve    uint64        `json:"host_reserve"`
	SampleInterval time.Duration `json:"sample_interval"`
}

// Event types a worker sends, one JSON object per line on file descriptor 3.
const (
	evSample = "sample"
	evNotice = "notice"
	evResult = "result"
	evInfo   = "info"
)

// event is one line of the worker protocol; T says which field is set.
type event struct {
	T      string         `json:"t"`
	Sample *report.Sample `json:"s,omitempty"`
	Notice string         `json:"n,omitempty"`
	Result *workerResult  `json:"r,omitempty"`
	Info   *workerInfo    `json:"i,omitempty"`
}

// workerInfo is sent once the worker has set up its contexts, before the loop.
type workerInfo struct {
	DeviceSampler string `json:"device_sampler"`
	MaxMapCount   uint64 `json:"max_map_count"`
	// LoopStarted is the wall clock when the loop began; sample times count from it.
	LoopStarted time.Time `json:"loop_started"`
}

// workerResult is the worker's last word: how the loop ended.
type workerResult struct {
	Outcome       string               `json:"outcome"`
	Reason        string               `json:"reason,omitempty"`
	AllocationsOK uint64               `json:"allocations_ok"`
	FirstFailure  *report.FirstFailure `json:"first_failure,omitempty"`
	LoopSeconds   float64              `json:"loop_seconds"`
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

// send writes one event and flushes it, so the parent has it even if the worker dies right after.
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
