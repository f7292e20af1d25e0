package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/result"
	"github.com/clmemprobe/clmemprobe/report/units"
	"github.com/mattn/go-isatty"
)

// runObserver hears the engine: it shows one live line per strategy on a terminal (nothing in pipes and
// files, so redirected output stays clean), streams samples to samples.jsonl and writes run.json after
// every strategy, so an interrupted or crashed run still leaves a valid file.
type runObserver struct {
	w     io.Writer
	live  bool
	width int
	out   *outputDir // nil without --out
}

var _ probe.Observer = (*runObserver)(nil)

func newRunObserver(stderr io.Writer, out *outputDir) *runObserver {
	o := &runObserver{w: stderr, out: out}
	if f, ok := stderr.(*os.File); ok {
		o.live = isatty.IsTerminal(f.Fd())
	}
	return o
}

func (o *runObserver) RunStarted(run *result.Run) {
	if o.out != nil {
		// A failure here is written again, and said, at the end: the run goes on.
		_ = o.out.begin()
		_ = o.out.writeRun(run)
	}
}

func (o *runObserver) JobStarted(j probe.Job) {
	if o.live {
		o.line(fmt.Sprintf("%-13s %s buffers on devices %v: starting", j.Strategy, units.Size(j.Size), j.Devices))
	}
}

func (o *runObserver) Progress(p probe.Progress) {
	if o.live {
		o.line(progressLine(p))
	}
}

// progressLine is a job's live line: buffers of the budget, the share done, bytes, host RSS, time taken and,
// once the rate is known, about how long is left at that rate.
func progressLine(p probe.Progress) string {
	pct := 0.0
	if p.Job.Budget > 0 {
		pct = 100 * float64(p.Allocations) / float64(p.Job.Budget)
	}
	line := fmt.Sprintf("%-13s %d/%d buffers (%.1f%%)  %s  host RSS %s  %.1fs", p.Job.Strategy, p.Allocations, p.Job.Budget, pct,
		units.Bytes(p.Allocations*p.Job.Size), units.Bytes(p.RSSBytes), p.Elapsed.Seconds())
	if p.Allocations > 0 && p.Allocations < p.Job.Budget && p.Elapsed > time.Second {
		left := time.Duration(float64(p.Elapsed) / float64(p.Allocations) * float64(p.Job.Budget-p.Allocations))
		line += fmt.Sprintf(", about %s left", left.Round(time.Second))
	}
	return line
}

func (o *runObserver) Sample(j probe.Job, s *result.Sample) {
	if o.out != nil {
		// The stream keeps its first error and takes no more samples; the end says so.
		_ = o.out.writeSample(j.Strategy, j.Size, s)
	}
}

func (o *runObserver) JobDone(j probe.Job, run *result.Run) {
	r := &run.Strategies[len(run.Strategies)-1]
	if o.live {
		o.line(fmt.Sprintf("%-13s %9d buffers  %10s  %s in %s", r.Strategy, r.AllocationsOK, units.Bytes(r.BytesOK),
			r.Outcome, (time.Duration(r.Seconds * float64(time.Second))).Round(time.Millisecond)))
		fmt.Fprintln(o.w)
		o.width = 0
	}
	if o.out != nil {
		// A checkpoint that cannot be written leaves the previous one in place; the next one tries again. The
		// engine still holds the run: the checkpoint is a judged copy, and the run stays as the engine wrote it.
		_ = o.out.writeRun(findings.Judged(run))
	}
}

// line rewrites the current terminal line.
func (o *runObserver) line(s string) {
	pad := max(o.width-len(s), 0)
	fmt.Fprintf(o.w, "\r%s%*s", s, pad, "")
	o.width = len(s)
}
