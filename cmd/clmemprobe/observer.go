package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/probe"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/clmemprobe/clmemprobe/report/textwidth"
	"github.com/mattn/go-isatty"
	"golang.org/x/sys/unix"
)

// runObserver hears the engine: it shows one live line per strategy on a terminal (nothing in pipes and
// files, so redirected output stays clean), streams samples to samples.jsonl and writes run.json after
// every strategy, so an interrupted or crashed run still leaves a valid file.
type runObserver struct {
	w     io.Writer
	live  bool
	term  *os.File // the terminal of the live line
	width int
	out   *outputDir // nil without --out
	// tagged: the run's jobs share strategies (several sizes, flag sets or variants), so the live line
	// names each job's.
	tagged bool
}

var _ probe.Observer = (*runObserver)(nil)

func newRunObserver(stderr io.Writer, out *outputDir) *runObserver {
	o := &runObserver{w: stderr, out: out}
	if f, ok := stderr.(*os.File); ok {
		o.live = isatty.IsTerminal(f.Fd())
		o.term = f
	}
	return o
}

func (o *runObserver) RunStarted(run *result.Run) {
	// Jobs that share a strategy need their size, flags or variant on the live line to be told apart.
	o.tagged = len(run.Config.Sizes) > 1 || len(run.Config.FlagSets) > 1 || len(run.Config.Variants) > 1
	if o.out != nil {
		// A failure here is written again, and said, at the end: the run goes on.
		_ = o.out.begin()
		_ = o.out.writeRun(judge.Run(run))
	}
}

func (o *runObserver) JobStarted(j probe.Job) {
	if o.live {
		o.line(plainParts(fmt.Sprintf("%-13s %s buffers", j.Strategy, units.Size(j.Size)), fmt.Sprintf(" on devices %v", j.Devices), ": starting"))
	}
}

func (o *runObserver) Progress(p probe.Progress) {
	if o.live {
		parts := progressParts(p)
		if o.tagged {
			parts = append(lineParts{parts[0], {text: " " + jobTag(p.Job), rank: 2}}, parts[1:]...)
		}
		if p.Runs > 1 {
			parts = append(lineParts{parts[0], {text: fmt.Sprintf(" run %d/%d", p.Run, p.Runs), rank: 2}}, parts[1:]...)
		}
		o.line(parts)
	}
}

// progressLine is a job's live line: buffers of the budget, the share done, bytes, host RSS, time taken and,
// once the rate is known, about how long is left at that rate.
func progressLine(p probe.Progress) string { return fitLine(progressParts(p), 0) }

// linePart is one piece of a live line: its text, a shorter one (empty: none) and its rank, the order in
// which a narrow terminal gives it up: the highest rank is shortened first, then dropped first.
type linePart struct {
	text, short string
	rank        int
}

// lineParts are the pieces of a live line, in the order they are shown.
type lineParts []linePart

// plainParts are pieces without shorter forms, in the order they are shown and dropped from the end.
func plainParts(texts ...string) lineParts {
	parts := make(lineParts, len(texts))
	for i, t := range texts {
		parts[i] = linePart{text: t, rank: i}
	}
	return parts
}

// progressParts is the progress line in pieces. Ranked by what a person waiting needs: how far the job is
// and about how long is left come first; the bytes, the host RSS and the time taken (which the person's own
// clock tells) give way before them, shortened first where a shorter form says the same.
func progressParts(p probe.Progress) lineParts {
	pct := 0.0
	if p.Job.Budget > 0 {
		pct = 100 * float64(p.Allocations) / float64(p.Job.Budget)
	}
	bytes := units.Bytes(p.Allocations * p.Job.Size)
	parts := lineParts{
		{text: fmt.Sprintf("%-13s %d/%d buffers", p.Job.Strategy, p.Allocations, p.Job.Budget), rank: 0},
		{text: fmt.Sprintf(" (%.1f%%)", pct), rank: 3},
		{text: "  " + bytes, short: " " + bytes, rank: 4},
		{text: "  host RSS " + units.Bytes(p.RSSBytes), short: " RSS " + units.Bytes(p.RSSBytes), rank: 5},
		{text: fmt.Sprintf("  %.1fs", p.Elapsed.Seconds()), rank: 6},
	}
	if p.Allocations > 0 && p.Allocations < p.Job.Budget && p.Elapsed > time.Second {
		left := time.Duration(float64(p.Elapsed) / float64(p.Allocations) * float64(p.Job.Budget-p.Allocations)).Round(time.Second)
		parts = append(parts, linePart{text: fmt.Sprintf(", about %s left", left), short: fmt.Sprintf(" ~%s left", left), rank: 1})
	}
	return parts
}

// jobTag names a job beyond its strategy: its size, and its flags and variant where not the defaults
// ("1 MiB use-host-ptr pool-off"), for runs whose jobs share strategies (rank 2: after the count and the
// time left, before the share done).
func jobTag(j probe.Job) string {
	tag := "[" + units.Size(j.Size)
	if j.Flags != 0 && j.Flags != result.DefaultFlags {
		tag += " " + j.Flags.String()
	}
	if j.Variant.Name != "" {
		tag += " " + j.Variant.Name
	}
	return tag + "]"
}

// fitLine joins parts, shortening and then dropping them by rank, the highest first, while the line is wider
// than width columns (0: no limit), and cuts the first if even it alone is too wide: a line that wraps cannot
// be rewritten by a carriage return, and every refresh would leave a stale copy behind.
func fitLine(parts lineParts, width int) string {
	if len(parts) == 0 {
		return ""
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.text
	}
	fits := func() bool { return width <= 0 || textwidth.Width(strings.Join(texts, "")) <= width }
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return parts[b].rank - parts[a].rank })
	for _, i := range order {
		if !fits() && parts[i].short != "" {
			texts[i] = parts[i].short
		}
	}
	for _, i := range order {
		if fits() {
			break
		}
		if i != order[len(order)-1] {
			texts[i] = ""
		}
	}
	line := strings.Join(texts, "")
	if !fits() {
		line = textwidth.Cut(line, width)
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
	r := &run.Jobs[len(run.Jobs)-1]
	if o.live {
		o.line(plainParts(fmt.Sprintf("%-13s %9d buffers", r.Strategy, r.AllocationsOK), fmt.Sprintf("  %10s", units.Bytes(r.BytesOK)),
			fmt.Sprintf("  %s in %s", r.Outcome, (time.Duration(r.Seconds*float64(time.Second))).Round(time.Millisecond))))
		fmt.Fprintln(o.w)
		o.width = 0
	}
	if o.out != nil {
		// A checkpoint that cannot be written leaves the previous one in place; the next one tries again. The
		// engine still holds the run: the checkpoint is a judged copy, and the run stays as the engine wrote it.
		_ = o.out.writeRun(judge.Run(run))
	}
}

// line rewrites the current terminal line with as much of parts as fits in the terminal's width, read on
// every refresh so that a resized window is followed. The last column stays free: some terminals wrap a line
// that fills the width exactly.
func (o *runObserver) line(parts lineParts) {
	width := o.columns()
	if width > 1 {
		width--
	}
	s := fitLine(parts, width)
	// The spaces that blank the rest of the previous line stop at the width too, should the window have
	// narrowed since it was written.
	blank := o.width
	if width > 0 {
		blank = min(blank, width)
	}
	pad := max(blank-textwidth.Width(s), 0)
	fmt.Fprintf(o.w, "\r%s%*s", s, pad, "")
	o.width = textwidth.Width(s)
}

// columns is the width of the terminal the live line goes to, or 0 when it cannot be told.
func (o *runObserver) columns() int {
	if o.term == nil {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(o.term.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
