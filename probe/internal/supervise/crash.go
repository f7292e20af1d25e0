package supervise

import (
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// goFatalSignal finds the signal in the Go runtime's report of a fault in native code ("SIGSEGV:
// segmentation violation\nPC=... addr=0x0\nsignal arrived during cgo execution", or "[signal SIGSEGV: ...]"):
// the runtime catches such a fault, prints it and exits with status 2, so the wait status alone does not
// show the signal.
var goFatalSignal = regexp.MustCompile(`(?m)(?:^|\[signal )(SIG[A-Z]+): ([^\n\]]*)(?:\n(PC=[^\n]*))?`)

// faultAddr finds the faulting address in the Go runtime's PC line.
var faultAddr = regexp.MustCompile(`addr=(0x[0-9a-f]+)`)

// goReportStart is the first line of a report the Go runtime prints when the process dies.
var goReportStart = regexp.MustCompile(`(?m)^(SIG[A-Z]+: |fatal error: |panic: |runtime: |\[signal )`)

// runtimeMessage is the last line a child printed before the Go runtime's report of its death (a runtime's
// assertion message, say), or "".
func runtimeMessage(output string) string {
	if loc := goReportStart.FindStringIndex(output); loc != nil {
		output = output[:loc[0]]
	}
	return lastLine(output)
}

// lastLine is the last line of s that is not blank, without its trailing spaces; "" when there is none.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n ")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// describeCrash says how a child that sent no result died: the signal, or its exit status.
func describeCrash(e *Ending, waitErr error) {
	e.Reason = describeExit(waitErr)
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = SignalName(ws.Signal())
		} else {
			code := ee.ExitCode()
			e.ExitCode = &code
		}
	}
	if m := goFatalSignal.FindStringSubmatch(e.Output); m != nil && e.Signal == "" {
		e.Signal, e.ExitCode, e.Detail = m[1], nil, m[2]
		if a := faultAddr.FindStringSubmatch(m[3]); a != nil {
			e.Detail += " at address " + a[1]
		}
		if strings.Contains(e.Output, "signal arrived during cgo execution") {
			e.Detail += ", inside a call into the OpenCL runtime"
		}
		e.Reason = fmt.Sprintf("the worker faulted with %s (%s)", e.Signal, e.Detail)
	}
	if e.Printed = runtimeMessage(e.Output); e.Printed != "" {
		e.Reason += "; it printed: " + e.Printed
	}
}

func describeExit(err error) string {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		if err == nil {
			return "the worker exited without reporting a result"
		}
		return "the worker failed: " + err.Error()
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		why := fmt.Sprintf("the worker was killed by %s", SignalName(ws.Signal()))
		if ws.Signal() == syscall.SIGKILL {
			why += " (not by clmemprobe: the kernel's OOM killer is the usual sender; see dmesg)"
		}
		return why
	}
	return fmt.Sprintf("the worker exited with status %d without reporting a result", ee.ExitCode())
}

// signalNames are the signals a crash report names; others are given by number.
var signalNames = map[syscall.Signal]string{syscall.SIGSEGV: "SIGSEGV", syscall.SIGKILL: "SIGKILL", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGILL: "SIGILL", syscall.SIGFPE: "SIGFPE", syscall.SIGTERM: "SIGTERM",
	syscall.SIGINT: "SIGINT", syscall.SIGTRAP: "SIGTRAP", syscall.SIGPIPE: "SIGPIPE", syscall.SIGHUP: "SIGHUP"}

// SignalName is SIGSEGV for 11: the name a user looks up, for every process the tool supervises.
func SignalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}

// How says in words how a child that gave no answer ended: interrupted, hung, crashed with a signal, or
// failed.
func (e *Ending) How() string {
	switch {
	case e.Stop == Interrupted:
		return "was interrupted"
	case e.Stop == Hung:
		return "hung: " + e.Reason
	case e.Signal != "":
		how := "crashed with " + e.Signal
		if e.Detail != "" {
			how += " (" + e.Detail + ")"
		}
		if e.Printed != "" {
			how += " after printing " + strconv.Quote(e.Printed)
		}
		return how
	}
	return "failed: " + e.Reason
}
