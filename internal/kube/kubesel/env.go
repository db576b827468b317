package kubesel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/paths"
)

// EnvType is the per-shell type override (KUBE): when set to one of Types it is the type of the
// selected cluster.
const EnvType = "KUBE"

// EnvKubeconfig is the standard client variable: an explicit KUBECONFIG wins over the project's
// selection, as for kubectl.
const EnvKubeconfig = "KUBECONFIG"

// ErrUnvouched is returned (wrapped, naming the file) when the selected cluster's kubeconfig holds
// something Quick does not vouch for (YAML 1.1 spellings, anchors, extensions, ...): only
// client-go's reader can tell what it says, and the caller asks a program that links it.
var ErrUnvouched = errors.New("the kubeconfig needs client-go's reader")

// SelectionEnv is the environment every task gets for the selected cluster, as kube.SelectionEnv
// gives it, read without client-go: KUBECONFIG=<absolute path of its kubeconfig> and KUBE=<its
// type known without a network call> (""). Nothing selected gives nil, nil. A selection that
// cannot be used (NUV_CLUSTER naming no cluster, a damaged .nuv/current, an invalid kubeconfig,
// KUBE naming no type) gives KUBECONFIG=<project>/.nuv/no-valid-selection and KUBE= with the
// reason. A kubeconfig Quick cannot vouch for gives nil and an error wrapping ErrUnvouched.
//
// It follows kube.Resolve without an explicit kubeconfig (NUV_CLUSTER, then KUBECONFIG naming
// another file than the selection's, then .nuv/current) but reads only the kubeconfig selected,
// not every one of clusters/; like the inventory, it records the clusters' order (.nuv/order).
func SelectionEnv(project string, getenv func(string) string) ([]string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.TrimSpace(getenv(EnvCluster)) == "" {
		if _, err := os.Stat(CurrentPath(project)); err != nil {
			return nil, nil
		}
	}
	kubeconfig, typ, err := resolve(project, getenv)
	if errors.Is(err, ErrUnvouched) {
		return nil, err
	}
	if err != nil {
		return []string{"KUBECONFIG=" + filepath.Join(paths.ProjectState(project), "no-valid-selection"), "KUBE="}, err
	}
	return []string{"KUBECONFIG=" + kubeconfig, "KUBE=" + typ}, nil
}

// cluster is a kubeconfig of clusters/ (inventory) or one named by path.
type cluster struct {
	name, path string
	inventory  bool
}

// resolve is kube.Resolve without an explicit kubeconfig: the selected kubeconfig and its type.
func resolve(project string, getenv func(string) string) (kubeconfig, typ string, err error) {
	var (
		c   cluster
		src string
	)
	switch v := strings.TrimSpace(getenv(EnvCluster)); {
	case v != "":
		c, err = fromEnvCluster(project, v)
		src = EnvCluster
	case ExplicitKubeconfig(project, getenv) != "":
		kc := ExplicitKubeconfig(project, getenv)
		if strings.ContainsRune(kc, os.PathListSeparator) {
			return "", "", fmt.Errorf("%w: %s=%s lists several files and nuv acts on one cluster; set %s to a cluster (or unset %s to use the project's selection)",
				ErrNoSelection, EnvKubeconfig, kc, EnvCluster, EnvKubeconfig)
		}
		c, err = clusterAt(project, kc)
		src = EnvKubeconfig
	default:
		c, err = fromCurrent(project)
		src = ".nuv/current"
	}
	if err != nil {
		return "", "", err
	}
	if err := check(c.path); err != nil {
		if errors.Is(err, ErrUnvouched) {
			return "", "", fmt.Errorf("cluster %s (%s, from %s): %w", c.name, c.path, src, err)
		}
		return "", "", fmt.Errorf("cluster %s (%s, from %s): invalid kubeconfig: %w", c.name, c.path, src, err)
	}
	typ, err = knownType(project, c, getenv)
	return c.path, typ, err
}

// inventory lists clusters/*.kubeconfig (absolute paths) without reading them, recording their
// order as the inventory does.
func inventory(project string) ([]cluster, error) {
	dir := paths.Clusters(project)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read clusters directory %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, Ext) && len(n) > len(Ext) && !strings.HasPrefix(n, ".") && !e.IsDir() {
			names = append(names, strings.TrimSuffix(n, Ext))
		}
	}
	names = Ordered(project, names)
	cs := make([]cluster, 0, len(names))
	for _, n := range names {
		cs = append(cs, cluster{name: n, path: filepath.Join(dir, n+Ext), inventory: true})
	}
	return cs, nil
}

// fromEnvCluster is the cluster NUV_CLUSTER=v names: a cluster of clusters/ or a kubeconfig path.
func fromEnvCluster(project, v string) (cluster, error) {
	cs, err := inventory(project)
	if err != nil {
		return cluster{}, err
	}
	if strings.ContainsRune(v, os.PathSeparator) {
		abs, err := filepath.Abs(v)
		if err != nil {
			return cluster{}, fmt.Errorf("%s=%s: %w", EnvCluster, v, err)
		}
		for _, c := range cs {
			if c.path == abs {
				return c, nil
			}
		}
		return cluster{name: strings.TrimSuffix(filepath.Base(abs), Ext), path: abs}, nil
	}
	for _, c := range cs {
		if c.name == v {
			return c, nil
		}
	}
	return cluster{}, fmt.Errorf("%s=%s names no cluster in clusters/ (unset it, or `nuv kube list`)", EnvCluster, v)
}

// fromCurrent is the cluster .nuv/current names.
func fromCurrent(project string) (cluster, error) {
	cs, err := inventory(project)
	if err != nil {
		return cluster{}, err
	}
	s, err := ReadSelection(project)
	if errors.Is(err, os.ErrNotExist) {
		return cluster{}, fmt.Errorf("%w: run `nuv kube use N` (or `task N`) to pick one of `nuv kube list`", ErrNoSelection)
	}
	if err != nil {
		return cluster{}, err
	}
	for _, c := range cs {
		if c.name == s.Name {
			return c, nil
		}
	}
	return cluster{}, fmt.Errorf("%w: the selected cluster %q (in %s) is no longer in clusters/; run `nuv kube use N`",
		ErrNoSelection, s.Name, CurrentPath(project))
}

// clusterAt is the cluster whose kubeconfig is path: the inventory's entry when path is one of
// clusters/, else a cluster named after the file.
func clusterAt(project, path string) (cluster, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return cluster{}, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cs, err := inventory(project)
	if err != nil {
		return cluster{}, err
	}
	for _, c := range cs {
		if c.path == abs {
			return c, nil
		}
	}
	if _, err := os.Stat(abs); err != nil {
		return cluster{}, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return cluster{name: strings.TrimSuffix(filepath.Base(abs), Ext), path: abs}, nil
}

// ExplicitKubeconfig is KUBECONFIG when it names something else than the project's selection:
// "" when unset, when it is the project's kubeconfig link, or when it names the file the selection
// (.nuv/current) points at.
func ExplicitKubeconfig(project string, getenv func(string) string) string {
	kc := strings.TrimSpace(getenv(EnvKubeconfig))
	if kc == "" || strings.ContainsRune(kc, os.PathListSeparator) {
		return kc
	}
	abs, err := filepath.Abs(kc)
	if err != nil {
		return kc
	}
	if link, err := filepath.Abs(ProjectKubeconfig(project)); err == nil && abs == link {
		return ""
	}
	if s, err := ReadSelection(project); err == nil && sameFile(abs, s.Kubeconfig) {
		return ""
	}
	return kc
}

func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// check reads the kubeconfig at path with Quick: nil when it is usable, why not, or ErrUnvouched.
func check(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("unreadable: %w", err)
	}
	m, ok := Quick(data)
	if !ok {
		return ErrUnvouched
	}
	_, _, err = m.Pick()
	return err
}

// knownType is the selected cluster's type without a network call, in kube.Resolve's order: KUBE
// (validated), the override (clusters/<name>.type, detect.force) and the remembered detection
// for a cluster of clusters/, else detect.force.
func knownType(project string, c cluster, getenv func(string) string) (string, error) {
	if v := strings.TrimSpace(getenv(EnvType)); v != "" {
		if !ValidType(v) {
			return "", fmt.Errorf("%s=%s: unknown cluster type (valid: %s)", EnvType, v, strings.Join(Types(), ", "))
		}
		return v, nil
	}
	if c.inventory {
		typ, err := Override(project, c.name, getenv)
		if err != nil || typ != "" {
			return typ, err
		}
		return Remembered(project, c.name, c.path), nil
	}
	typ, src := ForcedType(getenv)
	if typ != "" && !ValidType(typ) {
		return "", fmt.Errorf("%s: unknown cluster type %q (valid: %s)", src, typ, strings.Join(Types(), ", "))
	}
	return typ, nil
}
