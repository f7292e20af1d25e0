package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/clmemprobe/clmemprobe/cmd/clmemprobe/internal/safefile"
	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/judge"
	"github.com/urfave/cli/v2"
)

// bundleOptions are the flags of `bundle`.
type bundleOptions struct {
	outputOptions        // --output, the bundle to write; --quiet: no "wrote" line
	Baseline      string // a run.json from a driver that worked, for the ticket's regression fields
	KeepIdentity  bool   // keep the host name, user names, UUIDs and MAC addresses
	args          []string
}

// kernelLogFile is the bundle's file of the run's whole kernel window.
const kernelLogFile = "kernel-log.txt"

// bundleDir is the folder every file of a bundle sits in, so unpacking it makes one folder.
const bundleDir = "clmemprobe-ticket"

func bundleCommand(stderr io.Writer) *cli.Command {
	var o bundleOptions
	return &cli.Command{
		Name:      "bundle",
		Usage:     "pack a result for a bug ticket: ISSUE.md (the vendor's issue form, filled in), the report, run.json, the charts, a C reproducer, the kernel log",
		ArgsUsage: "RUN.json|TRACE.json",
		Description: `Writes one .tar.gz for the engineer who receives the ticket, with everything in a folder named
clmemprobe-ticket: ISSUE.md (the fields of the runtime vendor's bug form, in its order and with its labels,
filled in from the result: GPU and PCI details with BAR sizes, driver and package versions, kernel and boot
parameters, actual and expected behaviour, reproduction rate, steps, the kernel's log of the run; a field the
result cannot fill says what to run), README.md (what this is and how to reproduce it), report.md, run.json,
run.png and run.svg (the charts), timeline.json (the run over time, for Perfetto and chrome://tracing), repro.c
(the C reproducer of the job that failed first, where there is one), kernel-log.txt (every kernel line of the
run's window) and environment.txt. A trace's bundle (trace.json or trace --out's folder) has ISSUE.md,
README.md, report.md, trace.json, timeline.json, repro.c where the program failed, kernel-log.txt where the
kernel logged any line while it ran, the allocation profiles where the trace has a ledger and, for trace
--calls, api-calls.log, and no environment.txt: what the trace recorded of the machine is in its ISSUE.md.

Nothing from outside the result goes in: the machine was read when the run started and ended. Secrets were
redacted then; the host name, user names in paths, UUIDs and MAC addresses are taken out here (run.json
too), unless --keep-identity. --baseline OLD/run.json, a result from a driver that worked, fills the
regression fields (last working, first failing driver).

` + exitCodes(exitOK, exitUsage, exitOutput),
		Flags: []cli.Flag{
			o.outputFlag("the .tar.gz to write (required)"),
			&cli.StringFlag{Name: "baseline", Destination: &o.Baseline, Usage: "a run.json (or its folder) of the same command on a driver that worked: fills the regression fields of ISSUE.md"},
			&cli.BoolFlag{Name: "keep-identity", Destination: &o.KeepIdentity, Usage: "keep the host name, user names in paths, UUIDs and MAC addresses (taken out by default: tickets are public)"},
			o.quietFlag(),
		},
		OnUsageError: commandUsageError,
		Action: func(c *cli.Context) error {
			o.args = c.Args().Slice()
			return runBundle(c.Context, o, stderr)
		},
	}
}

// validate checks bundle's argument and the name of its --output. It has no side effects.
func (o bundleOptions) validate() error {
	if len(o.args) != 1 {
		return usageErr("bundle needs exactly one RUN.json or TRACE.json argument (see clmemprobe bundle --help)")
	}
	if o.Output == "" {
		return usageErr("bundle needs --output FILE.tar.gz")
	}
	// The bundle is a gzip-compressed tar, and its name says so to whoever receives it.
	if name := strings.ToLower(o.Output); !strings.HasSuffix(name, ".tar.gz") && !strings.HasSuffix(name, ".tgz") {
		return usageErr("--output %s: a bundle is a gzip-compressed tar; name it FILE.tar.gz or FILE.tgz", o.Output)
	}
	return nil
}

// bundleFile is one file of the bundle.
type bundleFile struct {
	name string
	body []byte
}

func runBundle(_ context.Context, o bundleOptions, stderr io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	path := resultPath(o.args[0]) // a run's folder stands for its run.json
	if err := checkOutput("--output", o.Output, path); err != nil {
		return err
	}
	if t, err := result.LoadTrace(path); err != nil || t != nil {
		return bundleTrace(o, path, t, err, stderr) // a trace (cmd_bundle_trace.go)
	}
	r, original, err := loadResultBytes(path)
	if err != nil {
		return err
	}
	baseline, err := loadBaseline(o.Baseline, r)
	if err != nil {
		return err
	}
	if !o.KeepIdentity {
		scrub(r, baseline)
	}
	// Judged after the scrub, so that no sentence can quote what the scrub took out.
	j := judge.Run(r)
	if !o.KeepIdentity {
		// The scrubbed run.json is written again from the model, with this build's findings.
		var b bytes.Buffer
		if err := report.Render(&b, "json", j); err != nil {
			return outputErr("cannot render run.json: %v", err)
		}
		original = b.Bytes()
	}
	render := func(format string, opts report.Options) ([]byte, error) {
		var b bytes.Buffer
		err := report.RenderWith(&b, format, j, opts)
		return b.Bytes(), err
	}
	files := []bundleFile{{"run.json", original}}
	// report.md sits beside run.png in the bundle, so it may link it.
	for _, f := range []struct {
		name, format string
		opts         report.Options
	}{{"report.md", "markdown", report.Options{Chart: chartFile}}, {chartFile, "png", report.Options{}}, {"run.svg", "svg", report.Options{}},
		{timelineFile, "timeline", report.Options{}}} {
		body, err := render(f.format, f.opts)
		if err != nil {
			return outputErr("cannot render %s: %v", f.name, err)
		}
		files = append(files, bundleFile{f.name, body})
	}
	repro, reproErr := render("repro", report.Options{})
	if reproErr != nil && !errors.Is(reproErr, report.ErrNothingToReproduce) {
		return outputErr("cannot render repro.c: %v", reproErr)
	}
	if reproErr == nil {
		files = append(files, bundleFile{"repro.c", repro})
	}
	if r.Environment != nil {
		var b bytes.Buffer
		if err := report.Render(&b, "table", r.Environment); err != nil {
			return outputErr("cannot render environment.txt: %v", err)
		}
		files = append(files, bundleFile{"environment.txt", b.Bytes()})
	}
	issueOpts := report.IssueOptions{Baseline: baseline, HasRepro: reproErr == nil}
	if r.KernelLog != nil && len(r.KernelLog.Window) > 0 {
		issueOpts.KernelLogFile = kernelLogFile
		files = append(files, bundleFile{kernelLogFile, report.KernelLogText(r.KernelLog)})
	}
	issueOpts.Files = append([]string{"README.md"}, fileNames(files)...)
	if !o.Quiet && firstFailedOrCrashed(r) == "" {
		fmt.Fprintln(stderr, "clmemprobe: nothing failed, crashed or hung in this run: ISSUE.md describes a run without a failure")
	}
	files = append([]bundleFile{{"ISSUE.md", report.IssueRun(j, issueOpts)}, {"README.md", bundleReadme(j, reproErr)}}, files...)
	return writeBundle(o, files, bundleTime(r.Started), stderr)
}

// bundleTime is when every file of a bundle is dated: when its result started, so that the same result
// gives the same bundle (the epoch for a result whose start cannot be read).
func bundleTime(started string) time.Time {
	mtime, err := time.Parse(time.RFC3339, started)
	if err != nil {
		return time.Unix(0, 0)
	}
	return mtime
}

// loadBaseline loads --baseline, where given, and refuses one that measured something else.
func loadBaseline(path string, r *result.Run) (*result.Run, error) {
	if path == "" {
		return nil, nil
	}
	if t, _ := result.LoadTrace(resultPath(path)); t != nil {
		return nil, usageErr("--baseline %s is a trace: give the run.json of the same clmemprobe run on the driver that worked", path)
	}
	baseline, _, err := loadResultBytes(resultPath(path))
	if err != nil {
		return nil, usageErr("--baseline: %v", err) // the run's own errors name no flag: this one does
	}
	return baseline, comparableBaseline(baseline, r)
}

// scrubbed takes the identity out of the run and its baseline and writes the run again: the bundle's
// result is the scrubbed model, so fields this build does not know cannot carry the identity past it.
func scrub(r, baseline *result.Run) {
	var base *result.Environment
	if baseline != nil {
		base = baseline.Environment
	}
	id := result.IdentityOf(r.Environment, base)
	id.Scrub(r)
	if baseline != nil {
		id.Scrub(baseline)
	}
}

// fileNames are the names of a bundle's files.
func fileNames(files []bundleFile) []string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	return names
}

// firstFailedOrCrashed is the outcome of the run's first job that did not end well, "" where all did.
func firstFailedOrCrashed(r *result.Run) result.Outcome {
	for _, s := range r.Jobs {
		switch s.Outcome {
		case result.OutcomeFailed, result.OutcomeCrashed, result.OutcomeHung, result.OutcomeWrong:
			return s.Outcome
		}
	}
	return ""
}

// comparableBaseline refuses a baseline that did not measure what the run did: other devices, another
// touch, or none of the run's jobs: its numbers could not say whether a driver regressed.
func comparableBaseline(base, r *result.Run) error {
	if a, b := result.DeviceModel(base.Devices), result.DeviceModel(r.Devices); a != b {
		return usageErr("--baseline ran on %s, this run on %s: a regression is told on the same devices", report.TerminalLine(a), report.TerminalLine(b))
	}
	if base.Config.Touch != r.Config.Touch {
		return usageErr("--baseline ran with --touch %s, this run with --touch %s: run the baseline with the same flags", base.Config.Touch, r.Config.Touch)
	}
	return nil
}

// writeBundle writes the bundle's files into one .tar.gz, every file in bundleDir and dated mtime, and says
// so unless quiet.
func writeBundle(o bundleOptions, files []bundleFile, mtime time.Time, stderr io.Writer) error {
	err := safefile.WriteFile(o.Output, func(w io.Writer) error {
		zw := gzip.NewWriter(w)
		tw := tar.NewWriter(zw)
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: bundleDir + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		for _, f := range files {
			h := &tar.Header{Typeflag: tar.TypeReg, Name: bundleDir + "/" + f.name, Mode: 0o644, Size: int64(len(f.body)), ModTime: mtime, Format: tar.FormatPAX}
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if _, err := tw.Write(f.body); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return zw.Close()
	})
	if err != nil {
		return outputErr("cannot write %s: %v", o.Output, err)
	}
	if o.Quiet {
		return nil
	}
	fmt.Fprintf(stderr, "clmemprobe: wrote %s (%s)\n", o.Output, strings.Join(fileNames(files), ", "))
	return nil
}

// bundleReadme is the README of a bundle: what happened, in the tool's words, and how to see it again.
func bundleReadme(j findings.Judged, reproErr error) []byte {
	r, b := j.Run(), &bytes.Buffer{}
	fmt.Fprintf(b, "# %s, packed by clmemprobe %s\n\n", bundleTitle(j), report.MarkdownText(r.Tool.Version))
	if h, ok := j.Headline(); ok {
		fmt.Fprintf(b, "**%s**\n\n", report.MarkdownText(h.Sentence))
	}
	fmt.Fprintf(b, "Platform %s, devices: %s. The run started %s.\n\n", report.MarkdownText(r.Platform.Name),
		report.MarkdownText(result.DeviceModel(r.Devices)), report.MarkdownText(r.Started))
	b.WriteString("| file | what it is |\n|:--|:--|\n")
	b.WriteString("| `ISSUE.md` | the runtime vendor's bug form, filled in: paste it into a new issue |\n")
	// The report's table is headed by what it holds ("where each strategy ended" in a run without a
	// failure): the README says the same.
	fmt.Fprintf(b, "| `report.md` | the report: %s, why, what each buffer cost, the environment |\n", strings.ToLower(report.ThresholdHeading(r)))
	b.WriteString("| `run.json` | the result as clmemprobe wrote it (schema 1: every figure the report rests on) |\n")
	b.WriteString("| `run.png`, `run.svg` | host and device memory against buffers allocated |\n")
	b.WriteString("| `timeline.json` | the run over time: memory counters, a slice per job, the failures; open it in https://ui.perfetto.dev or chrome://tracing |\n")
	if reproErr == nil {
		what, _ := report.ReproSubject(j) // reproErr is nil: the same job, so no error here either
		fmt.Fprintf(b, "| `repro.c` | a C program that, with the OpenCL API alone, repeats %s |\n", report.MarkdownText(what))
	}
	if r.KernelLog != nil && len(r.KernelLog.Window) > 0 {
		b.WriteString("| `kernel-log.txt` | every kernel log line from the run's start to its end |\n")
	}
	b.WriteString("| `environment.txt` | the machine, the kernel's memory settings, the ICD loader, the runtime's variables |\n\n")
	if step := report.CgroupPrecondition(r.Environment); step != "" {
		// Without the cgroup's limit the commands below fill the whole machine instead of reproducing.
		fmt.Fprintf(b, "The run had a memory cgroup's limit, and the commands below repeat it only under the same: %s\n\n", report.MarkdownText(strings.TrimSuffix(report.LowerFirst(step), ":")+"."))
	}
	if reproErr == nil {
		b.WriteString("To reproduce without clmemprobe (OpenCL headers and loader only):\n\n```sh\ncc repro.c -lOpenCL -o repro && ./repro\n```\n\n")
		prints, _ := report.ReproPrints(j) // reproErr is nil: the same job, so no error here either
		b.WriteString(report.MarkdownText(prints) + "\n\n")
	} else {
		fmt.Fprintf(b, "There is no C reproducer: %s.\n\n", report.MarkdownText(reproErr.Error()))
	}
	b.WriteString("To run the whole probe again with clmemprobe (https://github.com/clmemprobe/clmemprobe" + report.FromClone(r) + "):\n\n")
	b.WriteString(report.MarkdownCode(report.ReproduceCommand(r), "sh"))
	return b.Bytes()
}

// endedTitle is the title of a run whose worker crashed or hung, by the limit the judge found: the
// runtime's fault, a limit of the memory the loop may use, or a cause not measured.
func endedTitle(o result.Outcome, l result.Limit) string {
	verb := map[result.Outcome]string{result.OutcomeCrashed: "crashed", result.OutcomeHung: "hung"}[o]
	switch l {
	case result.LimitRuntime, result.LimitGPUFault:
		return "An OpenCL runtime that " + verb
	case result.LimitUnknown, "":
		return "An OpenCL allocation probe whose worker " + verb + ", for a cause not measured"
	}
	return fmt.Sprintf("An OpenCL allocation probe ended at a limit (%s)", l)
}

// bundleTitle says what the run found, by its jobs' outcomes and the limits the judge gave them: a failure
// only where an allocation failed; a runtime that crashed or hung only where the judge found the runtime
// at fault, not a worker its memory cgroup's OOM killer ended.
func bundleTitle(j findings.Judged) string {
	r := j.Run()
	title := "An OpenCL allocation probe without a failure"
	for i := range r.Jobs {
		s := &r.Jobs[i]
		switch s.Outcome {
		case result.OutcomeFailed:
			return "An OpenCL allocation failure"
		case result.OutcomeCrashed, result.OutcomeHung:
			title = endedTitle(s.Outcome, j.Limit(s).Limit)
		}
	}
	if r.Partial {
		title += " (interrupted)"
	}
	return title
}
