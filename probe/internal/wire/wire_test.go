package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// What the encoder writes, the decoder reads back, event for event.
func TestEventsRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	sent := []Event{
		{T: EventInfo, Info: &StrategyInfo{DeviceSampler: "NVML", MaxMapCount: 65530}},
		{T: EventSample, Sample: &result.Sample{Index: 7, RSSBytes: 1 << 20}},
		{T: EventNotice, Notice: "a message"},
		{T: EventEnd, Ledger: map[int][]result.DeviceProcess{1: {{PID: 42}}}},
	}
	if err := enc.SendHello(); err != nil {
		t.Fatal(err)
	}
	for _, ev := range sent {
		if err := enc.Send(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.SendResult(StrategyAnswer{Outcome: result.OutcomeCompleted, AllocationsOK: 3}); err != nil {
		t.Fatal(err)
	}
	d := NewDecoder(&buf)
	var got []Event
	for ev, ok := d.Next(); ok; ev, ok = d.Next() {
		got = append(got, ev)
	}
	if len(got) != len(sent)+2 || got[0].T != EventHello || got[0].Version != ProtocolVersion || d.BadLines() != 0 {
		t.Fatalf("read %d events (first %+v), %d bad lines; want hello, %d events and the result", len(got), got[0], d.BadLines(), len(sent))
	}
	if got[1].Info.MaxMapCount != 65530 || got[2].Sample.Index != 7 || got[3].Notice != "a message" || got[4].Ledger[1][0].PID != 42 {
		t.Errorf("events changed on the way: %+v", got[1:5])
	}
	var answer struct {
		AllocationsOK uint64 `json:"allocations_ok"`
	}
	if res := got[len(got)-1]; res.T != EventResult || json.Unmarshal(res.Result, &answer) != nil || answer.AllocationsOK != 3 {
		t.Errorf("result %s", res.Result)
	}
}

// The decoder counts what it cannot trust and goes on: lines that do not parse, a first line that is not a
// hello of this version, a line longer than it reads.
func TestDecoderCountsBadLines(t *testing.T) {
	for _, c := range []struct {
		name   string
		stream string
		good   int
		bad    int
	}{
		{"garbage between events", `{"t":"hello","v":1}` + "\nnot json\n{\"t\":\n" + `{"t":"notice","n":"x"}` + "\n", 2, 2},
		{"another protocol version", `{"t":"hello","v":0}` + "\n" + `{"t":"result","r":1}` + "\n", 1, 1},
		{"no hello first", `{"t":"notice","n":"x"}` + "\n" + `{"t":"notice","n":"y"}` + "\n", 1, 1},
		{"a line past the limit", `{"t":"hello","v":1}` + "\n" + strings.Repeat("x", MaxEventLine+1) + "\n", 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := NewDecoder(strings.NewReader(c.stream))
			good := 0
			for _, ok := d.Next(); ok; _, ok = d.Next() {
				good++
			}
			if good != c.good || d.BadLines() != c.bad {
				t.Errorf("%d good, %d bad; want %d and %d", good, d.BadLines(), c.good, c.bad)
			}
		})
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("the parent is gone") }

// A write that failed fails every later send with the same error: nobody reads the stream any more.
func TestEncoderKeepsItsFirstError(t *testing.T) {
	enc := NewEncoder(failingWriter{})
	first := enc.SendHello()
	if first == nil || enc.Send(Event{T: EventNotice}) != first {
		t.Errorf("first %v, then %v; want the same error twice", first, enc.Send(Event{T: EventNotice}))
	}
	if err := enc.SendResult(func() {}); err == nil {
		t.Error("an answer that does not marshal was sent")
	}
}

func TestReadSpec(t *testing.T) {
	for _, c := range []struct {
		name, in string
		ok       bool
	}{
		{"this version", `{"protocol":1,"kind":"describe","library":"libOpenCL.so.1"}`, true},
		{"another version", `{"protocol":2,"kind":"describe"}`, false},
		{"no version", `{"kind":"describe"}`, false},
		{"not json", `protocol 1`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := ReadSpec(strings.NewReader(c.in))
			if (err == nil) != c.ok || (c.ok && (s.Kind != KindDescribe || s.Library != "libOpenCL.so.1")) {
				t.Errorf("%+v, %v; want ok %v", s, err, c.ok)
			}
		})
	}
}

// Every stage has the result's name, and the cell keeps the stage it was given.
func TestStages(t *testing.T) {
	for _, c := range []struct {
		name  string
		stage Stage
		want  result.Stage
	}{
		{"setup", StageSetup, result.StageSetup}, {"create", StageCreate, result.StageCreate}, {"touch", StageTouch, result.StageTouch},
		{"migrate", StageMigrate, result.StageMigrate}, {"finish", StageFinish, result.StageFinish}, {"running", StageRunning, "running"},
		{"done", StageDone, result.StageDone},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.stage.Result(); got != c.want {
				t.Errorf("%d: %q, want %q", c.stage, got, c.want)
			}
		})
	}
}

func TestExchangeSpecValidate(t *testing.T) {
	good := ExchangeSpec{Devices: []int{0, 1}, Cells: 1024, Halo: 8, Steps: 10, Sync: SyncEvents}
	for _, c := range []struct {
		name   string
		change func(*ExchangeSpec)
		want   string // the error, whole; "" for none
	}{
		{"a good request", func(*ExchangeSpec) {}, ""},
		{"devices not chosen yet", func(r *ExchangeSpec) { r.Devices = nil }, ""},
		{"one device", func(r *ExchangeSpec) { r.Devices = []int{0} }, "the exchange needs at least two devices (got 1): select them with --devices"},
		{"no halo", func(r *ExchangeSpec) { r.Halo = 0 }, "--halo must be at least 1 cell"},
		{"a halo wider than a slab", func(r *ExchangeSpec) { r.Cells = 4 }, "the halo (8 cells) is wider than a slab (4 cells per device): raise --cells or lower --halo"},
		{"too many cells", func(r *ExchangeSpec) { r.Cells = maxCells + 1 }, fmt.Sprintf("--cells %d is too large (at most 2^31 per device)", maxCells+1)},
		{"no steps", func(r *ExchangeSpec) { r.Steps = 0 }, "--steps must be at least 1"},
		{"an unknown sync", func(r *ExchangeSpec) { r.Sync = "maybe" }, `--sync "maybe": choose events or none`},
		{"negative repetitions", func(r *ExchangeSpec) { r.BenchReps = -1 }, "--bench-reps cannot be negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := good
			c.change(&r)
			err := r.Validate()
			if (c.want == "") != (err == nil) || (err != nil && err.Error() != c.want) {
				t.Errorf("%v; want %q", err, c.want)
			}
		})
	}
}

func TestCgroupReserve(t *testing.T) {
	for _, c := range []struct {
		name                      string
		hostReserve, limit, wants uint64
	}{
		{"a sixteenth of a 4 GiB limit", 1 << 30, 4 << 30, 256 << 20},
		{"at least 32 MiB", 1 << 30, 256 << 20, 32 << 20},
		{"never more than the host's reserve", 1 << 30, 64 << 30, 1 << 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := CgroupReserve(c.hostReserve, c.limit); got != c.wants {
				t.Errorf("%d, want %d", got, c.wants)
			}
		})
	}
}

// A strategy job goes to its worker as this JSON, the touch mode as the engine's enum spelled as users type
// it: the bytes are pinned, so that a change of the spec's types shows here before it shows between a
// parent and a worker.
func TestStrategySpecBytes(t *testing.T) {
	spec := StrategySpec{Platform: 1, Devices: []int{0, 2}, Strategy: result.MigrateFirst, Size: 1 << 20, Flags: result.DefaultFlags, Count: 10,
		Touch: result.TouchKernel, HostReserve: 64 << 20, SampleInterval: 10 * time.Millisecond, PerBuffer: true}
	b, err := json.Marshal(spec)
	want := `{"platform":1,"devices":[0,2],"strategy":"migrate-first","size":1048576,"flags":1,"count":10,"touch":"kernel","host_reserve":67108864,"sample_interval":10000000,"per_buffer":true}`
	if err != nil || string(b) != want {
		t.Fatalf("spec JSON %s, %v; want %s", b, err, want)
	}
	var back StrategySpec
	if err := json.Unmarshal(b, &back); err != nil || back.Touch != result.TouchKernel || back.Strategy != result.MigrateFirst || back.Count != 10 {
		t.Errorf("read back %+v, %v", back, err)
	}
}
