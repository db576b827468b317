package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/kube/kubesel"
)

// EnvType is the per-shell type override: when set to one of Types it is the type of the resolved
// cluster, whatever an override file or a detection says (all-kubes sets it for each child).
const EnvType = "KUBE"

// EnvKubeconfig is the standard client variable: as for kubectl, an explicit KUBECONFIG wins over
// the project's selection (NUV_CLUSTER wins over it).
const EnvKubeconfig = "KUBECONFIG"

// Source says where a Target came from.
type Source string

// The sources of a Target, in precedence order.
const (
	FromFlag       Source = "--kubeconfig" // an explicit kubeconfig given to the command
	FromShell      Source = EnvCluster     // NUV_CLUSTER: the per-shell selection
	FromKubeconfig Source = EnvKubeconfig  // KUBECONFIG naming another kubeconfig than the selection's
	FromProject    Source = ".nuv/current" // the project's selection (`nuv kube use N`, `task N`)
)

// Target is the one cluster a command acts on, as Resolve found it.
type Target struct {
	// Name is the cluster's name: its kubeconfig's file name without .kubeconfig.
	Name string
	// Kubeconfig is the absolute path of its kubeconfig.
	Kubeconfig string
	// Context is the kubeconfig's current context.
	Context string
	// Type is the cluster type known without a network call ("" when it must be detected).
	Type string
	// TypeFrom names where Type came from (KUBE, the override file, DETECT_FORCE, remembered,
	// detected); "" with an empty Type.
	TypeFrom string
	// Source is where the cluster itself came from; SourceValue is the value that named it (the
	// flag's path, NUV_CLUSTER's or KUBECONFIG's value, the selection file).
	Source      Source
	SourceValue string
	// InInventory tells whether the kubeconfig is one of clusters/ (remembered types apply).
	InInventory bool

	project string
}

// Resolve is nuv's one answer to "which cluster": every command that acts on a single cluster
// (the operator verbs, the test verbs, image loading, the environment tasks get) calls it, so two
// verbs run in one shell act on the same cluster. The cluster is, first to last:
//
//  1. explicit: a kubeconfig path the command was given (--kubeconfig), when not "";
//  2. NUV_CLUSTER: the per-shell selection, a cluster name of clusters/ or a kubeconfig path
//     (all-kubes sets it for each child);
//  3. KUBECONFIG: an explicit kubeconfig in the environment wins over the project's selection, as
//     it does for kubectl (a list of files is refused: nuv acts on one cluster). KUBECONFIG naming
//     the project's own kubeconfig (.nuv/kubeconfig, see ProjectKubeconfig) or the selected
//     cluster's file (what tasks get) is the project's selection, reported as such;
//  4. .nuv/current: the project's selection (`nuv kube use N`, `task N`).
//
// Target.Source says which one was used (`nuv status` prints it). Nothing at all is an error
// wrapping ErrNoSelection. A selection that exists but cannot be used (NUV_CLUSTER naming no
// cluster, a damaged .nuv/current, an invalid kubeconfig) is an error too, never a silent
// fall-through to ~/.kube/config.
//
// The type is, first to last: KUBE (validated), clusters/<name>.type (for a cluster of clusters/),
// DETECT_FORCE, detect.force in $NUV_HOME/config.json, the remembered detection (for a cluster of
// clusters/ whose kubeconfig is unchanged); else "" and the caller detects it (Target.Detect).
// Resolve makes no network call.
//
// all-kubes acts on every cluster of clusters/ instead: it ignores the caller's NUV_CLUSTER, KUBE
// and KUBECONFIG and takes each cluster's type from its override (file, DETECT_FORCE, detect.force)
// or a fresh detection, then sets NUV_CLUSTER, KUBE and KUBECONFIG for each child, whose nuv
// commands resolve through this function to exactly that cluster and type.
func Resolve(project, explicit string, getenv func(string) string) (Target, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var (
		c   Cluster
		src Source
		val string
		err error
	)
	switch {
	case explicit != "":
		c, err = clusterAt(project, explicit)
		src, val = FromFlag, explicit
	case strings.TrimSpace(getenv(EnvCluster)) != "":
		c, err = selectedCluster(project, getenv)
		src, val = FromShell, strings.TrimSpace(getenv(EnvCluster))
	case kubesel.ExplicitKubeconfig(project, getenv) != "":
		kc := kubesel.ExplicitKubeconfig(project, getenv)
		if strings.ContainsRune(kc, os.PathListSeparator) {
			return Target{}, fmt.Errorf("%w: %s=%s lists several files and nuv acts on one cluster; set %s to a cluster (or unset %s to use the project's selection)",
				ErrNoSelection, EnvKubeconfig, kc, EnvCluster, EnvKubeconfig)
		}
		c, err = clusterAt(project, kc)
		src, val = FromKubeconfig, kc
	default:
		c, err = selectedCluster(project, getenv)
		src, val = FromProject, CurrentPath(project)
	}
	if err != nil {
		return Target{}, err
	}
	if c.Err != nil {
		return Target{}, fmt.Errorf("cluster %s (%s, from %s): invalid kubeconfig: %w", c.Name, c.Path, src, c.Err)
	}
	t := Target{Name: c.Name, Kubeconfig: c.Path, Context: c.Context, Source: src, SourceValue: val, InInventory: c.Index > 0, project: project}
	if err := t.knownType(project, getenv); err != nil {
		return Target{}, err
	}
	return t, nil
}

// Origin says in words where the target came from, for `nuv status`: "KUBECONFIG=/path (wins
// over the project's selection, as for kubectl)", "NUV_CLUSTER=dev (this shell's selection)",
// "--kubeconfig /path", "the project's selection (/p/.nuv/current)".
func (t Target) Origin() string {
	switch t.Source {
	case FromFlag:
		return "--kubeconfig " + t.SourceValue
	case FromShell:
		return EnvCluster + "=" + t.SourceValue + " (this shell's selection)"
	case FromKubeconfig:
		return EnvKubeconfig + "=" + t.SourceValue + " (wins over the project's selection, as for kubectl)"
	}
	return "the project's selection (" + t.SourceValue + ")"
}

// selectedCluster is Selected without its type (Resolve fills the type itself).
func selectedCluster(project string, getenv func(string) string) (Cluster, error) {
	cs, err := scan(project)
	if err != nil {
		return Cluster{}, err
	}
	if v := strings.TrimSpace(getenv(EnvCluster)); v != "" {
		return resolveEnvCluster(cs, v)
	}
	s, err := ReadSelection(project)
	if errors.Is(err, os.ErrNotExist) {
		return Cluster{}, fmt.Errorf("%w: run `nuv kube use N` (or `task N`) to pick one of `nuv kube list`", ErrNoSelection)
	}
	if err != nil {
		return Cluster{}, err
	}
	for _, c := range cs {
		if c.Name == s.Name {
			return c, nil
		}
	}
	return Cluster{}, fmt.Errorf("%w: the selected cluster %q (in %s) is no longer in clusters/; run `nuv kube use N`",
		ErrNoSelection, s.Name, CurrentPath(project))
}

// selectionRecorded tells whether .nuv/current exists (a stale one is an error, not "nothing").
func selectionRecorded(project string) bool {
	_, err := os.Stat(CurrentPath(project))
	return err == nil
}

// clusterAt is the cluster whose kubeconfig is path: the inventory's entry when path is one of
// clusters/, else a cluster named after the file.
func clusterAt(project, path string) (Cluster, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Cluster{}, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cs, err := scan(project)
	if err != nil {
		return Cluster{}, err
	}
	for _, c := range cs {
		if c.Path == abs {
			return c, nil
		}
	}
	if _, err := os.Stat(abs); err != nil {
		return Cluster{}, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	c := Cluster{Name: strings.TrimSuffix(filepath.Base(abs), Ext), Path: abs}
	c.Context, c.Server, c.Err = parseKubeconfig(abs)
	return c, nil
}

// knownType fills the type that needs no network call, in Resolve's order.
func (t *Target) knownType(project string, getenv func(string) string) error {
	if v := strings.TrimSpace(getenv(EnvType)); v != "" {
		if !ValidType(v) {
			return fmt.Errorf("%s=%s: unknown cluster type (valid: %s)", EnvType, v, strings.Join(Types(), ", "))
		}
		t.Type, t.TypeFrom = v, EnvType
		return nil
	}
	if t.InInventory {
		p := OverridePath(project, t.Name)
		typ, err := Override(project, t.Name, getenv)
		if err != nil {
			return err
		}
		if typ != "" {
			t.Type, t.TypeFrom = typ, p
			if _, err := os.Stat(p); err != nil {
				_, t.TypeFrom = forcedType(getenv)
			}
			return nil
		}
		if typ := Remembered(project, t.Name, t.Kubeconfig); typ != "" {
			t.Type, t.TypeFrom = typ, "remembered"
		}
		return nil
	}
	typ, src := forcedType(getenv)
	if typ == "" {
		return nil
	}
	if !ValidType(typ) {
		return fmt.Errorf("%s: unknown cluster type %q (valid: %s)", src, typ, strings.Join(Types(), ", "))
	}
	t.Type, t.TypeFrom = typ, src
	return nil
}

// DetectTimeout bounds Target.Detect.
const DetectTimeout = 10 * time.Second

// Config is the client configuration of the target (bounded timeouts, see RESTConfig).
func (t Target) Config() (*rest.Config, error) {
	cfg, err := RESTConfig(t.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: kubeconfig %s: %w", t.Name, t.Kubeconfig, err)
	}
	return cfg, nil
}

// Detect fills an empty Type by asking the cluster (within DetectTimeout) and, for a cluster of
// clusters/, remembers it so the next command and tasks know it without a network call. A known
// Type is kept.
func (t *Target) Detect(ctx context.Context, cfg *rest.Config) error {
	if t.Type != "" {
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, DetectTimeout)
	defer cancel()
	typ, err := Detect(dctx, cfg)
	if err != nil {
		return fmt.Errorf("cluster %s (%s): detect its type: %w", t.Name, t.Kubeconfig, err)
	}
	t.Type, t.TypeFrom = typ, "detected"
	if t.InInventory {
		_ = Remember(t.project, t.Name, t.Kubeconfig, typ) // a cache: a read-only project only costs a detection
	}
	return nil
}
