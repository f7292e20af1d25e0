package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// TraceCommand is the traced command line, for one line of plain text.
func TraceCommand(t *result.Trace) string {
	return strings.Join(append([]string{t.Program}, t.Args...), " ")
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
