package result

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// LoadWithBytes gives the run Load gives and exactly the bytes of the file it checked.
func TestLoadWithBytesKeepsWhatItChecked(t *testing.T) {
	path := filepath.Join("testdata", "run-v1.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, b, err := LoadWithBytes(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, raw) {
		t.Errorf("LoadWithBytes kept %d bytes, the file has %d", len(b), len(raw))
	}
	if !reflect.DeepEqual(r, loadFixture(t)) {
		t.Errorf("LoadWithBytes decoded another run than Load")
	}
	var nr *NotAResultError
	bad := writeFile(t, t.TempDir(), "bad.json", []byte(`{"schema_version": 1, "tool": {"name": "clmemprobe"}, "strategies": [{"strategy": "x"}]}`))
	if r, _, err := LoadWithBytes(bad); r != nil || !errors.As(err, &nr) {
		t.Errorf("a run that does not check: %v, %v; want no run and a NotAResultError", r != nil, err)
	}
	if _, _, err := LoadWithBytes(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want it not to exist", err)
	}
}

// zeros is a reader that never ends, as /dev/zero.
type zeros struct{}

// Read fills p with zeros, and never ends.
func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// failing is a reader that gives some bytes, then an error.
type failing struct {
	data []byte
	err  error
}

// Read gives the data left, then the error.
func (f *failing) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// Decode reads from a stream the run Load reads from the file, names the stream in its errors, turns an
// endless stream of what is no JSON object away at its first byte, refuses sizes no run has, and passes
// on a read error.
func TestDecodeReadsAStream(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "run-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(bytes.NewReader(append([]byte("\n  "), raw...)), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r, loadFixture(t)) {
		t.Errorf("Decode decoded another run than Load")
	}
	var nr *NotAResultError
	const head = `{"schema_version": 1, "tool": {"name": "clmemprobe"}, "strategies": `
	for _, c := range []struct {
		name string
		in   io.Reader
	}{
		{"endless zeros", zeros{}},
		{"empty", strings.NewReader("")},
		{"truncated", bytes.NewReader(raw[:len(raw)/3])},
		{"a run of another schema", strings.NewReader(`{"schema_version": 7, "tool": {"name": "clmemprobe"}}`)},
		{"a size past uint64", strings.NewReader(head + `[{"strategy": "shared", "outcome": "completed", "size_bytes": 1e30}]}`)},
		{"a size past any device", strings.NewReader(head + `[{"strategy": "shared", "outcome": "completed", "size_bytes": 1152921504606846976}]}`)},
	} {
		if _, err := Decode(c.in, "stdin"); !errors.As(err, &nr) || nr.Path != "stdin" {
			t.Errorf("%s: %v, want a NotAResultError naming stdin", c.name, err)
		}
	}
	broken := errors.New("pipe broke")
	if _, err := Decode(&failing{data: raw[:100], err: broken}, "stdin"); !errors.Is(err, broken) {
		t.Errorf("a stream that breaks after the object began: %v, want its error", err)
	}
	if _, err := Decode(&failing{err: broken}, "stdin"); !errors.As(err, &nr) {
		t.Errorf("a stream that breaks before any byte: %v, want a NotAResultError", err)
	}
}

// A file over MaxFileBytes is refused from its size alone, before it is read (a sparse file of that size
// costs no disk and no memory here).
func TestLoadRefusesAFileOverTheLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{"); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil {
		t.Skipf("the file system cannot make a sparse file: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// Only the refusal by size knows the size: a refusal after reading would say "larger than 1 GiB".
	size := strconv.Itoa(MaxFileBytes + 1)
	var nr *NotAResultError
	if _, err := Load(path); !errors.As(err, &nr) || nr.Why != size+" bytes, more than the "+strconv.Itoa(MaxFileBytes)+" a result can have" {
		t.Errorf("a file of %s bytes: %v, want a NotAResultError that gives its size", size, err)
	}
	if _, _, err := LoadWithBytes(path); !errors.As(err, &nr) {
		t.Errorf("LoadWithBytes of a file of %s bytes: %v, want a NotAResultError", size, err)
	}
}

// A FIFO nobody writes into is read as an empty file and refused, without waiting for a writer; a directory
// is refused as one.
func TestLoadRefusesAFIFOAndADirectory(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "run.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var nr *NotAResultError
	if _, err := Load(fifo); !errors.As(err, &nr) || nr.Path != fifo {
		t.Errorf("a FIFO without a writer: %v, want a NotAResultError naming it", err)
	}
	if _, err := Load(dir); !errors.As(err, &nr) || nr.Path != dir {
		t.Errorf("a directory: %v, want a NotAResultError naming it", err)
	}
}
