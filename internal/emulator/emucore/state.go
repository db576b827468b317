package emucore

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// SaveJSON writes v to path atomically, 0600 (an emulator's state holds its secrets); what names
// the state in errors ("emulator", "GKE emulator").
func SaveJSON(path, what string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return fmt.Errorf("encode %s state: %w", what, err)
	}
	if err := fsutil.WriteFileAtomic(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("save %s state: %w", what, err)
	}
	return nil
}

// LoadJSON reads path into v; os.ErrNotExist (unwrapped) when there is none, an error naming the
// file when it is not JSON.
func LoadJSON(path, what string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s state %s is corrupt: %w", what, path, err)
	}
	return nil
}
