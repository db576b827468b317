// Package reap stops the detached processes that a run which could not clean up after itself left
// behind: a test binary that panicked, timed out or was killed never deletes its local clusters or
// its loopback registry, and their processes (started in their own session) keep running.
//
// It needs no bookkeeping of its own: every detached process nuv starts is recorded by pid and start
// time (internal/proc) under the state directory of its owner, a cluster's <home>/clusters/<name>/
// pids/*.pid or the registry's state.json, and tests keep that state under their temporary
// directories. hack/test.sh points TMPDIR at a directory of its own for the run and, at its end
// whatever happened, stops every process recorded under it (hack/reap).
package reap

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/proc"
	"github.com/nuv-dev/nuv/internal/registry"
)

// Process is a recorded process found under a root.
type Process struct {
	proc.Record
	// File is the record it was found in.
	File string
}

// Find returns the processes recorded under root that still run: pid files (*.pid, "PID START")
// and registry state files (state.json beside the registry's blobs). Records without a start time
// are left out: with only a pid, a recycled pid could name an unrelated process.
func Find(root string) ([]Process, error) {
	var found []Process
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil // a directory removed while we walk, or unreadable: nothing of ours
		}
		if d.IsDir() {
			return nil
		}
		var r proc.Record
		switch {
		case strings.HasSuffix(d.Name(), ".pid"):
			if r, err = proc.ReadRecord(path); err != nil {
				return nil
			}
		case d.Name() == "state.json":
			s, err := registry.ReadState(filepath.Dir(path))
			if err != nil {
				return nil // some other state.json
			}
			r = proc.Record{PID: s.PID, Start: s.Start}
		default:
			return nil
		}
		if r.PID > 0 && r.Start != 0 && r.Alive() {
			found = append(found, Process{Record: r, File: path})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find processes under %s: %w", root, err)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].File < found[j].File })
	return found, nil
}

// Stop stops every process recorded under root (SIGTERM, then SIGKILL after grace) and returns
// those it stopped. It looks again after each round, since a cluster's supervisor may restart a
// component (recording the new pid) before it is itself stopped, and gives up after a few rounds.
func Stop(ctx context.Context, root string, grace time.Duration) ([]Process, error) {
	var stopped []Process
	var errs []error
	for round := 0; round < 5; round++ {
		found, err := Find(root)
		if err != nil {
			return stopped, err
		}
		if len(found) == 0 {
			return stopped, errors.Join(errs...)
		}
		for _, p := range found {
			ok, err := p.Stop(ctx, grace)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (pid %d): %w", p.File, p.PID, err))
				continue
			}
			if ok {
				stopped = append(stopped, p)
			}
		}
	}
	left, err := Find(root)
	if err == nil && len(left) > 0 {
		errs = append(errs, fmt.Errorf("%d processes still run after 5 rounds, e.g. pid %d (%s)", len(left), left[0].PID, left[0].File))
	}
	return stopped, errors.Join(errs...)
}
