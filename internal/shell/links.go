package shell

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// DefaultLinks are the names nuv puts in its link directory: `nuv` and `task` always, and the
// tools whose names shadow no command a user expects from their system. base64, envsubst and sh
// are left out on purpose (coreutils, gettext and the shell itself); tasks call them as
// `nuv -base64`, `nuv -envsubst`, `nuv -sh`. cat, ls, mkdir, cp, mv, rm, touch, find, chmod, tar,
// gzip, base64, ... need no link: go-task's Go core utilities run them in-process.
var DefaultLinks = []string{
	"nuv", "task",
	"datefmt", "die", "empty", "executable", "extract", "needupdate", "random", "retry",
	"urlenc", "validate",
}

// LinkDir returns a directory holding one symlink per name, each pointing at exe, creating it on
// first use. Tasks get it first on PATH, so `nuv`, `task` and the linked tools run the very binary
// that runs the task, whatever else is installed.
//
// The directory lives under home/links/, named after a hash of exe and names, so different nuv
// binaries (and versions with other tools) never share one. It is built in a temporary directory
// and renamed into place: concurrent nuv processes either find the complete directory or build
// their own copy and lose the rename race harmlessly.
func LinkDir(home, exe string, names []string) (string, error) {
	if exe == "" {
		return "", errors.New("link directory: the path of the nuv binary is unknown")
	}
	parent := filepath.Join(home, "links")
	h := sha256.Sum256([]byte(exe + "\x00" + strings.Join(names, "\x00")))
	dir := filepath.Join(parent, hex.EncodeToString(h[:8]))
	if linksOK(dir, exe, names) {
		return dir, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("nuv home %s is not writable (set NUV_HOME to another directory): %w", home, err)
	}
	err := fsutil.PublishDir(dir, 0o755, func(tmp string) error {
		for _, n := range names {
			if err := os.Symlink(exe, filepath.Join(tmp, n)); err != nil {
				return err
			}
		}
		return nil
	}, func(dir string) bool { return linksOK(dir, exe, names) })
	if err != nil {
		return "", fmt.Errorf("link directory: %w", err)
	}
	return dir, nil
}

func linksOK(dir, exe string, names []string) bool {
	for _, n := range names {
		target, err := os.Readlink(filepath.Join(dir, n))
		if err != nil || target != exe {
			return false
		}
	}
	return true
}

// PrependPath returns the PATH value with dir first (dropping other occurrences of dir).
func PrependPath(dir, path string) string {
	parts := []string{dir}
	for _, p := range filepath.SplitList(path) {
		if p != dir && p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, string(os.PathListSeparator))
}
