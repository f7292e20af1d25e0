package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/units"
)

// TraceCommand is the traced command line, for one line of plain text.
func TraceCommand(t *result.Trace) string {
	return strings.Join(append([]string{t.Program}, t.Args...), " ")
}

// TraceAgain is the command that traces the program again as it was traced: its recorded environment (the
// runtime's device variables, secrets left out), then clmemprobe trace --calls and the program's line.
func TraceAgain(t *result.Trace) string {
	command := ShellQuote(append([]string{"clmemprobe", "trace", "--calls", "--"}, append([]string{t.Program}, t.Args...)...))
	return strings.Join(append(EnvWords(t.Environment), command), " ")
}

// CgroupPrecondition is the memory cgroup a run or trace ran in, as the first step of repeating it: where
// its limit applied, repeating it without that limit fills the whole machine instead; "" without one.
func CgroupPrecondition(e *result.Environment) string {
	if e == nil || e.MemoryCgroup == nil || e.MemoryCgroup.LimitBytes == 0 {
		return ""
	}
	cg := e.MemoryCgroup
	return fmt.Sprintf("In a memory cgroup with a limit of %s (a container's or batch job's limit, here %s, cgroup v%d):", units.Bytes(cg.LimitBytes), cg.Path, cg.Version)
}

// FailurePlace is where a failure sits in the program's sequence: its buffer's number where it has one,
// else the allocation calls before it.
func FailurePlace(f *result.TraceFailure) string {
	if n, ok := f.BufferNumber(); ok {
		return fmt.Sprintf("buffer #%d", n)
	}
	return fmt.Sprintf("after %d allocation calls", f.Index)
}

// ErrWriter keeps the first failed write, so a renderer of many Fprintf calls checks once.
type ErrWriter struct {
	W   io.Writer
	Err error
}

func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(p)
	e.Err = err
	return n, err
}
