package update

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/bundle"
	"github.com/nuv-dev/nuv/internal/config"
	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Lock records where a bundle came from. It lives beside the bundle (olaris.lock next to
// ~/.nuv/<version>/olaris, olaris-<name>.lock next to a plugin). Pin, when set, is the tag or
// commit every later update fetches until it is unpinned.
type Lock struct {
	Repo    string    `json:"repo"`
	Ref     string    `json:"ref,omitempty"`
	Commit  string    `json:"commit"`
	Pin     string    `json:"pin,omitempty"`
	Updated time.Time `json:"updated"`
}

// LockPath is the lock file of the bundle at dir.
func LockPath(dir string) string {
	if filepath.Base(dir) == "olaris" {
		return filepath.Join(filepath.Dir(dir), bundle.LockName)
	}
	return dir + ".lock"
}

// ReadLock reads a lock file; a missing one is the zero Lock.
func ReadLock(path string) (Lock, error) {
	var l Lock
	m, err := config.ReadJSON(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, err
	}
	data, _ := json.Marshal(m)
	if err := json.Unmarshal(data, &l); err != nil {
		return l, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// WriteLock writes a lock file atomically. Credentials in the repository URL are not stored.
func WriteLock(path string, l Lock) error {
	l.Repo = Redact(l.Repo)
	if strings.Contains(l.Repo, "***@") {
		l.Repo = strings.Replace(l.Repo, "***@", "", 1)
	}
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, append(data, '\n'), 0o644)
}
