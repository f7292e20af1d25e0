package table

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// ledgerRows bounds the sites a table shows; the pprof profile and trace.json have every one.
const ledgerRows = 10

// LedgerNote says how the ledger's figures were made: which buffers are attributed one by one, which are
// sampled, and where the stacks were cut.
func LedgerNote(l *result.TraceLedger) string {
	s := fmt.Sprintf("Sites are the program's own frames above the OpenCL libraries; buffers, images and SVM allocations of %s or more are attributed one by one", units.Bytes(l.WholeBytes))
	if l.SampleBytes > 0 {
		s += fmt.Sprintf(", smaller ones sampled every %s on average (a site marked ~ has figures scaled from its samples)", units.Bytes(l.SampleBytes))
	} else {
		s += ", and every smaller one too"
	}
	return s + "."
}

// AllocMark names what a site allocates where it is not buffers.
func AllocMark(s result.TraceSite) string {
	switch s.Allocates {
	case result.AllocImages:
		return "image: "
	case result.AllocSVM:
		return "SVM: "
	}
	return ""
}

func SampledMark(s result.TraceSite) string {
	if s.Sampled {
		return "~"
	}
	return ""
}

// writeSitesTable writes the sites that made the most bytes, for a terminal.
func writeSitesTable(w io.Writer, t *result.Trace) error {
	l := t.Ledger
	if l == nil || len(l.Sites) == 0 {
		return nil
	}
	// Fits 80 columns for the usual names: the callers and whole stacks are in the Markdown and the profile.
	fmt.Fprintln(w, "\nWhere the allocations were made (the ledger; trace --out writes it for pprof too):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "site\tctx\tcreated\treleased\tat failure\tlive at end\tpeak")
	labels := l.Labels(" < ")
	for i, s := range l.Sites {
		if i == ledgerRows {
			break
		}
		fmt.Fprintf(tw, "%s%s%s\t%d\t%d\t%d\t%s\t%s\t%s\n", SampledMark(s), AllocMark(s), render.Plain(labels[i]), s.Context, s.Created, s.Released,
			AtFailureText(t, s), LiveText(s.Live, s.LiveB), PeakText(s))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(l.Sites) > ledgerRows {
		fmt.Fprintf(w, "(%d more sites in trace.json)\n", len(l.Sites)-ledgerRows)
	}
	_, err := fmt.Fprintln(w, render.Plain(LedgerNote(l)))
	return err
}

// PeakText is a site's peak, "at most" where it is a bound.
func PeakText(s result.TraceSite) string {
	if s.PeakBound {
		return "<= " + units.Bytes(s.PeakB)
	}
	return units.Bytes(s.PeakB)
}

func AtFailureText(t *result.Trace, s result.TraceSite) string {
	if t.FirstFailure == nil {
		return "-"
	}
	return LiveText(s.AtFailure, s.AtFailureB)
}

func LiveText(buffers, bytes uint64) string {
	if buffers == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", buffers, units.Bytes(bytes))
}

// StackText is a site's frames, innermost first, and where they were cut.
func StackText(s result.TraceSite) string {
	out := ""
	for i, f := range s.Frames {
		if i > 0 {
			out += " < "
		}
		out += f.Name()
		for _, c := range f.InlinedInto {
			out += " < " + c.Name() + " (inlined)"
		}
	}
	if s.StoppedAt != "" {
		out += " < [" + s.StoppedAt + "]"
	}
	if s.Truncated {
		out += " < ..."
	}
	return out
}
