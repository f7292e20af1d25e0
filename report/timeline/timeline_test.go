package timeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// event is an event as a viewer reads it: the JSON, not this package's type.
type event map[string]any

// parsed is a written timeline, read back.
type parsed struct {
	TraceEvents     []event           `json:"traceEvents"`
	DisplayTimeUnit string            `json:"displayTimeUnit"`
	OtherData       map[string]string `json:"otherData"`
}

// write renders a document and reads it back, checking that it is the JSON Object Format with every event
// well formed (wellFormed) and the same bytes when written again.
func write(t *testing.T, d *Document) parsed {
	t.Helper()
	var b, again bytes.Buffer
	if err := d.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := d.Write(&again); err != nil || !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Fatalf("written twice, the timeline differs (%v)", err)
	}
	var p parsed
	dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("the timeline is not a trace event document: %v\n%s", err, b.Bytes())
	}
	if p.TraceEvents == nil || p.DisplayTimeUnit != "ms" || p.OtherData == nil {
		t.Fatalf("traceEvents %v, displayTimeUnit %q, otherData %v", p.TraceEvents, p.DisplayTimeUnit, p.OtherData)
	}
	wellFormed(t, p.TraceEvents)
	return p
}

// wellFormed checks each event's required fields for its phase (the trace event format's): name, ph, ts
// and pid always; tid for slices, instants and thread names; dur for a slice; numeric args for a counter;
// s (p or g) for an instant; args.name for a name. It checks the order too: metadata first, then ts never
// going back, so that every track is in time order.
func wellFormed(t *testing.T, events []event) {
	t.Helper()
	last, meta := -1.0, true
	for i, e := range events {
		name, _ := e["name"].(string)
		ph, _ := e["ph"].(string)
		ts, okTs := e["ts"].(float64)
		_, okPid := e["pid"].(float64)
		_, okTid := e["tid"].(float64)
		bad := func(why string) { t.Errorf("event %d (%v): %s", i, e, why) }
		if name == "" || !okTs || !okPid || ts < 0 {
			bad("no name, ts or pid, or a negative ts")
		}
		if (ph == PhaseComplete || ph == PhaseInstant || name == "thread_name") && !okTid {
			bad("no tid")
		}
		args, _ := e["args"].(map[string]any)
		switch ph {
		case PhaseMetadata:
			if !meta {
				bad("metadata after the first timed event")
			}
			if s, ok := args["name"].(string); (name == "process_name" || name == "thread_name") && (!ok || s == "") {
				bad("a name without args.name")
			}
			continue
		case PhaseComplete:
			if d, ok := e["dur"].(float64); !ok || d < 0 {
				bad("a slice without a duration")
			}
		case PhaseCounter:
			if len(args) == 0 {
				bad("a counter without series")
			}
			for k, v := range args {
				if _, ok := v.(float64); !ok {
					bad("series " + k + " is not a number")
				}
			}
		case PhaseInstant:
			if s := e["s"]; s != ScopeProcess && s != ScopeGlobal {
				bad("an instant without scope p or g")
			}
		default:
			bad("unknown phase")
		}
		if _, ok := e["dur"]; ok && ph != PhaseComplete {
			bad("dur on an event that is not a slice")
		}
		if meta, last = false, max(last, ts); ts < last {
			bad(fmt.Sprintf("ts %v after %v: out of order", ts, last))
		}
	}
}

// of are the events of a phase, and of a name where name is not "".
func of(events []event, ph, name string) []event {
	var out []event
	for _, e := range events {
		if e["ph"] == ph && (name == "" || e["name"] == name) {
			out = append(out, e)
		}
	}
	return out
}

// series are a counter's readings of one series, in order, with their times.
func series(events []event, pid int, name, key string) (ts, v []float64) {
	for _, e := range of(events, PhaseCounter, name) {
		if e["pid"] == float64(pid) {
			args := e["args"].(map[string]any)
			x, ok := args[key].(float64)
			if !ok {
				continue
			}
			ts, v = append(ts, e["ts"].(float64)), append(v, x)
		}
	}
	return ts, v
}

func sameFloats(a, b []float64) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// names are the values of a metadata kind (process_name, thread_name) by pid and tid.
func names(events []event, kind string) map[string]string {
	out := map[string]string{}
	for _, e := range of(events, PhaseMetadata, kind) {
		out[fmt.Sprintf("%v/%v", e["pid"], e["tid"])] = e["args"].(map[string]any)["name"].(string)
	}
	return out
}

// Strings of the document (device names, the program's arguments) reach the file as they are, whatever
// they hold: encoding/json escapes them, and the file parses.
func TestStringsFromTheDocumentAreEscapedByJSON(t *testing.T) {
	odd := "dev \"0\"\n\t</script>\\ \u2028 é"
	tr := &result.Trace{Program: "/bin/prog \"x\"", Args: []string{"--name=" + odd, "a\x00b"}, Seconds: 1,
		Devices: []result.TraceDevice{{Index: 0, Name: odd}},
		Samples: []result.TraceSample{{Sample: result.Sample{Seconds: 0.5, DeviceSamples: []result.DeviceSample{{Device: 0, UsedBytes: 7}}}}}}
	p := write(t, Trace(tr))
	if got := names(p.TraceEvents, "process_name")["2/0"]; got != "program: prog \"x\" --name="+odd+" a\x00b" {
		t.Errorf("the program's name reads %q", got)
	}
	if c := of(p.TraceEvents, PhaseCounter, "device 0 memory ("+odd+")"); len(c) != 1 {
		t.Errorf("the device's counter is not named by the device's name as given: %v", p.TraceEvents)
	}
	if got := of(p.TraceEvents, PhaseComplete, "prog \"x\"")[0]["args"].(map[string]any)["command"]; fmt.Sprint(got) != fmt.Sprint([]any{tr.Program, tr.Args[0], tr.Args[1]}) {
		t.Errorf("the command reads %q", got)
	}
}

// A document without jobs, samples or contexts gives a timeline with its names and no more: an empty
// array, not null.
func TestEmptyDocuments(t *testing.T) {
	for name, d := range map[string]*Document{"run": Run(&result.Run{}), "trace": Trace(&result.Trace{})} {
		p := write(t, d)
		if n := len(of(p.TraceEvents, PhaseCounter, "")) + len(of(p.TraceEvents, PhaseInstant, "")); n != 0 {
			t.Errorf("%s: %d counters and instants from an empty document", name, n)
		}
		if !strings.HasPrefix(p.OtherData["document"], name) {
			t.Errorf("%s: otherData %v", name, p.OtherData)
		}
	}
}
