package result

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// MaxFileBytes is the largest result file Load reads (1 GiB). A run keeps at most 1000 samples per
// strategy, so real results are a few MiB; anything larger is not one of ours, and reading it would cost
// memory for nothing.
const MaxFileBytes = 1 << 30

// NotAResultError is returned by Load for a file that is not a clmemprobe result of this schema.
type NotAResultError struct{ Path, Why string }

func (e *NotAResultError) Error() string {
	return fmt.Sprintf("%s is not a clmemprobe result: %s", e.Path, e.Why)
}

// Load reads a run.json. Files that are not results, of another schema version or over MaxFileBytes give
// a *NotAResultError.
func Load(path string) (*Run, error) {
	b, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	var head struct {
		SchemaVersion *int `json:"schema_version"`
		Tool          struct {
			Name string `json:"name"`
		} `json:"tool"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, &NotAResultError{path, "not JSON (" + err.Error() + ")"}
	}
	if head.SchemaVersion == nil || head.Tool.Name != "clmemprobe" {
		return nil, &NotAResultError{path, "no clmemprobe schema_version"}
	}
	if *head.SchemaVersion != SchemaVersion {
		return nil, &NotAResultError{path, fmt.Sprintf("schema version %d; this build reads version %d", *head.SchemaVersion, SchemaVersion)}
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &NotAResultError{path, err.Error()}
	}
	return &r, nil
}

// readLimited reads a whole file of at most MaxFileBytes.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, &NotAResultError{path, "larger than 1 GiB"}
	}
	return b, nil
}
