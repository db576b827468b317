package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/kube/kubesel"
)

// EnvCluster is the per-shell selection: a cluster name of the project (or a kubeconfig path).
// When set it wins over the project's selection in .nuv/current.
const EnvCluster = kubesel.EnvCluster

// ErrNoSelection is returned (wrapped, with a hint) when no cluster is selected.
var ErrNoSelection = kubesel.ErrNoSelection

// Selection is the content of <project>/.nuv/current.
type Selection = kubesel.Selection

// CurrentPath is the file holding the project's selection.
func CurrentPath(project string) string { return kubesel.CurrentPath(project) }

// Select records c as the project's selection, with its type (may be "" when unknown), in one
// atomic rename, and points ProjectKubeconfig at its kubeconfig. The type is also remembered for
// the kubeconfig.
func Select(project string, c Cluster, kubeType string) error {
	if c.Err != nil {
		return fmt.Errorf("cannot select %s: %w", c.Name, c.Err)
	}
	if kubeType != "" {
		if err := Remember(project, c.Name, c.Path, kubeType); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(Selection{Name: c.Name, Kubeconfig: c.Path, Type: kubeType, SelectedAt: time.Now().UTC()}, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(CurrentPath(project), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("record the selection: %w", err)
	}
	return linkKubeconfig(project, c.Path)
}

// ProjectKubeconfig is the project's kubeconfig for kubectl and every other client:
// <project>/.nuv/kubeconfig, a symbolic link to the selected cluster's kubeconfig that Select
// replaces atomically and Unselect removes. A shell that exports KUBECONFIG=<it> (`eval "$(nuv kube
// env)"`, or the same line in .envrc for direnv) follows `nuv kube use N` and `task N` with no
// further step; ~/.kube/config is never involved. Resolve treats KUBECONFIG naming it as the
// project's selection.
func ProjectKubeconfig(project string) string { return kubesel.ProjectKubeconfig(project) }

// linkKubeconfig points ProjectKubeconfig at target: a relative link when target is inside the
// project (the project can move), made under a temporary name and renamed over the old one.
var linkSeq atomic.Int64 // unique temporary link names for concurrent selections in one process

func linkKubeconfig(project, target string) error {
	link := ProjectKubeconfig(project)
	dest := target
	if rel, err := filepath.Rel(filepath.Dir(link), target); err == nil && !filepath.IsAbs(rel) {
		if abs, err := filepath.Abs(project); err == nil && strings.HasPrefix(target, abs+string(filepath.Separator)) {
			dest = rel
		}
	}
	tmp := fmt.Sprintf("%s.%d.%d.tmp", link, os.Getpid(), linkSeq.Add(1))
	if err := os.Symlink(dest, tmp); err != nil {
		return fmt.Errorf("link the project kubeconfig %s: %w", link, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("link the project kubeconfig %s: %w", link, err)
	}
	return nil
}

// Unselect removes the project's selection and its kubeconfig link (no error when there is none).
func Unselect(project string) error {
	if err := os.Remove(CurrentPath(project)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("clear the selection: %w", err)
	}
	if err := os.Remove(ProjectKubeconfig(project)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("clear the selection: %w", err)
	}
	return nil
}

// ReadSelection reads .nuv/current; os.ErrNotExist (wrapped) when nothing is selected.
func ReadSelection(project string) (Selection, error) { return kubesel.ReadSelection(project) }

// selectedName returns the raw reference of the selection: NUV_CLUSTER if set, else the name in
// .nuv/current ("" when none).
func selectedName(project string, getenv func(string) string, cs []Cluster) (string, error) {
	if v := strings.TrimSpace(getenv(EnvCluster)); v != "" {
		if isPathRef(v) {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		return v, nil
	}
	s, err := ReadSelection(project)
	if err != nil {
		return "", err
	}
	return s.Name, nil
}

func isPathRef(v string) bool { return strings.ContainsRune(v, os.PathSeparator) }

// Selected returns the selected cluster of the inventory: the per-shell NUV_CLUSTER when set (a
// name in clusters/ or a kubeconfig path), else the project's .nuv/current, marked Selected. Type
// is the cluster's own known type (override file, DETECT_FORCE, else the remembered detection; no
// network call) and may be "". With nothing selected the error wraps ErrNoSelection and says how
// to select. Commands that act on "the cluster" call Resolve, which also honours KUBE and
// KUBECONFIG.
func Selected(project string, getenv func(string) string) (Cluster, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c, err := selectedCluster(project, getenv)
	if err != nil {
		return Cluster{}, err
	}
	return finishSelected(project, getenv, c)
}

func resolveEnvCluster(cs []Cluster, v string) (Cluster, error) {
	if isPathRef(v) {
		abs, err := filepath.Abs(v)
		if err != nil {
			return Cluster{}, fmt.Errorf("%s=%s: %w", EnvCluster, v, err)
		}
		for _, c := range cs {
			if c.Path == abs {
				return c, nil
			}
		}
		c := Cluster{Name: strings.TrimSuffix(filepath.Base(abs), Ext), Path: abs}
		c.Context, c.Server, c.Err = parseKubeconfig(abs)
		return c, nil
	}
	for _, c := range cs {
		if c.Name == v {
			return c, nil
		}
	}
	return Cluster{}, fmt.Errorf("%s=%s names no cluster in clusters/ (unset it, or `nuv kube list`)", EnvCluster, v)
}

// finishSelected marks c selected and fills its type from the override or the remembered
// detection; the type stored in .nuv/current is informational only (it may be stale when the
// kubeconfig was replaced), the remembered one is keyed by the file's content.
func finishSelected(project string, getenv func(string) string, c Cluster) (Cluster, error) {
	c.Selected = true
	if c.Err != nil {
		return c, fmt.Errorf("selected cluster %s (%s) is invalid: %w", c.Name, c.Path, c.Err)
	}
	t, err := Override(project, c.Name, getenv)
	if err != nil {
		return c, err
	}
	if t == "" {
		t = Remembered(project, c.Name, c.Path)
	}
	c.Type = t
	return c, nil
}
