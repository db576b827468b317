package emucore

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// BodyTooLargeError is a request body over an emulator's limit; each emulator answers it with
// 413 in its service's error shape, as the real services do (never a body cut short).
type BodyTooLargeError struct {
	Limit int64
}

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("the request body is larger than %d bytes", e.Limit)
}

// ReadBody reads r's body whole, or returns a *BodyTooLargeError when it is longer than limit
// bytes (by its Content-Length, or as it is read).
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &BodyTooLargeError{Limit: limit}
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read the request body: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, &BodyTooLargeError{Limit: limit}
	}
	return b, nil
}

// WriteJSON answers v as indented JSON (and a newline) with status and the Content-Type
// contentType ("application/json", or with "; charset=UTF-8" as Google's front end sends it).
func WriteJSON(w http.ResponseWriter, status int, contentType string, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
