package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadJSON reads a JSON object from path, keeping numbers exact (json.Number). Syntax and type
// errors carry "path:line:col".
func ReadJSON(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return DecodeJSON(path, data)
}

// DecodeJSON decodes a JSON object; name labels errors.
func DecodeJSON(name string, data []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonError(name, data, err)
	}
	if dec.More() {
		off := dec.InputOffset()
		line, col := position(data, off)
		return nil, fmt.Errorf("%s:%d:%d: unexpected data after the JSON object", name, line, col)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s:1:1: expected a JSON object, found %T", name, v)
	}
	return m, nil
}

func jsonError(name string, data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := se.Offset - 1 // Offset counts the offending byte
		if off < 0 {
			off = 0
		}
		line, col := position(data, off)
		return fmt.Errorf("%s:%d:%d: invalid JSON: %w", name, line, col, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		line, col := position(data, int64(len(data)))
		return fmt.Errorf("%s:%d:%d: invalid JSON: unexpected end of file", name, line, col)
	}
	return fmt.Errorf("%s: invalid JSON: %w", name, err)
}

// position converts a byte offset to a 1-based line and column.
func position(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	if col < 1 {
		col = 1
	}
	return line, col
}
