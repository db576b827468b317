package report

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// The environment all-kubes gives each child run, so that a test verb can tell all-kubes more than
// its exit code. Every variable is optional for the child: outside all-kubes they are unset.
const (
	// EnvScratch is the run's private scratch directory (TMPDIR points inside it).
	EnvScratch = "NUV_SCRATCH"
	// EnvResult is the file where a child writes its ChildResult (steps, failing step).
	EnvResult = "NUV_RESULT"
	// EnvArtifacts is a directory where a child saves failure artifacts (YAML, events, logs) that
	// all-kubes copies beside the report.
	EnvArtifacts = "NUV_ARTIFACTS"
	// EnvTouched is a file where a child appends the objects it touched, one JSON TouchedObject a line.
	EnvTouched = "NUV_TOUCHED"
)

// ChildResult is what a test verb reports about its own run.
type ChildResult struct {
	Steps       []Step `json:"steps,omitempty"`
	FailingStep string `json:"failingStep,omitempty"`
	Message     string `json:"message,omitempty"`
	// Upgrade is set by a verb that took the upgrade path (dtest --upgrade-from).
	Upgrade *Upgrade `json:"upgrade,omitempty"`
}

// TouchedObject names an object a test created, changed or asserted.
type TouchedObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// WriteChildResult writes res to the file named by $NUV_RESULT; without it, it does nothing.
func WriteChildResult(getenv func(string) string, res ChildResult) error {
	path := getenv(EnvResult)
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, data, 0o600)
}

// ReadChildResult reads a child's result file; a missing file is an empty result.
func ReadChildResult(path string) (ChildResult, error) {
	var res ChildResult
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return res, fmt.Errorf("child result %s: %w", path, err)
	}
	return res, nil
}
