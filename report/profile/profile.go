// Package profile writes a trace's ledger (result.TraceLedger) as pprof profiles: the buffers and bytes
// each call site of the program held live when it ended, or at its first failure, so that `go tool pprof
// -top`, `-http` and its flame graphs read them as they read a heap profile. The frames are named already
// (the tool read the object files): pprof needs no binary to show them.
package profile

import (
	"fmt"
	"io"
	"time"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/google/pprof/profile"
)

// Moment is which live figures a profile holds.
type Moment int

// The moments a profile is of.
const (
	AtEnd     Moment = iota // when the program ended: what it never released
	AtFailure               // at its first failure
)

// Write writes the trace's ledger at moment m as a gzipped pprof profile. A trace without a ledger, or
// without a first failure for AtFailure, is an error that says so.
func Write(w io.Writer, t *result.Trace, m Moment) error {
	p, err := Of(t, m)
	if err != nil {
		return err
	}
	return p.Write(w)
}

// Of builds the profile.
func Of(t *result.Trace, m Moment) (*profile.Profile, error) {
	if t.Ledger == nil {
		return nil, fmt.Errorf("the trace has no ledger of call sites (traced with --ledger-sample off, or by a build before the ledger)")
	}
	if m == AtFailure && t.FirstFailure == nil {
		return nil, fmt.Errorf("no allocation of the program failed: there is no first failure to profile (the profile of what it held at its end is the pprof format)")
	}
	b := newBuilder()
	for _, s := range t.Ledger.Sites {
		buffers, bytes := s.Live, s.LiveB
		if m == AtFailure {
			buffers, bytes = s.AtFailure, s.AtFailureB
		}
		if buffers == 0 && bytes == 0 {
			continue
		}
		b.sample(s, int64(buffers), int64(bytes))
	}
	b.p.Comments = comments(t, m)
	if started, err := time.Parse(time.RFC3339, t.Started); err == nil {
		b.p.TimeNanos = started.UnixNano()
	}
	b.p.DurationNanos = int64(t.Seconds * 1e9)
	return b.p, b.p.CheckValid()
}

func comments(t *result.Trace, m Moment) []string {
	what := "live when the program ended (never released)"
	if t.Exit.Code == nil || t.Exit.TimedOut || t.Exit.Interrupted {
		what = "still live when the program was ended (" + t.Exit.Description + ")"
	}
	if m == AtFailure {
		what = fmt.Sprintf("live at the program's first failure (%s after %d allocation calls)", t.FirstFailure.CodeName, t.FirstFailure.Index)
	}
	out := []string{fmt.Sprintf("clmemprobe trace ledger: OpenCL buffers %s, by the program's call site", what)}
	if l := t.Ledger; l.SampleBytes > 0 {
		out = append(out, fmt.Sprintf("buffers of %d bytes or more attributed one by one; smaller ones sampled every %d bytes on average and scaled (a site's label sampled=yes)",
			l.WholeBytes, l.SampleBytes))
	}
	return out
}

type builder struct {
	p         *profile.Profile
	mappings  map[string]*profile.Mapping
	locations map[string]*profile.Location
	functions map[string]*profile.Function
}

func newBuilder() *builder {
	return &builder{
		p: &profile.Profile{
			SampleType:        []*profile.ValueType{{Type: "buffers", Unit: "count"}, {Type: "bytes", Unit: "bytes"}},
			DefaultSampleType: "bytes",
			PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		},
		mappings: map[string]*profile.Mapping{}, locations: map[string]*profile.Location{}, functions: map[string]*profile.Function{},
	}
}

// sample adds one site: its frames innermost first (pprof's order), and where its stack was cut at an
// interpreter, that interpreter as the outermost frame.
func (b *builder) sample(s result.TraceSite, buffers, bytes int64) {
	var locs []*profile.Location
	for _, f := range s.Frames {
		locs = append(locs, b.location(f))
	}
	if s.StoppedAt != "" {
		locs = append(locs, b.location(result.TraceFrame{Function: "[" + s.StoppedAt + "]"}))
	}
	if len(locs) == 0 {
		locs = append(locs, b.location(result.TraceFrame{Function: "[no stack: the unwinder could not read it]"}))
	}
	sampled := "no"
	if s.Sampled {
		sampled = "yes"
	}
	b.p.Sample = append(b.p.Sample, &profile.Sample{Location: locs, Value: []int64{buffers, bytes},
		Label: map[string][]string{"sampled": {sampled}, "allocates": {s.Allocates}}, NumLabel: map[string][]int64{"context": {int64(s.Context)}}})
}

func (b *builder) location(f result.TraceFrame) *profile.Location {
	key := fmt.Sprintf("%s\x00%x\x00%s\x00%d", f.Object, f.Address, f.Function, len(f.InlinedInto))
	if l, ok := b.locations[key]; ok {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: f.Address, Mapping: b.mapping(f)}
	// Innermost first, as pprof keeps a location's inlined functions.
	l.Line = []profile.Line{{Function: b.function(f), Line: int64(f.Line)}}
	for _, c := range f.InlinedInto {
		l.Line = append(l.Line, profile.Line{Function: b.function(result.TraceFrame{Function: c.Function, File: c.File}), Line: int64(c.Line)})
	}
	b.locations[key] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

func (b *builder) mapping(f result.TraceFrame) *profile.Mapping {
	if f.Object == "" {
		return nil
	}
	if m, ok := b.mappings[f.Object]; ok {
		return m
	}
	m := &profile.Mapping{ID: uint64(len(b.p.Mapping) + 1), File: f.Object, BuildID: f.BuildID, HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	b.mappings[f.Object] = m
	b.p.Mapping = append(b.p.Mapping, m)
	return m
}

func (b *builder) function(f result.TraceFrame) *profile.Function {
	name := f.Function
	if name == "" {
		name = f.Name()
	}
	key := name + "\x00" + f.File
	if fn, ok := b.functions[key]; ok {
		return fn
	}
	fn := &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name, Filename: f.File}
	b.functions[key] = fn
	b.p.Function = append(b.p.Function, fn)
	return fn
}
