package sample

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/internal/wire"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// newFdinfoSampler is this process's DRM fdinfo source for ts, opened and read once as the run's chain does.
func newFdinfoSampler(ts []Target, root Root) (DeviceSampler, error) {
	s, _, err := drmSource(root, 0, false).applies(ts)
	return s, err
}

// fakeSource reads the targets on its buses, each device's use its index times unit and its own share half
// of that; where answer is set, opening it gives that instead (not yet, gone).
type fakeSource struct {
	name   string
	buses  map[string]bool
	unit   uint64
	answer error
	opens  int
}

func (f *fakeSource) source() source {
	return source{idle: unavailable(ErrNotYet, "%s: not read", f.name), open: func(ts []Target) (DeviceSampler, error) {
		f.opens++
		if f.answer != nil {
			return nil, f.answer
		}
		s := &fakeSampler{f: f}
		for _, t := range ts {
			if f.buses[t.PCIBusID] {
				s.ts = append(s.ts, t)
			}
		}
		return s, nil
	}}
}

// fakeSampler is a fakeSource opened for the targets it reads.
type fakeSampler struct {
	f  *fakeSource
	ts []Target
}

func (s *fakeSampler) Name() string { return s.f.name }

func (s *fakeSampler) Read() ([]result.DeviceSample, error) {
	if len(s.ts) == 0 {
		return nil, unavailable(ErrNotThere, "%s: nothing for these devices", s.f.name)
	}
	var out []result.DeviceSample
	for _, t := range s.ts {
		out = append(out, result.DeviceSample{Device: t.Index, UsedBytes: uint64(t.Index) * s.f.unit})
	}
	return out, nil
}

func (s *fakeSampler) own(got []result.DeviceSample) []result.TraceDeviceUse {
	var out []result.TraceDeviceUse
	for _, g := range got {
		out = append(out, result.TraceDeviceUse{Device: g.Device, Bytes: g.UsedBytes / 2})
	}
	return out
}

// fakes are three sources: a reads bus a, b bus b, c both, each with its own unit.
func fakes() (a, b, c *fakeSource) {
	return &fakeSource{name: "a", buses: map[string]bool{"a": true}, unit: 1},
		&fakeSource{name: "b", buses: map[string]bool{"b": true}, unit: 10},
		&fakeSource{name: "c", buses: map[string]bool{"a": true, "b": true}, unit: 100}
}

func chainOf(later, own bool, fs ...*fakeSource) *Chain {
	srcs := make([]source, len(fs))
	for i, f := range fs {
		srcs[i] = f.source()
	}
	return newChain(srcs, later, own)
}

// used is the figures a fake source of unit gives for the devices of indices.
func used(unit uint64, indices ...int) []result.DeviceSample {
	var out []result.DeviceSample
	for _, i := range indices {
		out = append(out, result.DeviceSample{Device: i, UsedBytes: uint64(i) * unit})
	}
	return out
}

// The first source in order that has figures for the devices is chosen and names the chain; those before it
// say why they did not apply, and those after it are not opened. Where none applies, each says why, in order.
func TestChainChoosesTheFirstSourceInOrder(t *testing.T) {
	tests := []struct {
		name      string
		ts        []Target
		wantName  string
		wantUnit  uint64
		wantOpens [3]int
	}{
		{"the first reads them", []Target{{Index: 3, PCIBusID: "a"}}, "a", 1, [3]int{1, 0, 0}},
		{"the first has nothing: the second", []Target{{Index: 4, PCIBusID: "b"}}, "b", 10, [3]int{1, 1, 0}},
	}
	for _, tc := range tests {
		a, b, c := fakes()
		ch := chainOf(false, false, a, b, c)
		s, err := ch.Pick(tc.ts)
		if s == nil || err != nil || s.Name() != tc.wantName || [3]int{a.opens, b.opens, c.opens} != tc.wantOpens {
			t.Fatalf("%s: %v, %v, opened %d %d %d; want %s, opened %v", tc.name, s, err, a.opens, b.opens, c.opens, tc.wantName, tc.wantOpens)
		}
		if got, _ := s.Read(); !reflect.DeepEqual(got, used(tc.wantUnit, tc.ts[0].Index)) || string(ch.Sampler(tc.ts)) != tc.wantName {
			t.Errorf("%s: read %+v, sampler %q", tc.name, got, ch.Sampler(tc.ts))
		}
	}
	a, b, c := fakes()
	s, err := chainOf(false, false, a, b, c).Pick([]Target{{Index: 0, PCIBusID: "z"}})
	var why Unavailable
	if s != nil || !errors.As(err, &why) || len(why) != 3 || !errors.Is(err, ErrNotThere) ||
		err.Error() != "a: nothing for these devices; b: nothing for these devices; c: nothing for these devices" {
		t.Errorf("no source for bus z: %v, %q (%d reasons)", s, err, len(why))
	}
}

// A source that has not answered yet holds back those after it: no figures, and at the end it says so, the
// others their reasons before any read (or the last one that tried them).
func TestChainWaitsForASourceNotYetAnswered(t *testing.T) {
	a, b, _ := fakes()
	a.answer = unavailable(ErrNotYet, "a: no answer yet")
	ch := chainOf(true, true, a, b)
	ts := []Target{{Index: 2, PCIBusID: "b"}}
	got, own := ch.Read(ts)
	if got != nil || own != nil || b.opens != 0 || ch.Sampler(ts) != result.DeviceNotAvailable+"a: no answer yet; b: not read" {
		t.Errorf("figures %+v %+v, b opened %d times, sampler %q", got, own, b.opens, ch.Sampler(ts))
	}
	a.answer = nil // a answers, with nothing for bus b: b's figures
	if got, own = ch.Read(ts); !reflect.DeepEqual(got, used(10, 2)) || !reflect.DeepEqual(own, []result.TraceDeviceUse{{Device: 2, Bytes: 10}}) || ch.Sampler(ts) != "b" {
		t.Errorf("after a answered: %+v %+v, sampler %q", got, own, ch.Sampler(ts))
	}
}

// Once a source has given figures no source after it is tried: when it gives none, the sample has none. A
// source before it is still tried, and gives the figures when it has them, the chain keeping its first name.
func TestChainKeepsToTheSourceThatGaveFigures(t *testing.T) {
	a, b, _ := fakes()
	ch := chainOf(true, false, a, b)
	both := []Target{{Index: 1, PCIBusID: "a"}, {Index: 2, PCIBusID: "b"}}
	if got, _ := ch.Read(both); !reflect.DeepEqual(got, used(1, 1)) {
		t.Fatalf("first read %+v, want a's", got)
	}
	a.answer = unavailable(ErrNotThere, "a: ended")
	if got, _ := ch.Read(both); got != nil || b.opens != 0 || ch.Sampler(both) != "a" {
		t.Errorf("a ended: %+v, b opened %d times, sampler %q; want nothing, b untried, a", got, b.opens, ch.Sampler(both))
	}

	a, b, _ = fakes()
	ch = chainOf(true, false, a, b)
	onB := []Target{{Index: 2, PCIBusID: "b"}}
	if got, _ := ch.Read(onB); !reflect.DeepEqual(got, used(10, 2)) {
		t.Fatalf("first read %+v, want b's", got)
	}
	if got, _ := ch.Read(both); !reflect.DeepEqual(got, used(1, 1)) || ch.Sampler(both) != "b" {
		t.Errorf("a device of a's came: %+v, sampler %q; want a's figures, named b", got, ch.Sampler(both))
	}
}

// Where devices may appear later the chain chooses again at every read: no devices, then one, gives figures
// at the second read. Where they may not, the first choice stands and its sampler is read again.
func TestChainChoosesAgainWhereDevicesAppearLater(t *testing.T) {
	late := []Target{{Index: 5, PCIBusID: "a"}}
	a, _, _ := fakes()
	ch := chainOf(true, false, a)
	first, _ := ch.Read(nil)
	second, _ := ch.Read(late)
	if first != nil || !reflect.DeepEqual(second, used(1, 5)) || a.opens != 2 {
		t.Errorf("later: %+v then %+v, opened %d times", first, second, a.opens)
	}
	a, _, _ = fakes()
	ch = chainOf(false, false, a)
	first, _ = ch.Read(nil)
	second, _ = ch.Read(late)
	if first != nil || second != nil || a.opens != 1 || ch.Sampler(late) != result.DeviceNotAvailable+"a: nothing for these devices" {
		t.Errorf("once: %+v then %+v, opened %d times, sampler %q", first, second, a.opens, ch.Sampler(late))
	}
	a, _, _ = fakes()
	ch = chainOf(false, false, a)
	first, _ = ch.Read(late)
	a.unit = 7 // the opened sampler is read again, not opened again
	second, _ = ch.Read(nil)
	if !reflect.DeepEqual(first, used(1, 5)) || !reflect.DeepEqual(second, used(7, 5)) || a.opens != 1 {
		t.Errorf("once, chosen: %+v then %+v, opened %d times", first, second, a.opens)
	}
}

// The process's own share comes with the figures only where the chain reads it.
func TestChainReadsTheOwnShareWhereAsked(t *testing.T) {
	ts := []Target{{Index: 4, PCIBusID: "b"}}
	for _, own := range []bool{false, true} {
		_, b, _ := fakes()
		got, share := chainOf(true, own, b).Read(ts)
		want := []result.TraceDeviceUse{{Device: 4, Bytes: 20}}
		if !own {
			want = nil
		}
		if !reflect.DeepEqual(got, used(10, 4)) || !reflect.DeepEqual(share, want) {
			t.Errorf("own %v: %+v, %+v; want %+v", own, got, share, want)
		}
	}
}

// A program's DRM source reads the devices that have a PCI bus id among those that do not; with nothing
// read, the end says why for the devices there were then: the last without a bus id, none at all, or no
// client. The fixture's process 100 holds a client on 0000:03:00.0 (1 GiB + 256 MiB).
func TestProgramDRMSourceReasons(t *testing.T) {
	root := Root{Proc: filepath.Join("testdata", "drm", "proc")}
	const held = 1<<30 + 256<<20
	ch := NewChain(ChainSpec{Root: root, PID: 100, Later: true, Own: true})
	mixed := []Target{{Index: 0}, {Index: 1, PCIBusID: "0000:03:00.1"}, {Index: 2}}
	got, own := ch.Read(mixed)
	if !reflect.DeepEqual(got, []result.DeviceSample{{Device: 1, UsedBytes: held}}) || !reflect.DeepEqual(own, []result.TraceDeviceUse{{Device: 1, Bytes: held}}) ||
		string(ch.Sampler(mixed)) != programDRM.name {
		t.Errorf("mixed devices: %+v, %+v, %q", got, own, ch.Sampler(mixed))
	}
	tests := []struct {
		name string
		ts   []Target
		want string
	}{
		{"no device", nil, programDRM.noDevices},
		{"the last without a bus id", []Target{{Index: 0}, {Index: 1, PCIBusID: "0000:05:00.0"}, {Index: 2}}, "DRM fdinfo: traced device 2 has no PCI bus id"},
		{"no client on its device", []Target{{Index: 0, PCIBusID: "0000:05:00.0"}}, programDRM.none},
	}
	for _, tc := range tests {
		ch := NewChain(ChainSpec{Root: root, PID: 100, Later: true})
		if got, _ := ch.Read(tc.ts); got != nil || string(ch.Sampler(tc.ts)) != result.DeviceNotAvailable+tc.want {
			t.Errorf("%s: %+v, %q; want %q", tc.name, got, ch.Sampler(tc.ts), tc.want)
		}
	}
}

// The streamed NVML source keys a reading's GPUs to the targets by PCI bus id, and once its child has ended
// says the child's last word at the end, whatever the last read said.
func TestStreamedNVMLSaysTheChildsLastWord(t *testing.T) {
	src := &fakeStream{reading: &wire.GPUReading{Sampler: "NVML (test)", GPUs: []wire.GPUMemory{{PCIBusID: "0000:17:00.0", UsedBytes: 5}}}}
	ch := NewChain(ChainSpec{Root: Root{Proc: t.TempDir()}, PID: 1, GPUs: src, Later: true})
	elsewhere := []Target{{Index: 0, PCIBusID: "0000:18:00.0"}}
	ch.Read(elsewhere)
	const noGPU = "NVML: no GPU it sees is at the PCI bus id of a traced device"
	if s := string(ch.Sampler(elsewhere)); s != result.DeviceNotAvailable+noGPU+"; "+programDRM.none {
		t.Errorf("no GPU at the device: %q", s)
	}
	src.reading, src.why = nil, "NVML: the GPU memory child hung"
	if s := string(ch.Sampler(elsewhere)); s != result.DeviceNotAvailable+src.why+"; "+programDRM.none {
		t.Errorf("child ended: %q", s)
	}
}

// fakeStream is a GPU source with a fixed reading, or none and why.
type fakeStream struct {
	reading *wire.GPUReading
	why     string
}

func (f *fakeStream) Latest() *wire.GPUReading { return f.reading }
func (f *fakeStream) Unavailable() string      { return f.why }
