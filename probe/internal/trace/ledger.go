package trace

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/clmemprobe/clmemprobe/probe/internal/symbolize"
	"github.com/clmemprobe/clmemprobe/probe/result"
)

// Ledger defaults: buffers of WholeBytes or more attributed one by one, smaller ones sampled every
// SampleBytes on average (Go's heap profiler samples every 512 KiB too: a loop of 1 KiB creates pays an unwind
// once in about 512 creates).
const (
	DefaultLedgerSample = 512 << 10
	LedgerWhole         = 1 << 20
)

// interpreters are the runtimes whose frames end a site's stack, by their objects' exact names: a Python or
// JVM program's own code is the extension that made the call, and the interpreter's frames above it say
// nothing of the program's call path. A program merely named like one (node-leak, python_tool) is not one.
var interpreters = []struct {
	name *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`^(lib)?python[23](\.[0-9]+)?[dmu]*(\.so(\.[0-9.]+)?)?$`), "the Python interpreter"},
	{regexp.MustCompile(`^libjvm\.so$`), "the JVM"},
	{regexp.MustCompile(`^(node|nodejs|libnode\.so(\.[0-9.]+)?)$`), "Node.js"},
	{regexp.MustCompile(`^(ruby[0-9.]*|libruby[-0-9.]*\.so(\.[0-9.]+)?)$`), "the Ruby interpreter"},
	{regexp.MustCompile(`^(julia|libjulia(-internal)?\.so(\.[0-9.]+)?)$`), "Julia"},
}

func interpreter(object string) (string, bool) {
	base := filepath.Base(object)
	for _, in := range interpreters {
		if in.name.MatchString(base) {
			return fmt.Sprintf("%s (%s)", base, in.what), true
		}
	}
	return "", false
}

// ledger reads the sites the layer kept, names their frames from the object files and merges the sites
// that are the same once cut at an interpreter.
func (ch *Channel) ledger(rate, whole uint64) *result.TraceLedger {
	h := ch.h
	l := &result.TraceLedger{SampleBytes: rate, WholeBytes: whole, Sites: []result.TraceSite{},
		NotAttributed: atomic.LoadUint64(&h.SitesFull) + atomic.LoadUint64(&h.LiveFull),
		StacksRead:    atomic.LoadUint64(&h.StacksUnwound), StacksCached: atomic.LoadUint64(&h.StacksCached)}
	objs := symbolize.New()
	index := map[string]int{}
	for i := range h.Sites {
		s := &h.Sites[i]
		if atomic.LoadUint32(&s.State) != 2 || s.Context == 0 || s.Context > maxContexts {
			continue
		}
		site := ch.site(s, objs)
		key := siteKey(&site)
		if j, ok := index[key]; ok {
			merge(&l.Sites[j], &site)
			continue
		}
		index[key] = len(l.Sites)
		l.Sites = append(l.Sites, site)
	}
	sort.SliceStable(l.Sites, func(i, j int) bool {
		a, b := l.Sites[i], l.Sites[j]
		if a.LiveB != b.LiveB {
			return a.LiveB > b.LiveB
		}
		return a.CreatedB > b.CreatedB
	})
	return l
}

// site is one slot's site: its frames named, cut at an interpreter, its weights rounded to buffers and bytes.
func (ch *Channel) site(s *siteSlot, objs *symbolize.Objects) result.TraceSite {
	out := result.TraceSite{Context: int(s.Context) - 1, Allocates: allocates(s.Alloc), Frames: []result.TraceFrame{}, Unwound: s.Flags&siteUnwound != 0,
		Truncated: s.Flags&siteTruncated != 0, Sampled: s.Scaled > 0, Attributed: s.Attributed,
		Created: whole(s.Created), CreatedB: whole(s.CreatedBytes), Released: whole(s.Released), ReleasedB: whole(s.ReleasedBytes),
		AtFailure: whole(s.FirstLive), AtFailureB: whole(s.FirstLiveBytes), Live: whole(s.Live), LiveB: whole(s.LiveBytes),
		PeakB: whole(s.PeakBytes)}
	for k := 0; k < int(min(s.Depth, siteFrames)); k++ {
		f := result.TraceFrame{Address: s.PCs[k]}
		if o := int(s.Objects[k]); o > 0 && o <= maxObjects {
			obj := &ch.h.Objects[o-1]
			name, _, _ := bytes.Cut(obj.Name[:], []byte{0})
			f.Object = strings.ToValidUTF8(string(name), "?")
			f.Address = s.PCs[k] - min(obj.Base, s.PCs[k])
			if what, ok := interpreter(f.Object); ok {
				out.StoppedAt, out.Truncated = what, false
				break
			}
			f.BuildID = hex.EncodeToString(obj.BuildID[:min(obj.BuildIDLen, buildIDMax)])
			if onDisk := objs.BuildID(f.Object); f.BuildID != "" && onDisk != f.BuildID {
				// The file at that path is not the object the program ran (rebuilt, replaced): its names
				// would be another program's.
				f.ObjectChanged = true
				out.Frames = append(out.Frames, f)
				continue
			}
			sym := objs.Frame(f.Object, f.Address)
			f.Function, f.FunctionStart, f.File, f.Line = sym.Function, sym.Start, sym.File, sym.Line
			for _, c := range sym.InlinedInto {
				f.InlinedInto = append(f.InlinedInto, result.TraceCaller{Function: c.Function, File: c.File, Line: c.Line})
			}
		}
		out.Frames = append(out.Frames, f)
	}
	return out
}

// whole rounds a sum of weights; a sum that float arithmetic left a hair below zero is zero.
func whole(w float64) uint64 {
	if w <= 0 || math.IsNaN(w) {
		return 0
	}
	return uint64(math.Round(w))
}

func allocates(a uint32) string {
	switch a {
	case allocImage:
		return result.AllocImages
	case allocSVM:
		return result.AllocSVM
	}
	return result.AllocBuffers
}

func siteKey(s *result.TraceSite) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d|%s|%s", s.Context, s.Allocates, s.StoppedAt)
	for _, f := range s.Frames {
		fmt.Fprintf(&b, "|%s+%x", f.Object, f.Address)
	}
	return b.String()
}

func merge(into, s *result.TraceSite) {
	into.Sampled = into.Sampled || s.Sampled
	into.Truncated = into.Truncated || s.Truncated
	into.Attributed += s.Attributed
	into.Created += s.Created
	into.CreatedB += s.CreatedB
	into.Released += s.Released
	into.ReleasedB += s.ReleasedB
	into.AtFailure += s.AtFailure
	into.AtFailureB += s.AtFailureB
	into.Live += s.Live
	into.LiveB += s.LiveB
	// The two stacks' peaks may not have been at once: their sum bounds the merged site's peak.
	into.PeakB += s.PeakB
	into.PeakBound = true
}
