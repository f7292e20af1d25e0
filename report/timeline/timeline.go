// Package timeline writes a run (run.json) or a trace (trace.json) as a timeline in the JSON Object Format
// of Chrome's Trace Event Format ({"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}),
// which Perfetto (ui.perfetto.dev) and chrome://tracing open: counters of the memory the samples measured, a
// slice per job (a run) or for the program (a trace), and instants where something ended the loop (the
// first failure, a guard stop, a kill, an interrupt).
//
// It is a pure function of the result document: times are relative to the document's start, in
// microseconds; a counter is written only for a series the samples hold (no zero stands for a figure that
// was not read); the events are in a fixed order, so the same document gives the same bytes. Every string
// from the document (device names, the program's arguments) goes through encoding/json only.
package timeline

import (
	"bufio"
	"cmp"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The phases of the events written (the trace event format's "ph").
const (
	PhaseCounter  = "C" // a sample of one or more numeric series (args), per process and name
	PhaseComplete = "X" // a slice with a start (ts) and a duration (dur)
	PhaseInstant  = "i" // a moment, of a process ("s": "p") or of the whole document ("s": "g")
	PhaseMetadata = "M" // names of processes (process_name) and threads (thread_name), and their order
)

// The scopes of an instant event ("s").
const (
	ScopeProcess = "p"
	ScopeGlobal  = "g"
)

// The tracks. Process 1 is the machine (available memory, the cgroup's, the devices'); a trace's program is
// process 2, with its slice on thread 1 and each context's lifetime on thread 2+index; a run's job i is
// process 2+i, with its slice on thread 1.
const (
	pidMachine  = 1
	pidProgram  = 2
	pidFirstJob = 2
	tidMain     = 1
	tidContext0 = 2
)

// Event is one event of the trace event format. Ts and Dur are microseconds; Dur is written for complete
// events only, S for instants only; Args hold a counter's numeric series, a name's "name", or what an event
// is about.
type Event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// Document is a timeline in the JSON Object Format.
type Document struct {
	TraceEvents     []Event           `json:"traceEvents"`
	DisplayTimeUnit string            `json:"displayTimeUnit"`
	OtherData       map[string]string `json:"otherData"`
}

// WriteRun writes the timeline of a run.
func WriteRun(w io.Writer, r *result.Run) error { return Run(r).Write(w) }

// WriteTrace writes the timeline of a trace.
func WriteTrace(w io.Writer, t *result.Trace) error { return Trace(t).Write(w) }

// Write writes the document as JSON, one event per line (a diff of two timelines reads by event).
func (d *Document) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	_, _ = bw.WriteString(`{"traceEvents":[`)
	for i := range d.TraceEvents {
		b, err := json.Marshal(&d.TraceEvents[i])
		if err != nil {
			return err
		}
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		_ = bw.WriteByte('\n')
		_, _ = bw.Write(b)
	}
	unit, err := json.Marshal(d.DisplayTimeUnit)
	if err != nil {
		return err
	}
	other, err := json.Marshal(d.OtherData)
	if err != nil {
		return err
	}
	_, _ = bw.WriteString("\n],\n\"displayTimeUnit\":")
	_, _ = bw.Write(unit)
	_, _ = bw.WriteString(",\n\"otherData\":")
	_, _ = bw.Write(other)
	_, _ = bw.WriteString("}\n")
	return bw.Flush()
}

// micros is seconds as microseconds, to the nanosecond.
func micros(s float64) float64 { return math.Round(s*1e9) / 1e3 }

// builder collects the events of one document.
type builder struct{ events []Event }

func (b *builder) processName(pid int, name string, order int) {
	b.events = append(b.events,
		Event{Name: "process_name", Ph: PhaseMetadata, Pid: pid, Args: map[string]any{"name": name}},
		Event{Name: "process_sort_index", Ph: PhaseMetadata, Pid: pid, Args: map[string]any{"sort_index": order}})
}

func (b *builder) threadName(pid, tid int, name string) {
	b.events = append(b.events, Event{Name: "thread_name", Ph: PhaseMetadata, Pid: pid, Tid: tid, Args: map[string]any{"name": name}})
}

// counter adds a reading of a counter's series at ts (microseconds).
func (b *builder) counter(pid int, name string, ts float64, series map[string]any) {
	b.events = append(b.events, Event{Name: name, Cat: "memory", Ph: PhaseCounter, Ts: ts, Pid: pid, Args: series})
}

// slice adds a complete event from ts for dur (microseconds).
func (b *builder) slice(pid, tid int, cat, name string, ts, dur float64, args map[string]any) {
	b.events = append(b.events, Event{Name: name, Cat: cat, Ph: PhaseComplete, Ts: ts, Dur: &dur, Pid: pid, Tid: tid, Args: args})
}

// instant adds an instant event of scope (ScopeProcess, ScopeGlobal) at ts (microseconds).
func (b *builder) instant(pid, tid int, scope, cat, name string, ts float64, args map[string]any) {
	b.events = append(b.events, Event{Name: name, Cat: cat, Ph: PhaseInstant, Ts: ts, Pid: pid, Tid: tid, S: scope, Args: args})
}

// phaseRank orders events at the same time: names first, then slices, counters and instants.
var phaseRank = map[string]int{PhaseMetadata: 0, PhaseComplete: 1, PhaseCounter: 2, PhaseInstant: 3}

// document is the events in their fixed order: metadata first, then by time, then by phase, then in the
// order they were made (which follows the document's own order of jobs, samples and series).
func (b *builder) document(other map[string]string) *Document {
	events := slices.Clone(b.events)
	slices.SortStableFunc(events, func(x, y Event) int {
		if mx, my := x.Ph == PhaseMetadata, y.Ph == PhaseMetadata; mx != my {
			if mx {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(x.Ts, y.Ts), cmp.Compare(phaseRank[x.Ph], phaseRank[y.Ph]))
	})
	if events == nil {
		events = []Event{}
	}
	return &Document{TraceEvents: events, DisplayTimeUnit: "ms", OtherData: other}
}

// deviceNames maps a device index to the name a counter of its memory carries.
type deviceNames map[int]string

// machine adds the machine's counters of one sample taken at ts (microseconds): the system's available
// memory and the memory cgroup's where read, and each device's memory in the sample, split into the
// program's own and other processes' where own tells the program's (a trace's samples), else used.
func (b *builder) machine(ts float64, s *result.Sample, names deviceNames, own func(dev int) (uint64, bool)) {
	if s.AvailBytes > 0 {
		b.counter(pidMachine, "available memory", ts, map[string]any{"bytes": s.AvailBytes})
	}
	if s.CgroupBytes > 0 {
		b.counter(pidMachine, "cgroup memory", ts, map[string]any{"bytes": s.CgroupBytes})
	}
	for _, d := range s.DeviceSamples {
		series := map[string]any{"used": d.UsedBytes}
		if mine, ok := own(d.Device); ok {
			series = map[string]any{"program": mine, "others": d.UsedBytes - min(mine, d.UsedBytes)}
		}
		b.counter(pidMachine, names.counter(d.Device), ts, series)
	}
}

// counter is the name of a device's memory counter: "device 0 memory (NVIDIA H200)".
func (n deviceNames) counter(dev int) string {
	name := "device " + strconv.Itoa(dev) + " memory"
	if s := n[dev]; s != "" {
		name += " (" + s + ")"
	}
	return name
}

// noOwn is the own share of a document whose samples do not split a device's memory (a run's).
func noOwn(int) (uint64, bool) { return 0, false }
