package emucore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// StateFile is the name of an emulator's state file in its directory.
const StateFile = "state.json"

// StateSpec says how an emulator's state S is made, checked and kept in <dir>/state.json.
type StateSpec[S any] struct {
	// What names the state in errors ("emulator", "GKE emulator").
	What string
	// New makes the state of a fresh emulator (credentials, no resources).
	New func() (*S, error)
	// Check refuses a loaded state that lacks what the emulator needs (path names the file) and
	// fills in what an older state lacks.
	Check func(path string, st *S) error
}

// Load reads dir/state.json; os.ErrNotExist (unwrapped) when there is none.
func (ss StateSpec[S]) Load(dir string) (*S, error) {
	path := filepath.Join(dir, StateFile)
	var st S
	if err := LoadJSON(path, ss.What, &st); err != nil {
		return nil, err
	}
	if ss.Check != nil {
		if err := ss.Check(path, &st); err != nil {
			return nil, err
		}
	}
	return &st, nil
}

// Save writes st to dir/state.json atomically, 0600.
func (ss StateSpec[S]) Save(dir string, st *S) error {
	return SaveJSON(filepath.Join(dir, StateFile), ss.What, st)
}

// Open loads the state in dir or makes, saves and returns a new one.
func (ss StateSpec[S]) Open(dir string) (*S, error) {
	st, err := ss.Load(dir)
	if !errors.Is(err, os.ErrNotExist) {
		return st, err
	}
	if st, err = ss.New(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("%s directory %s: %w", ss.What, dir, err)
	}
	return st, ss.Save(dir, st)
}

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
