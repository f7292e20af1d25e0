package profile

import (
	"bytes"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/google/pprof/profile"
)

func frame(fn string, addr uint64) result.TraceFrame {
	return result.TraceFrame{Object: "/opt/app/bin/app", Address: addr, Function: fn, File: "app.c", Line: int(addr)}
}

// ledgerTrace is a trace of two sites under main: one kept 3 buffers to the end (2 of them live at the
// failure), one released all it made (4 live at the failure); and a Python site cut at its interpreter.
func ledgerTrace() *result.Trace {
	return &result.Trace{Started: "2026-12-06T10:00:00Z", Seconds: 1.5,
		FirstFailure: &result.TraceFailure{Index: 9, CodeName: "CL_OUT_OF_RESOURCES"},
		Ledger: &result.TraceLedger{WholeBytes: 1 << 20, SampleBytes: 512 << 10, Sites: []result.TraceSite{
			{Context: 0, Frames: []result.TraceFrame{frame("cache", 10), frame("main", 20)}, Live: 3, LiveB: 3 << 20, AtFailure: 2, AtFailureB: 2 << 20},
			{Context: 1, Frames: []result.TraceFrame{frame("frames", 30), frame("main", 20)}, AtFailure: 4, AtFailureB: 4 << 20},
			{Context: 0, Frames: []result.TraceFrame{{Object: "/usr/lib/_cl.so", Address: 0x99, FunctionStart: 0x80}}, StoppedAt: "python3.11 (the Python interpreter)",
				Sampled: true, Live: 5, LiveB: 5 << 10},
		}}}
}

// values is each sample's innermost function and outermost, with its two values.
func values(t *testing.T, tr *result.Trace, m Moment) map[string][2]int64 {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, tr, m); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 2 || p.SampleType[0].Type != "buffers" || p.SampleType[1].Unit != "bytes" || p.DefaultSampleType != "bytes" {
		t.Fatalf("sample types %v, default %q", p.SampleType, p.DefaultSampleType)
	}
	out := map[string][2]int64{}
	for _, s := range p.Sample {
		leaf, root := s.Location[0].Line[0].Function.Name, s.Location[len(s.Location)-1].Line[0].Function.Name
		out[leaf+" < "+root] = [2]int64{s.Value[0], s.Value[1]}
	}
	return out
}

// Each moment's profile holds the sites with something live then, by their stacks, with buffers and bytes;
// a site cut at an interpreter has the interpreter as its root, and a nameless frame its object and start.
func TestProfilesHoldTheLiveSites(t *testing.T) {
	tr := ledgerTrace()
	end := values(t, tr, AtEnd)
	wantEnd := map[string][2]int64{"cache < main": {3, 3 << 20}, "_cl.so: function at 0x80 < [python3.11 (the Python interpreter)]": {5, 5 << 10}}
	if len(end) != len(wantEnd) {
		t.Fatalf("at the end %v, want %v", end, wantEnd)
	}
	for k, v := range wantEnd {
		if end[k] != v {
			t.Fatalf("at the end %v, want %v", end, wantEnd)
		}
	}
	fail := values(t, tr, AtFailure)
	if len(fail) != 2 || fail["cache < main"] != [2]int64{2, 2 << 20} || fail["frames < main"] != [2]int64{4, 4 << 20} {
		t.Fatalf("at the failure %v", fail)
	}
}

// No ledger, or no failure for the failure's profile: an error that says which, and no profile.
func TestProfilesNeedALedgerAndAFailure(t *testing.T) {
	tr := ledgerTrace()
	tr.FirstFailure = nil
	var buf bytes.Buffer
	if err := Write(&buf, tr, AtFailure); err == nil || err.Error() != "no allocation of the program failed: there is no first failure to profile (the profile of what it held at its end is the pprof format)" || buf.Len() != 0 {
		t.Fatalf("no failure: %v, %d bytes", err, buf.Len())
	}
	tr.Ledger = nil
	if err := Write(&buf, tr, AtEnd); err == nil || err.Error() != "the trace has no ledger of call sites (traced with --ledger-sample off, or by a build before the ledger)" || buf.Len() != 0 {
		t.Fatalf("no ledger: %v, %d bytes", err, buf.Len())
	}
}
