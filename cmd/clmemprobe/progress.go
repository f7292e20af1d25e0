package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/mattn/go-isatty"
)

// progressPrinter shows one live line per strategy on a terminal; in pipes and files it prints nothing, so
// redirected output stays clean.
type progressPrinter struct {
	w     io.Writer
	live  bool
	width int
}

var _ probe.Observer = (*progressPrinter)(nil)

func newProgressPrinter(f *os.File) *progressPrinter {
	return &progressPrinter{w: f, live: isatty.IsTerminal(f.Fd())}
}

func (p *progressPrinter) StrategyStarted(s probe.Strategy, size uint64, devices []int) {
	if p.live {
		p.line(fmt.Sprintf("%-13s %s buffers on devices %v: starting", s, report.FormatBytes(size), devices))
	}
}

func (p *progressPrinter) Progress(pr probe.Progress) {
	if p.live {
		p.line(fmt.Sprintf("%-13s %9d buffers  %10s  host RSS %10s  %6.1fs", pr.Strategy, pr.Allocations,
			report.FormatBytes(pr.Bytes), report.FormatBytes(pr.RSSBytes), pr.Elapsed.Seconds()))
	}
}

func (p *progressPrinter) StrategyDone(r *report.Strategy) {
	if p.live {
		p.line(fmt.Sprintf("%-13s %9d buffers  %10s  %s in %s", r.Strategy, r.AllocationsOK, report.FormatBytes(r.BytesOK),
			r.Outcome, (time.Duration(r.Seconds * float64(time.Second))).Round(time.Millisecond)))
		fmt.Fprintln(p.w)
		p.width = 0
	}
}

// line rewrites the current terminal line.
func (p *progressPrinter) line(s string) {
	pad := p.width - len(s)
	if pad < 0 {
		pad = 0
	}
	fmt.Fprintf(p.w, "\r%s%*s", s, pad, "")
	p.width = len(s)
}
