package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/judge"
)

// bundleTrace packs a trace for a ticket as bundle packs a run: README.md, report.md, trace.json as given,
// timeline.json, the ledger's pprof profiles where it has a ledger, and repro.c where the trace has a
// failure to repeat.
func bundleTrace(o bundleOptions, path string, t *result.Trace, loadErr error, stderr io.Writer) error {
	if loadErr != nil {
		return inputError(loadErr)
	}
	if o.Baseline != "" {
		return usageErr("--baseline compares two runs of clmemprobe run; %s is a trace: leave --baseline out", path)
	}
	original, err := os.ReadFile(path)
	if err != nil {
		return usageErr("%v", err)
	}
	if !o.KeepIdentity {
		id := result.IdentityOf(t.Environment)
		id.Scrub(t)
	}
	// Judged after the scrub, so that no sentence can quote what the scrub took out.
	j := judge.Trace(t, false)
	if !o.KeepIdentity {
		var b bytes.Buffer
		if err := report.Render(&b, "json", j); err != nil {
			return outputErr("cannot render %s: %v", traceFile, err)
		}
		original = b.Bytes()
	}
	var md, repro, timeline bytes.Buffer
	if err := report.Render(&md, "markdown", j); err != nil {
		return outputErr("cannot render report.md: %v", err)
	}
	if err := report.Render(&timeline, "timeline", j); err != nil {
		return outputErr("cannot render %s: %v", timelineFile, err)
	}
	reproErr := report.Render(&repro, "repro", j)
	issueOpts := report.IssueOptions{HasRepro: reproErr == nil, Files: []string{"README.md", "report.md", traceFile, timelineFile}}
	if reproErr == nil {
		issueOpts.Files = append(issueOpts.Files, "repro.c")
	}
	files := []bundleFile{{"README.md", traceReadme(j, reproErr)}, {"report.md", md.Bytes()}, {traceFile, original}, {timelineFile, timeline.Bytes()}}
	if reproErr == nil {
		files = append(files, bundleFile{"repro.c", repro.Bytes()})
	}
	if len(t.Calls) > 0 {
		issueOpts.APILogFile = apiLogFile
		issueOpts.Files = append(issueOpts.Files, apiLogFile)
		files = append(files, bundleFile{apiLogFile, report.CallsLogText(t)})
	}
	profiles, err := traceProfiles(j)
	if err != nil {
		return err
	}
	for _, f := range profiles {
		issueOpts.Files = append(issueOpts.Files, f.name)
	}
	files = append(files, profiles...)
	if t.KernelLog != nil && len(t.KernelLog.Window) > 0 {
		issueOpts.KernelLogFile = kernelLogFile
		issueOpts.Files = append(issueOpts.Files, kernelLogFile)
		files = append(files, bundleFile{kernelLogFile, report.KernelLogText(t.KernelLog)})
	}
	files = append([]bundleFile{{"ISSUE.md", report.IssueTrace(j, issueOpts)}}, files...)
	return writeBundle(o, files, bundleTime(t.Started), stderr)
}

// traceProfiles are the ledger's pprof profiles, rendered as trace --out writes them (profilesOf).
func traceProfiles(j findings.JudgedTrace) ([]bundleFile, error) {
	var out []bundleFile
	for _, p := range profilesOf(j.Trace()) {
		var b bytes.Buffer
		if err := report.Render(&b, p.format, j); err != nil {
			return nil, outputErr("cannot render %s: %v", p.name, err)
		}
		out = append(out, bundleFile{p.name, b.Bytes()})
	}
	return out, nil
}

// apiLogFile is a trace bundle's file of the program's logged calls (trace --calls).
const apiLogFile = "api-calls.log"

// traceReadme is the README of a trace's bundle: what the program did, and how to see it again.
func traceReadme(j findings.JudgedTrace, reproErr error) []byte {
	t, b := j.Trace(), &bytes.Buffer{}
	title := "An OpenCL program traced without an allocation failure"
	if t.FirstFailure != nil {
		title = "An OpenCL program's allocation failure"
	}
	fmt.Fprintf(b, "# %s, traced by clmemprobe %s\n\n", title, report.MarkdownText(t.Tool.Version))
	if v := j.Verdict(); len(v) > 0 {
		fmt.Fprintf(b, "**%s**\n\n", report.MarkdownText(v[0]))
	}
	b.WriteString("| file | what it is |\n|:--|:--|\n")
	b.WriteString("| `ISSUE.md` | the runtime vendor's bug form, filled in: paste it into a new issue |\n")
	b.WriteString("| `report.md` | the report: the first failure, the limit, the buffers of every context |\n")
	switch {
	case len(t.Calls) > 0 && t.FirstFailure != nil:
		b.WriteString("| `api-calls.log` | the program's calls (trace --calls): the first, the last before the first failure, the first after |\n")
	case len(t.Calls) > 0:
		b.WriteString("| `api-calls.log` | the program's calls (trace --calls): the first and the last; it had no failure |\n")
	}
	if t.KernelLog != nil && len(t.KernelLog.Window) > 0 {
		b.WriteString("| `" + kernelLogFile + "` | every kernel log line from the program's start to its end |\n")
	}
	b.WriteString("| `trace.json` | the trace as clmemprobe wrote it: every context, the allocation sequence, the samples |\n")
	b.WriteString("| `timeline.json` | the program over time: memory counters, its contexts, its first failure; open it in https://ui.perfetto.dev or chrome://tracing |\n")
	if t.Ledger != nil {
		what := "held when it ended (never released)"
		if t.Exit.Code == nil || t.Exit.TimedOut || t.Exit.Interrupted {
			what = "still held when it was ended"
		}
		b.WriteString("| `" + profileEndFile + "` | the allocations each call site of the program " + what + ", for `go tool pprof -top` |\n")
		if t.FirstFailure != nil {
			b.WriteString("| `" + profileFailureFile + "` | what each call site held at the first failure |\n")
		}
	}
	if reproErr == nil {
		b.WriteString("| `repro.c` | a C program that repeats the traced allocation sequence (sizes, flags, contexts) to its first failure |\n\n")
		b.WriteString("To reproduce without clmemprobe (OpenCL headers and loader only):\n\n```sh\ncc repro.c -lOpenCL -o repro && ./repro\n```\n\n")
	} else {
		fmt.Fprintf(b, "\nThere is no C reproducer: %s.\n\n", report.MarkdownText(reproErr.Error()))
	}
	b.WriteString("To trace the program again with clmemprobe (https://github.com/clmemprobe/clmemprobe), as it was traced:\n\n")
	if step := report.CgroupPrecondition(t.Environment); step != "" {
		b.WriteString(report.MarkdownText(step) + "\n\n") // without the cgroup's limit, the program fills the whole machine
	}
	b.WriteString(report.MarkdownCode(report.TraceAgain(t), "sh"))
	return b.Bytes()
}
