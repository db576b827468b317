package testcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// History is how long each package's test binary ran (wall seconds, import path -> seconds) in
// the runs before this one, kept per machine so that the next run can start the longest first.
//
// Packages run Jobs at a time in the order they are given; a package of minutes that starts last
// runs alone at the end while the other slots are idle. Starting the longest first (the classic
// longest-processing-time rule) keeps every slot busy until the end: ordered by the times of a
// previous run of the same tests, the last packages to start are the shortest.
type History struct {
	// Seconds is each package's wall time in the last run that passed it.
	Seconds map[string]float64 `json:"seconds"`
}

// LoadHistory reads the history in file; a file that does not exist is an empty history.
func LoadHistory(file string) (History, error) {
	h := History{Seconds: map[string]float64{}}
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return h, nil
	} else if err != nil {
		return h, err
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return History{Seconds: map[string]float64{}}, fmt.Errorf("test history %s: %w", file, err)
	}
	if h.Seconds == nil {
		h.Seconds = map[string]float64{}
	}
	return h, nil
}

// Record sets a package's time from a run that passed it.
func (h History) Record(importPath string, took time.Duration) {
	h.Seconds[importPath] = took.Seconds()
}

// Save writes the history to file atomically, making its directory if need be.
func (h History) Save(file string) error {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(file, append(b, '\n'), 0o644)
}

// Order returns pkgs longest first by their recorded times. Packages the history does not know
// (new ones, or none is known yet) go first, in the order given: a new package of minutes must not
// start last, and one of a second costs nothing at the front. Packages of equal time keep the order
// given.
func (h History) Order(pkgs []Package) []Package {
	out := append([]Package(nil), pkgs...)
	sort.SliceStable(out, func(i, j int) bool {
		ti, iok := h.Seconds[out[i].ImportPath]
		tj, jok := h.Seconds[out[j].ImportPath]
		if iok != jok {
			return !iok
		}
		return ti > tj
	})
	return out
}
