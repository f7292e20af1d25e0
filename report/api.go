package report

import (
	"io"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/comparison"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/markdown"
	"github.com/clmemprobe/clmemprobe/report/render"
	"github.com/clmemprobe/clmemprobe/report/repro"
	"github.com/clmemprobe/clmemprobe/report/table"
	"github.com/clmemprobe/clmemprobe/report/ticket"
)

// The pieces of the format packages that the commands use beside Render: the commands import report alone.

// Options shape text output for the terminal it goes to; the zero value suits files and pipes.
type Options = render.Options

// IssueOptions are what the ticket needs beyond the document (see ticket.IssueOptions).
type IssueOptions = ticket.IssueOptions

// ErrNothingToReproduce is ReproJob's error where the run has no job to reproduce.
var ErrNothingToReproduce = repro.ErrNothingToReproduce

// TerminalLine is s as one line a terminal may show: control and bidirectional characters in their \x or \u
// form. Error messages that quote a file name or a runtime's words go through it.
func TerminalLine(s string) string { return render.Plain(s) }

// MarkdownText escapes a foreign string for Markdown text, for documents written outside this package.
func MarkdownText(s string) string { return render.MdText(s) }

// LowerFirst is s with its first letter in lower case, to follow a colon; a word in capitals keeps them.
func LowerFirst(s string) string { return render.LowerFirst(s) }

// MarkdownCode fences a string as a Markdown code block with the given info string.
func MarkdownCode(s, info string) string { return render.MdBlock(s, info) }

// ShellQuote is args as one line a POSIX shell reads back as the same words.
func ShellQuote(args []string) string { return render.ShellQuote(args) }

// TraceAgain is the command that traces the program again as it was traced (see render.TraceAgain).
func TraceAgain(t *result.Trace) string { return render.TraceAgain(t) }

// CgroupPrecondition is the memory cgroup a run or trace ran in, as a step's words ("" without one).
func CgroupPrecondition(e *result.Environment) string { return render.CgroupPrecondition(e) }

// PortableCommand is argv without what only this machine means (see render.PortableCommand).
func PortableCommand(argv []string) []string { return render.PortableCommand(argv) }

// ReproduceCommand is the command line that repeats the run r.
func ReproduceCommand(r *result.Run) string { return render.ReproduceCommand(r) }

// ReproSubject says what the run's reproducer repeats.
func ReproSubject(j findings.Judged) (string, error) { return repro.ReproSubject(j) }

// FromClone is where a run's reproduce line runs, where its program is the clone's bin/clmemprobe.
func FromClone(r *result.Run) string { return render.FromClone(r) }

// ReproPrints says what repro.c prints, for the job it repeats.
func ReproPrints(j findings.Judged) (string, error) { return repro.ReproPrints(j) }

// ReproJob is the job a reproducer of the run repeats, picked by strategy, variant and flags.
func ReproJob(j findings.Judged, strategy, variant, flag string) (*result.JobResult, error) {
	return repro.ReproJob(j, strategy, variant, flag)
}

// IssueRun is the run's ticket (ISSUE.md) for its vendor's tracker.
func IssueRun(j findings.Judged, o IssueOptions) []byte { return ticket.IssueRun(j, o) }

// IssueTrace is the traced program's ticket (ISSUE.md) for its vendor's tracker.
func IssueTrace(j findings.JudgedTrace, o IssueOptions) []byte { return ticket.IssueTrace(j, o) }

// KernelLogText is the kernel log's lines as the bundle's kernel.log holds them.
func KernelLogText(k *result.KernelLog) []byte { return ticket.KernelLogText(k) }

// CallsLogText is the trace's calls as the bundle's calls.log holds them.
func CallsLogText(t *result.Trace) []byte { return ticket.CallsLogText(t) }

// PresetList is what run --variant-preset list shows (KindPresets).
type PresetList = table.PresetList

// PresetEntry is one preset of the list.
type PresetEntry = table.PresetEntry

// FleetRowLimit is how many nodes a job of a merge's table shows one by one (see table.FleetRowLimit).
const FleetRowLimit = table.FleetRowLimit

// Plural is one or many, as n asks.
func Plural(n int, one, many string) string { return table.Plural(n, one, many) }

// WriteHealthJobs writes each job of a check on a line of its own, what check -v prints on stderr.
func WriteHealthJobs(w io.Writer, h *comparison.Health) error { return table.WriteHealthJobs(w, h) }

// ThresholdHeading names the threshold table by what it holds.
func ThresholdHeading(r *result.Run) string { return markdown.ThresholdHeading(r) }
