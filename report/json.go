package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// WriteJSON writes the run as indented JSON.
func WriteJSON(w io.Writer, r *Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ErrNotAResult is returned by Load for a file that is not a clmemprobe result.
type ErrNotAResult struct{ Path, Why string }

func (e *ErrNotAResult) Error() string {
	return fmt.Sprintf("%s is not a clmemprobe result: %s", e.Path, e.Why)
}

// Load reads a run.json. Files of another schema version or that are not results give *ErrNotAResult.
func Load(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var probe struct {
		SchemaVersion *int `json:"schema_version"`
		Tool          struct {
			Name string `json:"name"`
		} `json:"tool"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, &ErrNotAResult{path, "not JSON (" + err.Error() + ")"}
	}
	if probe.SchemaVersion == nil || probe.Tool.Name != "clmemprobe" {
		return nil, &ErrNotAResult{path, "no clmemprobe schema_version"}
	}
	if *probe.SchemaVersion != SchemaVersion {
		return nil, &ErrNotAResult{path, fmt.Sprintf("schema version %d; this build reads version %d", *probe.SchemaVersion, SchemaVersion)}
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &ErrNotAResult{path, err.Error()}
	}
	return &r, nil
}
