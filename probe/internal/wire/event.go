package wire

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// EventKind says which field of an Event is set.
type EventKind string

// The events a child sends, one JSON object per line on its events descriptor.
const (
	EventHello  EventKind = "hello"  // first: the protocol version
	EventInfo   EventKind = "info"   // a strategy's set-up is done, its loop starts
	EventSample EventKind = "sample" // one memory sample
	EventNotice EventKind = "notice" // a context notify message
	EventEnd    EventKind = "end"    // a strategy's loop ended: what its devices held then
	EventGPU    EventKind = "gpu"    // one reading of the GPUs' memory (the GPU memory child)
	EventResult EventKind = "result" // the last word: the job's answer
)

// Event is one line of the protocol; T says which field is set.
type Event struct {
	T       EventKind      `json:"t"`
	Version int            `json:"v,omitempty"`
	Sample  *result.Sample `json:"s,omitempty"`
	Notice  string         `json:"n,omitempty"`
	Info    *StrategyInfo  `json:"i,omitempty"`
	// Ledger is, per device, the processes holding its memory when the loop ended (EventEnd).
	Ledger map[int][]result.DeviceProcess `json:"l,omitempty"`
	Result json.RawMessage                `json:"r,omitempty"`
	GPU    *GPUReading                    `json:"g,omitempty"`
}

// encoderBuffer is the encoder's buffer: a sample with many devices fits, and every event is flushed.
const encoderBuffer = 64 << 10

// Encoder serialises events from the loop and the sampler goroutine onto one stream.
type Encoder struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
	err error
}

// NewEncoder writes events on w.
func NewEncoder(w io.Writer) *Encoder {
	bw := bufio.NewWriterSize(w, encoderBuffer)
	return &Encoder{w: bw, enc: json.NewEncoder(bw)}
}

// Send writes one event and flushes it, so the parent has it even if the child dies right after. After a
// failed write every Send fails with the same error.
func (e *Encoder) Send(ev Event) error {
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

// SendHello sends the first event: this build's protocol version.
func (e *Encoder) SendHello() error { return e.Send(Event{T: EventHello, Version: ProtocolVersion}) }

// SendResult sends the child's answer as its last word.
func (e *Encoder) SendResult(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return e.Send(Event{T: EventResult, Result: b})
}

// firstEventLine is where the decoder's line buffer starts; it grows to MaxEventLine.
const firstEventLine = 64 << 10

// MaxEventLine bounds one event line, and so the answer a result event carries (a sample of many devices
// is a few KiB; an exchange's answer, with one check per verified step, is the largest).
const MaxEventLine = 64 << 20

// Decoder reads a child's events. A line that does not parse, and a first line that is not a hello of this
// protocol version, is counted as bad and skipped, never silently dropped.
type Decoder struct {
	sc    *bufio.Scanner
	first bool
	bad   int
}

// NewDecoder reads events from r.
func NewDecoder(r io.Reader) *Decoder {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, firstEventLine), MaxEventLine)
	return &Decoder{sc: sc, first: true}
}

// Next returns the next good event, and false at the end of the stream. A stream that ends in a read error
// (or a line past MaxEventLine) counts one more bad line.
func (d *Decoder) Next() (Event, bool) {
	for d.sc.Scan() {
		var ev Event
		err := json.Unmarshal(d.sc.Bytes(), &ev)
		first := d.first
		d.first = false
		if err != nil || (first && (ev.T != EventHello || ev.Version != ProtocolVersion)) {
			d.bad++
			continue
		}
		return ev, true
	}
	if d.sc.Err() != nil {
		d.bad++
	}
	return Event{}, false
}

// BadLines is how many lines did not parse so far.
func (d *Decoder) BadLines() int { return d.bad }
