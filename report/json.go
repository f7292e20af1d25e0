package report

import (
	"encoding/json"
	"io"
)

// writeJSON writes any document as indented JSON: a run, a comparison, an exchange, a fleet view.
func writeJSON(w io.Writer, doc any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
