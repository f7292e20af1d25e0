package findings

import (
	"fmt"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// unreleasedSites bounds the sites the verdict names as never releasing their buffers; the table and the
// pprof profile have every one.
const unreleasedSites = 3

// ledgerSentences are the ledger's: which site held most of what was live at the first failure, and which
// sites' buffers were never released when the program ended. A site whose figures were scaled from samples
// is said "about".
func ledgerSentences(t *result.Trace) []string {
	l := t.Ledger
	if l == nil || len(l.Sites) == 0 {
		return nil
	}
	var out []string
	if s := atFailure(t); s != "" {
		out = append(out, s)
	}
	named, labels := 0, l.Labels(", called from ")
	for i, s := range l.Sites { // by live bytes at the end, most first
		if s.Live == 0 || named == unreleasedSites {
			continue
		}
		named++
		sentence := fmt.Sprintf("%s%s (%s) created in %s%s %s.", aboutWord(s), s.Counted(s.Live), units.Bytes(s.LiveB),
			clause(labels[i], s), inContext(t, s), unreleasedEnd(t))
		out = append(out, strings.ToUpper(sentence[:1])+sentence[1:])
	}
	if more := unreleasedCount(l) - named; more > 0 {
		out = append(out, fmt.Sprintf("%s more kept allocations to the end; the ledger lists them.", units.Counted(uint64(more), "site")))
	}
	if l.NotAttributed > 0 {
		out = append(out, fmt.Sprintf("%s were not attributed to a site (the ledger's tables were full): the sites' figures leave them out, the contexts' figures count the buffers among them.",
			units.Counted(l.NotAttributed, "allocation")))
	}
	return out
}

// atFailure names the site that held the most bytes at the first failure, as a share of what was live then:
// every context's buffers (the layer's exact counters) and the images and SVM allocations the ledger
// attributed (which those counters leave out).
func atFailure(t *result.Trace) string {
	f := t.FirstFailure
	if f == nil {
		return ""
	}
	var total uint64
	for _, l := range f.Live {
		total += l.Bytes
	}
	for _, s := range t.Ledger.Sites {
		if s.Allocates != "" && s.Allocates != result.AllocBuffers {
			total += s.AtFailureB
		}
	}
	var top *result.TraceSite
	label := ""
	labels := t.Ledger.Labels(", called from ")
	for i := range t.Ledger.Sites {
		if s := &t.Ledger.Sites[i]; s.AtFailureB > 0 && (top == nil || s.AtFailureB > top.AtFailureB) {
			top, label = s, labels[i]
		}
	}
	if top == nil || total == 0 {
		return ""
	}
	// A sampled site's estimate can pass the exact total by its error: said as all of it, "about".
	share := min(100, 100*float64(top.AtFailureB)/float64(total))
	return fmt.Sprintf("At the failure, %s%s held %s%.0f%% of the live bytes (%s in %s).", clause(label, *top), inContext(t, *top), aboutWord(*top),
		share, units.Bytes(top.AtFailureB), top.Counted(top.AtFailure))
}

// clause closes a label that names callers ("make_one (a.c:3), called from path_a (a.c:9),") so that the
// sentence reads on.
func clause(label string, s result.TraceSite) string {
	if label != s.Name() {
		return label + ","
	}
	return label
}

func unreleasedCount(l *result.TraceLedger) int {
	n := 0
	for _, s := range l.Sites {
		if s.Live > 0 {
			n++
		}
	}
	return n
}

// unreleasedEnd says how a site's live buffers ended: never released by a program that exited, not
// released before one that was ended (killed, timed out, interrupted) could.
func unreleasedEnd(t *result.Trace) string {
	if t.Exit.Code != nil && !t.Exit.TimedOut && !t.Exit.Interrupted {
		return "were never released"
	}
	return "were still live when the program was ended"
}

func inContext(t *result.Trace, s result.TraceSite) string {
	if len(t.Contexts) < 2 {
		return ""
	}
	return fmt.Sprintf(" (context %d)", s.Context)
}

func aboutWord(s result.TraceSite) string {
	if s.Sampled {
		return "about "
	}
	return ""
}
