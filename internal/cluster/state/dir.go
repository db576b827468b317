package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
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

// The lock file <name>.lock is only ever created whole (a complete temporary file hard-linked to
// its name, which fails if the name exists), and only ever replaced or removed under the flock of
// <name>.lock.guard after checking its bytes: TakeOver replaces it only if it still holds exactly
// the bytes the dead holder was read from, unlock removes it only if it still holds the bytes this
// taking wrote. The flock goes with its process, so a nuv killed inside never blocks the others.

// TryLock creates the lock file, whole, if there is none.
func (d Dir) TryLock(ctx context.Context, name string, h Holder) (func() error, *Holder, error) {
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return nil, nil, fmt.Errorf("state store %s: %w", d.Path, err)
	}
	for {
		tmp, b, err := d.writeTemp(name, h)
		if err != nil {
			return nil, nil, err
		}
		err = os.Link(tmp, d.lock(name))
		os.Remove(tmp)
		if err == nil {
			if err := fsutil.SyncDir(d.Path); err != nil {
				return nil, nil, fmt.Errorf("lock cluster %s: %w", name, err)
			}
			return d.unlocker(name, b), nil, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, nil, fmt.Errorf("lock cluster %s: %w", name, err)
		}
		cur, herr := d.Holder(ctx, name)
		if herr != nil {
			return nil, nil, herr
		}
		if cur != nil {
			return nil, cur, ErrLocked
		}
		// released meanwhile: try again
	}
}

// TakeOver replaces the lock file if it still holds exactly the bytes was was read from.
func (d Dir) TakeOver(ctx context.Context, name string, was *Holder, h Holder) (func() error, *Holder, error) {
	tmp, b, err := d.writeTemp(name, h)
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(tmp)
	release, err := d.guard(name)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	cur, err := os.ReadFile(d.lock(name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, ErrLocked
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read lock of cluster %s: %w", name, err)
	}
	if was == nil || string(cur) != was.Version {
		return nil, d.parseHolder(name, cur), ErrLocked
	}
	if err := os.Rename(tmp, d.lock(name)); err != nil {
		return nil, nil, fmt.Errorf("take over lock of cluster %s: %w", name, err)
	}
	if err := fsutil.SyncDir(d.Path); err != nil {
		return nil, nil, fmt.Errorf("take over lock of cluster %s: %w", name, err)
	}
	return d.unlocker(name, b), nil, nil
}

// writeTemp writes h, with a new ID, to a complete temporary lock file beside the lock.
func (d Dir) writeTemp(name string, h Holder) (string, []byte, error) {
	h.ID = newID()
	b, err := json.Marshal(h)
	if err != nil {
		return "", nil, err
	}
	f, err := os.CreateTemp(d.Path, "."+name+".lock.tmp-*")
	if err != nil {
		return "", nil, fmt.Errorf("lock cluster %s: %w", name, err)
	}
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", nil, fmt.Errorf("lock cluster %s: %w", name, werr)
	}
	return f.Name(), b, nil
}

// unlocker removes the lock file only while it still holds mine (it may have been broken and
// taken by someone else meanwhile).
func (d Dir) unlocker(name string, mine []byte) func() error {
	return func() error {
		release, err := d.guard(name)
		if err != nil {
			return err
		}
		defer release()
		cur, err := os.ReadFile(d.lock(name))
		if errors.Is(err, os.ErrNotExist) || (err == nil && string(cur) != string(mine)) {
			return nil
		}
		if err == nil {
			err = os.Remove(d.lock(name))
		}
		if err == nil {
			err = fsutil.SyncDir(d.Path)
		}
		if err != nil {
			return fmt.Errorf("unlock cluster %s: %w", name, err)
		}
		return nil
	}
}

// guard takes the flock that serializes replacing and removing a cluster's lock file.
func (d Dir) guard(name string) (func(), error) {
	f, err := os.OpenFile(d.lock(name)+".guard", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock cluster %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock cluster %s: flock %s: %w", name, f.Name(), err)
	}
	return func() { f.Close() }, nil // closing the file releases the flock
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
	return d.parseHolder(name, b), nil
}

func (d Dir) parseHolder(name string, b []byte) *Holder {
	var h Holder
	if err := json.Unmarshal(b, &h); err != nil {
		// Not written by this nuv (lock files are created whole): an older nuv's lock cut short by
		// a crash between its creation and its write. Right after its creation it may still be
		// being written; a few seconds later nobody holds it (PID 0 here is gone).
		h = Holder{Command: "unknown (unreadable lock file " + d.lock(name) + ")", PID: -1}
		if st, serr := os.Stat(d.lock(name)); serr == nil && time.Since(st.ModTime()) > 5*time.Second {
			h.Host, _ = os.Hostname()
			h.PID = 0
		}
	}
	h.Version = string(b)
	return &h
}

// Break removes the lock file whatever it holds.
func (d Dir) Break(_ context.Context, name string) error {
	release, err := d.guard(name)
	if err != nil {
		return err
	}
	defer release()
	if err := os.Remove(d.lock(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("release lock of cluster %s: %w", name, err)
	}
	return nil
}

// newID is a random identifier of one taking of a lock.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
