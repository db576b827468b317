package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the report as indented JSON: one entry per cluster under "results".
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
