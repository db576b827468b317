package allkubes

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/kube"
)

// Resolve turns the words after -- into the child's nuv arguments (see the usage text).
func Resolve(words []string, asTask bool, isBuiltin func(string) bool) []string {
	target := words[0]
	if !asTask && (strings.HasPrefix(target, "-") || (isBuiltin != nil && isBuiltin(target))) {
		return append([]string(nil), words...)
	}
	return append([]string{"-task"}, words...)
}

// KubeInventory is the Inventory of nuv's clusters/ directory (internal/kube). A cluster's type is
// its explicit override (clusters/<name>.type, DETECT_FORCE, detect.force) when there is one, else
// detected afresh; the caller's KUBE, NUV_CLUSTER and KUBECONFIG select nothing here (see
// kube.Resolve), all-kubes sets them for each child.
type KubeInventory struct{ Getenv func(string) string }

// List implements Inventory.
func (k KubeInventory) List(project string) ([]Cluster, error) {
	cs, err := kube.ListEnv(project, k.Getenv)
	if err != nil {
		return nil, err
	}
	out := make([]Cluster, 0, len(cs))
	for _, c := range cs {
		cl := Cluster{Name: c.Name, Kubeconfig: c.Path, Server: c.Server, Err: c.Err}
		if cl.Err == nil {
			cl.Type, cl.Err = kube.Override(project, c.Name, k.Getenv) // a bad override fails that cluster, named
		}
		if cl.Type != "" {
			cl.TypeSource = "DETECT_FORCE or detect.force"
			if _, err := os.Stat(kube.OverridePath(project, c.Name)); err == nil {
				cl.TypeSource = kube.OverridePath(project, c.Name)
			}
		}
		out = append(out, cl)
	}
	return out, nil
}

// RESTConfig implements Inventory.
func (KubeInventory) RESTConfig(path string) (*rest.Config, error) { return kube.RESTConfig(path) }

// Nodes implements Inventory.
func (KubeInventory) Nodes(ctx context.Context, cfg *rest.Config) ([]corev1.Node, error) {
	return ListNodes(ctx, cfg)
}

// AbsIn makes a path given on the command line absolute against dir ("" stays "").
func AbsIn(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
