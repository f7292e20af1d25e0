package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
)

// MaxFileBytes is the largest result file Load reads (1 GiB). A run keeps at most 1000 samples per
// strategy, so real results are a few MiB; anything larger is not one of ours, and reading it would cost
// memory for nothing.
const MaxFileBytes = 1 << 30

// NotAResultError is returned for a file that is not a clmemprobe result of this schema, or one whose
// figures contradict each other.
type NotAResultError struct{ Path, Why string }

func (e *NotAResultError) Error() string {
	return fmt.Sprintf("%s is not a clmemprobe result: %s", e.Path, e.Why)
}

// Load reads a run.json. Files that are not results, of another schema version, inconsistent, or over
// MaxFileBytes give a *NotAResultError; the file is read in bounded memory whatever it holds.
func Load(path string) (*Run, error) {
	var l Loader
	return l.Load(path)
}

// Loader loads results one after another through one read buffer, for a caller that reads thousands of
// files (merge of a fleet). Each result is decoded into a Run of its own, so nothing of one file stays in
// the next; the buffer keeps the size of the largest file read. A Loader is for one goroutine at a time.
type Loader struct{ buf []byte }

// Load is Load, reading into the loader's buffer.
func (l *Loader) Load(path string) (*Run, error) {
	b, err := readFile(path, l.buf)
	if err != nil {
		return nil, err
	}
	l.buf = b[:0]
	return decodeRun(b, path)
}

// LoadWithBytes is Load that also returns the bytes it read, for a caller that keeps the file as it was
// (bundle): read once, so what is kept is what was checked, even from a pipe.
func LoadWithBytes(path string) (*Run, []byte, error) {
	b, err := readFile(path, nil)
	if err != nil {
		return nil, nil, err
	}
	r, err := decodeRun(b, path)
	return r, b, err
}

// readFile reads a file that must hold one JSON object, in bounded memory, into buf where it is large
// enough.
func readFile(path string, buf []byte) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO nobody writes into would otherwise wait for ever (a check must end within
	// its budget); opened so, it reads as empty, while one with a writer reads as a pipe (Go's poller waits).
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, &NotAResultError{path, "it is a directory (a run's folder holds its result in run.json)"}
	} else if err == nil && st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		return nil, &NotAResultError{path, fmt.Sprintf("%d bytes, more than the %d a result can have", st.Size(), int64(MaxFileBytes))}
	} else if err == nil && st.Mode().IsRegular() && int64(cap(buf)) <= st.Size() {
		// One byte more than the file, so that its end is seen without growing the buffer.
		buf = make([]byte, 0, st.Size()+1)
	}
	return readObject(f, path, buf)
}

// Decode reads a result from r; name says where it came from in errors.
func Decode(r io.Reader, name string) (*Run, error) {
	b, err := readObject(r, name, nil)
	if err != nil {
		return nil, err
	}
	return decodeRun(b, name)
}

// readObject reads a JSON object of at most MaxFileBytes into buf (grown as needed), without the blanks
// before it, turning away anything else at its first byte.
func readObject(r io.Reader, name string, buf []byte) ([]byte, error) {
	lr := io.LimitReader(r, MaxFileBytes+1)
	b, started := buf[:0], false
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, max(512, len(b)))
		}
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if !started && len(b) > 0 {
			// A result is a JSON object: anything else (binary data, /dev/zero) is turned away at its first
			// byte, before the rest is read; blanks before it are dropped as they come.
			i := firstNonBlank(b)
			switch {
			case i < 0:
				b = b[:0]
			case b[i] != '{':
				return nil, &NotAResultError{name, "not JSON: it does not start with {"}
			default:
				b, started = b[:copy(b, b[i:])], true
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil && !started {
			return nil, &NotAResultError{name, "empty"}
		} else if err != nil {
			return nil, err
		}
	}
	if !started {
		return nil, &NotAResultError{name, "empty"}
	}
	if len(b) > MaxFileBytes {
		return nil, &NotAResultError{name, "larger than 1 GiB"}
	}
	return b, nil
}

// firstNonBlank is the index of the first byte of b that is not JSON white space, or -1.
func firstNonBlank(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return i
		}
	}
	return -1
}

// decodeRun decodes and checks a run from a JSON object. A result is decoded in one pass; a file that does
// not decode is decoded again head first, so that its error is the one that matters (another schema
// version before a field of the wrong type), as Load has always said it.
func decodeRun(b []byte, name string) (*Run, error) {
	var doc struct {
		Run
		// The outer field hides the Run's (encoding/json takes the shallower): absent is not 0.
		SchemaVersion *int `json:"schema_version"`
		// A run has no kind; a trace (and any later document) says its own, and is not a run.
		Kind string `json:"kind"`
	}
	// Another document of the tool's own says what it is before a run's fields fail to decode on it.
	var kind struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(b, &kind) == nil && kind.Kind == ExpectationsKind {
		return nil, &NotAResultError{name, "expectations that check --record wrote, not a run: check --expect takes them"}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		if _, herr := decodeHeadFirst(b, name); herr != nil {
			return nil, herr
		}
		return nil, &NotAResultError{name, err.Error()}
	}
	if doc.Kind == TraceKind {
		return nil, &NotAResultError{name, "a trace of a program (clmemprobe trace), not a run: report, bundle and run --like take it"}
	}
	if doc.Kind != "" {
		return nil, &NotAResultError{name, fmt.Sprintf("a document of kind %q, not a run", doc.Kind)}
	}
	if err := checkHead(doc.SchemaVersion, doc.Tool.Name, name); err != nil {
		return nil, err
	}
	doc.Run.SchemaVersion = *doc.SchemaVersion
	return checked(&doc.Run, name)
}

// decodeHeadFirst decodes the head (schema version, tool), then the run: twice the work of one pass, for
// the errors of a file that is not a result.
func decodeHeadFirst(b []byte, name string) (*Run, error) {
	var head struct {
		SchemaVersion *int `json:"schema_version"`
		Tool          struct {
			Name string `json:"name"`
		} `json:"tool"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, &NotAResultError{name, "not JSON (" + err.Error() + ")"}
	}
	if err := checkHead(head.SchemaVersion, head.Tool.Name, name); err != nil {
		return nil, err
	}
	var run Run
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&run); err != nil {
		return nil, &NotAResultError{name, err.Error()}
	}
	return checked(&run, name)
}

// checked is the run if its figures hold together (Check), with the stop cause of each stopped or hung job
// that a result written before the cause was recorded lacks.
func checked(r *Run, name string) (*Run, error) {
	for i := range r.Jobs {
		if s := &r.Jobs[i]; s.StopCause == "" {
			s.StopCause = legacyStopCause(s)
		}
	}
	if err := r.Check(); err != nil {
		return nil, &NotAResultError{name, err.Error()}
	}
	return r, nil
}

// checkHead is the test of a file's head: a clmemprobe result of this schema version.
func checkHead(version *int, tool, name string) error {
	// A version without the tool's name is still worth naming: the file says which schema it claims.
	if version != nil && *version != SchemaVersion && tool == "" {
		return &NotAResultError{name, fmt.Sprintf("schema version %d and no tool name; this build reads clmemprobe's version %d", *version, SchemaVersion)}
	}
	if version == nil || tool != "clmemprobe" {
		return &NotAResultError{name, "no clmemprobe schema_version"}
	}
	if *version != SchemaVersion {
		return &NotAResultError{name, fmt.Sprintf("schema version %d; this build reads version %d", *version, SchemaVersion)}
	}
	return nil
}
