// Package paths locates nuv's directories: the user state directory (NUV_HOME, default ~/.nuv) and
// the project root (the directory holding clusters/, Taskfile.yml and the .nuv/ selection).
package paths

import (
	"fmt"
	"os"
	"path/filepath"
)

// Home returns nuv's state directory: $NUV_HOME if set, else ~/.nuv. It does not create it.
func Home(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if h := getenv("NUV_HOME"); h != "" {
		return filepath.Abs(h)
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("locate nuv home: set NUV_HOME or HOME: %w", err)
		}
	}
	return filepath.Join(home, ".nuv"), nil
}

// EnsureHome returns Home after creating it (mode 0700); an unwritable location is an error naming it.
func EnsureHome(getenv func(string) string) (string, error) {
	h, err := Home(getenv)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(h, 0o700); err != nil {
		return "", fmt.Errorf("nuv home %s is not writable (set NUV_HOME to another directory): %w", h, err)
	}
	return h, nil
}

// Project returns the project root for a command started in dir: $NUV_PROJECT if set, else the
// nearest ancestor of dir (dir included) that holds a clusters/ directory or a Taskfile.yml, else dir
// itself.
func Project(getenv func(string) string, dir string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if p := getenv("NUV_PROJECT"); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; {
		if isDir(filepath.Join(d, "clusters")) || isFile(filepath.Join(d, "Taskfile.yml")) {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs
		}
		d = parent
	}
}

// Clusters is the project's kubeconfig directory.
func Clusters(project string) string { return filepath.Join(project, "clusters") }

// ProjectState is the project's private, git-ignored state directory (.nuv/ at the project root).
func ProjectState(project string) string { return filepath.Join(project, ".nuv") }

func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }
func isFile(p string) bool { st, err := os.Stat(p); return err == nil && !st.IsDir() }
