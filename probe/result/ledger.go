package result

import (
	"fmt"
	"path/filepath"
)

// TraceLedger is where the traced program made its buffers: per call site (the program's own frames above
// the OpenCL libraries) and context, what was created, released, live at the first failure, live at the end,
// and the peak. Buffers of WholeBytes or more are attributed one by one; smaller ones are sampled by bytes
// (a mean of SampleBytes between samples, each standing for the buffers its size stands for), so a site's
// figures are estimates where it says Sampled. The contexts' own figures (Trace.Contexts) are exact either
// way.
type TraceLedger struct {
	SampleBytes uint64      `json:"sample_bytes"` // 0: every buffer attributed
	WholeBytes  uint64      `json:"whole_bytes"`
	Sites       []TraceSite `json:"sites"`
	// NotAttributed are buffers the layer had no room to attribute (its 1024 sites or its table of live
	// attributed buffers full): the sites' figures leave them out.
	NotAttributed uint64 `json:"not_attributed,omitempty"`
	// StacksRead and StacksCached are stacks the unwinder read, and those known again from the cache.
	StacksRead   uint64 `json:"stacks_read"`
	StacksCached uint64 `json:"stacks_cached"`
}

// What a site allocates (TraceSite.Allocates).
const (
	AllocBuffers = "buffers"
	AllocImages  = "images"
	AllocSVM     = "svm" // shared virtual memory (clSVMAlloc)
)

// TraceSite is one call site in one context, of one kind of allocation.
type TraceSite struct {
	Context   int          `json:"context"`
	Allocates string       `json:"allocates"` // AllocBuffers, AllocImages, AllocSVM
	Frames    []TraceFrame `json:"frames"`    // innermost first
	// StoppedAt names the runtime whose frames came after the program's (a Python interpreter, a JVM): the
	// stack is cut there, as its frames are the runtime's own, not the program's.
	StoppedAt string `json:"stopped_at,omitempty"`
	// Truncated says the stack went on past the 16 frames kept; Unwound false that the unwinder could not
	// read it past the OpenCL call (the site then has no frames).
	Truncated bool `json:"truncated,omitempty"`
	Unwound   bool `json:"unwound"`
	// Sampled says the figures are scaled from sampled buffers (Attributed of them); else every buffer of the
	// site was attributed and the figures are exact.
	Sampled    bool   `json:"sampled"`
	Attributed uint64 `json:"attributed"`
	Created    uint64 `json:"created"`
	CreatedB   uint64 `json:"created_bytes"`
	Released   uint64 `json:"released"`
	ReleasedB  uint64 `json:"released_bytes"`
	// AtFailure is what was live at the program's first failure; Live what was live when the program ended
	// (exited, or was killed: never released either way).
	AtFailure  uint64 `json:"live_at_failure"`
	AtFailureB uint64 `json:"live_at_failure_bytes"`
	Live       uint64 `json:"live_at_end"`
	LiveB      uint64 `json:"live_at_end_bytes"`
	PeakB      uint64 `json:"peak_bytes"`
	// PeakBound says PeakB is an upper bound: the site is several stacks that differed only past where
	// they were cut (an interpreter's frames), whose peaks are summed, not known to have been at once.
	PeakBound bool `json:"peak_is_upper_bound,omitempty"`
}

// TraceFrame is one return address of a site, with what the object file says of it.
type TraceFrame struct {
	Object  string `json:"object"`
	BuildID string `json:"build_id,omitempty"`
	// Address is the return address as a file address of Object (the load bias taken off).
	Address  uint64 `json:"address"`
	Function string `json:"function,omitempty"`
	// FunctionStart is the function's start where only the unwind table knew it (a stripped object).
	FunctionStart uint64 `json:"function_start,omitempty"`
	File          string `json:"file,omitempty"`
	Line          int    `json:"line,omitempty"`
	// ObjectChanged says the file at Object's path was not the object the program ran (its build ID
	// differs from the one mapped): the frame is left unnamed rather than named from another binary.
	ObjectChanged bool `json:"object_changed,omitempty"`
	// InlinedInto are the functions the compiler inlined Function into at this address, innermost first,
	// each with the line of the call in it (the last is the symbol's function).
	InlinedInto []TraceCaller `json:"inlined_into,omitempty"`
}

// TraceCaller is a function and the line in it of a call.
type TraceCaller struct {
	Function string `json:"function"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
}

// Name is how the caller is said: "main (leak.c:60)".
func (c TraceCaller) Name() string {
	if c.File == "" {
		return c.Function
	}
	return fmt.Sprintf("%s (%s:%d)", c.Function, filepath.Base(c.File), c.Line)
}

// Name is how a frame is said: its function and source line ("alloc_cache (leak.c:9)"), else its function,
// else its object and the function's start or the address ("_cl.so: function at 0x4a2f0").
func (f TraceFrame) Name() string {
	switch {
	case f.Function != "" && f.File != "":
		return fmt.Sprintf("%s (%s:%d)", f.Function, filepath.Base(f.File), f.Line)
	case f.Function != "":
		return f.Function
	case f.FunctionStart != 0:
		return fmt.Sprintf("%s: function at %#x", filepath.Base(f.Object), f.FunctionStart)
	case f.ObjectChanged:
		return fmt.Sprintf("%s+%#x (the file changed since the program ran)", filepath.Base(f.Object), f.Address)
	case f.Object != "":
		return fmt.Sprintf("%s+%#x", filepath.Base(f.Object), f.Address)
	}
	return fmt.Sprintf("%#x", f.Address)
}

// Counted is n of what the site allocates: "3 buffers", "1 image", "2 SVM allocations".
func (s TraceSite) Counted(n uint64) string {
	noun, plural := "buffer", "buffers"
	switch s.Allocates {
	case AllocImages:
		noun, plural = "image", "images"
	case AllocSVM:
		noun, plural = "SVM allocation", "SVM allocations"
	}
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %s", n, plural)
}

// Labels say the sites apart, in the order of Sites: each its Name, and where another site has the same
// name (one helper called from two places), its callers after it, joined by sep, as far as it takes (up to 4
// frames).
func (l *TraceLedger) Labels(sep string) []string {
	labels := make([]string, len(l.Sites))
	for depth := 1; depth <= 4; depth++ {
		seen := map[string]int{}
		for i, s := range l.Sites {
			labels[i] = s.label(depth, sep)
			seen[labels[i]]++
		}
		unique := true
		for _, n := range seen {
			unique = unique && n == 1
		}
		if unique {
			break
		}
	}
	return labels
}

// label is the site's name and the names of up to depth-1 callers.
func (s TraceSite) label(depth int, sep string) string {
	out := s.Name()
	for i := 1; i < depth && i < len(s.Frames); i++ {
		out += sep + s.Frames[i].Name()
	}
	return out
}

// Name is how a site is said: its innermost frame ("(no stack)" where the unwinder read none).
func (s TraceSite) Name() string {
	if len(s.Frames) == 0 {
		return "(no stack)"
	}
	return s.Frames[0].Name()
}
