package ticket

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/render"
)

// IssueTrace renders ISSUE.md for a judged trace: the traced program's first failure, with the calls around
// it where the trace kept them (trace --calls).
func IssueTrace(j findings.JudgedTrace, o IssueOptions) []byte {
	t := j.Trace()
	command := render.TraceAgain(t)
	program := strings.Join(append(render.EnvWords(t.Environment), render.ShellQuote(append([]string{t.Program}, t.Args...))), " ")
	tk := &ticket{program: program, env: t.Environment, klog: t.KernelLog, verdict: j.Verdict(), o: o, command: command,
		subjectOf: "The user's own program, run unchanged under clmemprobe trace, which records its OpenCL calls through an interception layer and samples its memory.",
		rateHow:   "trace it again to see whether it fails at the same call (clmemprobe trace runs the program once)", notes: limitNote(j.Limit())}
	if t.Environment != nil {
		tk.sys = t.Environment.System
	}
	var libs []string
	for _, d := range t.Devices {
		tk.devices = append(tk.devices, result.Device{Index: d.Index, Name: d.Name, Type: d.Type, GlobalMemBytes: d.GlobalMemBytes,
			MaxAllocBytes: d.MaxAllocBytes, PCIBusID: d.PCIBusID})
	}
	for _, l := range t.Libraries {
		if l.Kind == result.LibraryRuntime {
			libs = append(libs, filepath.Base(l.Path))
		}
	}
	vendor := result.VendorOfLibraries(libs)
	tk.platform = result.Platform{Name: runtimeName(vendor, libs)}
	if f := t.FirstFailure; f != nil {
		tk.failed = true
		tk.headline = fmt.Sprintf("%s failed with %d (%s) after %d allocation calls", f.Call, f.Code, f.CodeName, f.Index)
		if f.SizeBytes > 0 {
			tk.headline += fmt.Sprintf(" (a buffer of %s, %s)", units.Size(f.SizeBytes), render.OrDash(f.Flags))
		}
		tk.expected = []string{fmt.Sprintf("%s to succeed while the context's devices have memory for it, or its code to name what ran out; the findings above say what the measurements show.", f.Call)}
		if f.Code == -61 {
			tk.notes = maxAllocNote
		}
		if tk.notes != "" {
			tk.expected = []string{"Nothing else of the runtime; see the note at the top."}
		}
	}
	tk.crashed = t.Exit.Signal != "" || t.Exit.TimedOut
	tk.failed = tk.failed || tk.crashed // a program killed or ended by the timeout: the ticket is about that
	if t.FirstFailure == nil && t.Exit.Signal != "" {
		// A program killed before any call failed: its title says so, with the limit the findings name.
		tk.headline = fmt.Sprintf("Program killed by %s after %d allocation calls", t.Exit.Signal, t.Allocations)
		if l := j.Limit().Limit; l != "" {
			tk.headline += " (limit: " + string(l) + ")"
		}
	}
	for _, v := range j.Verdict() {
		tk.findings = append(tk.findings, result.Finding{Kind: result.FindingFailure, Sentence: v})
	}
	tk.steps = append(preconditionSteps(t.Environment), "Trace the program with clmemprobe (https://github.com/clmemprobe/clmemprobe):\n\n"+indent(render.MdBlock(tk.command, "sh"), "   "))
	if o.HasRepro {
		tk.steps = append(tk.steps, "Or without clmemprobe: repro.c repeats the program's allocation sequence (sizes, flags, contexts) to its first failure:\n\n"+
			indent(render.MdBlock("cc repro.c -lOpenCL -o repro && ./repro", "sh"), "   "))
	}
	tk.apiLog, tk.apiWhat = traceCalls(t)
	return tk.render(trackerFor(vendor))
}

// runtimeName is what the ticket calls a traced program's runtime, which the trace knows by the libraries
// it mapped, not by a platform: the platform name that vendor's runtime reports, else the libraries.
func runtimeName(v result.Vendor, libs []string) string {
	switch v {
	case result.VendorPoCL:
		return "Portable Computing Language"
	case result.VendorNVIDIA:
		return "NVIDIA CUDA"
	case result.VendorIntelGPU:
		return "Intel(R) OpenCL Graphics"
	case result.VendorIntelOther:
		return "Intel(R) OpenCL"
	case result.VendorAMD:
		return "AMD Accelerated Parallel Processing"
	case result.VendorRusticl:
		return "rusticl"
	case result.VendorClover:
		return "Clover"
	}
	return strings.Join(libs, ", ")
}

// traceAround is how many logged calls before and after the failure ISSUE.md shows.
const traceAround = 20

// traceCalls are the program's calls around its first failure: from the call log where the trace kept one,
// else from its allocation sequence (runs of identical calls, without times).
func traceCalls(t *result.Trace) ([]string, string) {
	if len(t.Calls) > 0 {
		at, failed := len(t.Calls)-1, false
		for i, c := range t.Calls {
			if c.Failure {
				at, failed = i, true
				break
			}
		}
		from, to := max(0, at-traceAround), min(len(t.Calls), at+traceAround/4+1)
		var lines []string
		for _, c := range t.Calls[from:to] {
			lines = append(lines, CallLine(c))
		}
		const when = "the time is when the tool read the call (every 2 ms), seconds from the start; a command marked issued was logged as it was made, before its result"
		which := fmt.Sprintf("up to %d before its first failure and %d after", traceAround, traceAround/4)
		switch {
		case !failed && t.FirstFailure == nil:
			which = fmt.Sprintf("the last %d of them; it had no failure", len(lines))
		case !failed:
			which = fmt.Sprintf("the last %d of them; its first failure is not among the calls kept", len(lines))
		}
		return lines, fmt.Sprintf("The program's calls as the layer recorded them (trace --calls), %s; %s:", which, when)
	}
	if len(t.Sequence) == 0 {
		return nil, ""
	}
	from := max(0, len(t.Sequence)-traceAround)
	var lines []string
	for _, s := range t.Sequence[from:] {
		lines = append(lines, stepLine(s))
	}
	return lines, "The program's allocation sequence (runs of identical calls), its last steps; trace again with --calls for each call with its time:"
}

// CallLine is one logged call as the API log writes it.
func CallLine(c result.TraceCall) string {
	if c.Skipped > 0 {
		return fmt.Sprintf("... %d records not kept ...", c.Skipped)
	}
	var args string
	switch {
	case c.Devices > 0:
		args = fmt.Sprintf("%d devices", c.Devices)
	case c.Flags != "":
		args = fmt.Sprintf("context %d, %s, %d", c.Context, c.Flags, c.Size)
	case c.Issued && c.Size > 0:
		args = fmt.Sprintf("context %d, %d bytes", c.Context, c.Size)
	case c.Size > 0:
		args = fmt.Sprintf("context %d, a buffer of %d", c.Context, c.Size)
	default:
		args = fmt.Sprintf("context %d", c.Context)
	}
	res := " = CL_SUCCESS"
	switch {
	case c.Issued: // logged as it was made: no result (a failure is logged after it)
		res = " issued"
	case c.Code != 0:
		res = fmt.Sprintf(" = %d (%s)", c.Code, c.CodeName)
	}
	line := fmt.Sprintf("%9.3f #%-8d %s(%s)%s", c.T, c.Index, c.Call, args, res)
	if c.Count > 1 {
		line += fmt.Sprintf(" x%d", c.Count)
	}
	if c.Failure {
		line += "   <- the first failure"
	}
	return render.Plain(line)
}

func stepLine(s result.TraceStep) string {
	line := fmt.Sprintf("%s(context %d", s.Call, s.Context)
	if s.Size > 0 {
		line += fmt.Sprintf(", %d bytes, %s", s.Size, result.MemFlags(s.Flags).String())
	}
	line += ")"
	if s.Code != 0 {
		line += fmt.Sprintf(" = %d (%s)", s.Code, result.CodeName(s.Code))
	}
	if s.Count > 1 {
		line += fmt.Sprintf(" x%d", s.Count)
	}
	return render.Plain(line)
}

// CallsLogText is a trace's whole call log as a text file.
func CallsLogText(t *result.Trace) []byte {
	var b strings.Builder
	b.WriteString("# the program's calls as clmemprobe's layer recorded them: time read (s), allocation calls before, call, result\n")
	b.WriteString("# a command marked issued was logged as the program made it, before its result: a failure of it is its own line after it\n")
	for _, c := range t.Calls {
		b.WriteString(CallLine(c) + "\n")
	}
	return []byte(b.String())
}
