package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Dir is the directory backend: <Path>/<name>.json records (0600, written atomically) and
// <Path>/<name>.lock locks (created exclusively, holding the holder as JSON).
type Dir struct{ Path string }

var _ Store = Dir{}

func (d Dir) file(name string) string { return filepath.Join(d.Path, name+".json") }
func (d Dir) lock(name string) string { return filepath.Join(d.Path, name+".lock") }

// Where is the directory.
func (d Dir) Where() string { return d.Path }

// Check makes sure the directory exists and is writable.
func (d Dir) Check(context.Context) error {
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return fmt.Errorf("state store %s: %w", d.Path, err)
	}
	f, err := os.CreateTemp(d.Path, ".check-*")
	if err != nil {
		return fmt.Errorf("state store %s is not writable: %w", d.Path, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// Load reads a record.
func (d Dir) Load(_ context.Context, name string) (*Record, error) {
	b, err := os.ReadFile(d.file(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cluster %s: %w", name, ErrNoRecord)
	}
	if err != nil {
		return nil, fmt.Errorf("state record %s: %w", d.file(name), err)
	}
	return decodeRecord(d.file(name), name, b)
}

func decodeRecord(where, name string, b []byte) (*Record, error) {
	var r Record
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %w: %v (it is left as it is; `nuv cluster state rm %s` removes it)", where, ErrCorrupt, err, name)
	}
	if r.Name != name || r.Provider == "" {
		return nil, fmt.Errorf("%s: %w: it names cluster %q of provider %q (it is left as it is; `nuv cluster state rm %s` removes it)", where, ErrCorrupt, r.Name, r.Provider, name)
	}
	return &r, nil
}

// Save writes a record atomically, refusing one based on an older generation.
func (d Dir) Save(_ context.Context, r *Record) error {
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return fmt.Errorf("state store %s: %w", d.Path, err)
	}
	if b, err := os.ReadFile(d.file(r.Name)); err == nil {
		cur, err := decodeRecord(d.file(r.Name), r.Name, b)
		if err != nil {
			return err
		}
		if cur.Generation != r.Generation {
			return fmt.Errorf("cluster %s: %w (stored generation %d, ours %d)", r.Name, ErrConflict, cur.Generation, r.Generation)
		}
	}
	next, b, err := nextVersion(r)
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(d.file(r.Name), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("save state of cluster %s: %w", r.Name, err)
	}
	*r = next
	return nil
}

// Remove deletes a record.
func (d Dir) Remove(_ context.Context, name string) error {
	if err := os.Remove(d.file(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove state of cluster %s: %w", name, err)
	}
	return nil
}

// List reads every record.
func (d Dir) List(ctx context.Context) ([]*Record, []error) {
	files, _ := filepath.Glob(filepath.Join(d.Path, "*.json"))
	sort.Strings(files)
	var out []*Record
	var errs []error
	for _, f := range files {
		r, err := d.Load(ctx, strings.TrimSuffix(filepath.Base(f), ".json"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, r)
	}
	return out, errs
}

// TryLock creates the lock file exclusively.
func (d Dir) TryLock(_ context.Context, name string, h Holder) (func() error, *Holder, error) {
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return nil, nil, fmt.Errorf("state store %s: %w", d.Path, err)
	}
	b, _ := json.Marshal(h)
	f, err := os.OpenFile(d.lock(name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrExist) {
		cur, herr := d.Holder(context.Background(), name)
		if herr != nil {
			return nil, nil, herr
		}
		if cur == nil { // released meanwhile
			return d.TryLock(context.Background(), name, h)
		}
		return nil, cur, ErrLocked
	}
	if err != nil {
		return nil, nil, fmt.Errorf("lock cluster %s: %w", name, err)
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(d.lock(name))
		return nil, nil, fmt.Errorf("lock cluster %s: %w", name, werr)
	}
	return func() error {
		if err := os.Remove(d.lock(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("unlock cluster %s: %w", name, err)
		}
		return nil
	}, nil, nil
}

// Holder reads the lock file.
func (d Dir) Holder(_ context.Context, name string) (*Holder, error) {
	b, err := os.ReadFile(d.lock(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock of cluster %s: %w", name, err)
	}
	var h Holder
	if err := json.Unmarshal(b, &h); err != nil {
		// A lock file cut short by a crash between its creation and its write. Right after its
		// creation it is being written; a few seconds later nobody holds it (PID 0 here is gone).
		h = Holder{Command: "unknown (unreadable lock file " + d.lock(name) + ")", PID: -1}
		if st, serr := os.Stat(d.lock(name)); serr == nil && time.Since(st.ModTime()) > 5*time.Second {
			h.Host, _ = os.Hostname()
			h.PID = 0
		}
		return &h, nil
	}
	return &h, nil
}

// Break removes the lock file.
func (d Dir) Break(_ context.Context, name string) error {
	if err := os.Remove(d.lock(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("release lock of cluster %s: %w", name, err)
	}
	return nil
}
