package result

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
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
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return decodeRun(b, path)
}

// LoadWithBytes is Load that also returns the bytes it read, for a caller that keeps the file as it was
// (bundle): read once, so what is kept is what was checked, even from a pipe.
func LoadWithBytes(path string) (*Run, []byte, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, nil, err
	}
	r, err := decodeRun(b, path)
	return r, b, err
}

// readFile reads a file that must hold one JSON object, in bounded memory.
func readFile(path string) ([]byte, error) {
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
	}
	return readObject(f, path)
}

// Decode reads a result from r; name says where it came from in errors.
func Decode(r io.Reader, name string) (*Run, error) {
	b, err := readObject(r, name)
	if err != nil {
		return nil, err
	}
	return decodeRun(b, name)
}

// readObject reads a JSON object of at most MaxFileBytes, turning away anything else at its first byte.
func readObject(r io.Reader, name string) ([]byte, error) {
	br := bufio.NewReader(io.LimitReader(r, MaxFileBytes+1))
	// A result is a JSON object: anything else (binary data, /dev/zero) is turned away at its first byte.
	for {
		c, err := br.ReadByte()
		if err != nil {
			return nil, &NotAResultError{name, "empty"}
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		if c != '{' {
			return nil, &NotAResultError{name, "not JSON: it does not start with {"}
		}
		_ = br.UnreadByte()
		break
	}
	b, err := io.ReadAll(br)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, &NotAResultError{name, "larger than 1 GiB"}
	}
	return b, nil
}

// decodeRun decodes and checks a run from a JSON object.
func decodeRun(b []byte, name string) (*Run, error) {
	var head struct {
		SchemaVersion *int `json:"schema_version"`
		Tool          struct {
			Name string `json:"name"`
		} `json:"tool"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, &NotAResultError{name, "not JSON (" + err.Error() + ")"}
	}
	if head.SchemaVersion == nil || head.Tool.Name != "clmemprobe" {
		return nil, &NotAResultError{name, "no clmemprobe schema_version"}
	}
	if *head.SchemaVersion != SchemaVersion {
		return nil, &NotAResultError{name, fmt.Sprintf("schema version %d; this build reads version %d", *head.SchemaVersion, SchemaVersion)}
	}
	var run Run
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&run); err != nil {
		return nil, &NotAResultError{name, err.Error()}
	}
	if err := run.Check(); err != nil {
		return nil, &NotAResultError{name, err.Error()}
	}
	return &run, nil
}
