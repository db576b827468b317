// Package load is `build-and-load`: it delivers a freshly built image to the selected cluster by
// its type — nuv's loopback registry (advertised with the KEP-1755 local-registry-hosting ConfigMap)
// for local clusters, the kind library for kind clusters, the nodes' containerd over SSH for the
// self-managed clusters nuv made on machines (type kubeadm), the configured registry for the rest — and
// records the reference in <project>/.nuv/images/<cluster>.ref for `nuv operator`.
package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
)

// Target is the cluster to load into.
type Target struct {
	Name    string // cluster name (clusters/<name>.kubeconfig)
	Type    string // local, kind, or another type
	Context string // kubeconfig context (kind-<name> for kind)
	Config  *rest.Config
}

// Delivery holds the publishers for each kind of cluster.
type Delivery struct {
	// LocalRegistry returns the host (localhost:port) of nuv's loopback registry, starting it when needed.
	LocalRegistry func(ctx context.Context) (string, error)
	// Local pushes to the loopback registry (a Remote without credentials).
	Local image.Publisher
	// Kind loads into a kind cluster's nodes; NewKind builds it for a cluster name.
	NewKind func(cluster string) image.Publisher
	// Remote pushes to the configured registry (with the login keychain).
	Remote image.Publisher
	// NewMachines loads into the nodes of a self-managed cluster nuv made on machines (type
	// kubeadm); MachineNodes says it which.
	NewMachines func(nodes MachineNodes) image.Publisher
	// KindTagDigest appends the index digest to the tag loaded into kind nodes and machines (dev
	// -> dev-<12 hex>): nodes know images by tag only, so a new build needs a new tag for the
	// operator's Deployment to roll.
	KindTagDigest bool
}

// MachineNodes are the nodes of a self-managed cluster nuv made on machines, as their labels
// say: the cluster (nuv.dev/cluster), the provider that made its machines (nuv.dev/provider) and
// the nodes' names.
type MachineNodes struct {
	Cluster, Provider string
	Names             []string
}

// ListMachineNodes lists the nodes of the cluster behind cfg and reads nuv's labels off them.
func ListMachineNodes(ctx context.Context, cfg *rest.Config) (MachineNodes, error) {
	var out MachineNodes
	if cfg == nil {
		return out, errors.New("no client configuration to list the cluster's nodes with")
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return out, err
	}
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return out, fmt.Errorf("list the nodes to load into: %w", err)
	}
	for _, n := range list.Items {
		c, p := n.Labels[kube.LabelCluster], n.Labels[kube.LabelProvider]
		if c == "" || p == "" {
			return out, fmt.Errorf("node %s has no %s and %s labels: it is no machine nuv joined, and nuv cannot reach it", n.Name, kube.LabelCluster, kube.LabelProvider)
		}
		if (out.Cluster != "" && c != out.Cluster) || (out.Provider != "" && p != out.Provider) {
			return out, fmt.Errorf("node %s is labelled %s=%s, %s=%s; other nodes say %s, %s", n.Name, kube.LabelCluster, c, kube.LabelProvider, p, out.Cluster, out.Provider)
		}
		out.Cluster, out.Provider = c, p
		out.Names = append(out.Names, n.Name)
	}
	if len(out.Names) == 0 {
		return out, errors.New("the cluster has no nodes to load the image into")
	}
	sort.Strings(out.Names)
	return out, nil
}

// Deliver publishes idx for target as repo:tag and returns the reference the cluster pulls.
func (d Delivery) Deliver(ctx context.Context, idx v1.ImageIndex, t Target, repo name.Repository, tag string) (string, error) {
	switch t.Type {
	case "local":
		host, err := d.LocalRegistry(ctx)
		if err != nil {
			return "", fmt.Errorf("loopback registry: %w", err)
		}
		ref, err := name.NewTag(host + "/" + repo.RepositoryStr() + ":" + tag)
		if err != nil {
			return "", err
		}
		out, err := d.Local.Publish(ctx, idx, ref)
		if err != nil {
			return "", err
		}
		if t.Config != nil {
			if err := AdvertiseRegistry(ctx, t.Config, host); err != nil {
				return "", err
			}
		}
		// tag and digest: readable, and a new digest rolls the Deployment
		return ref.String() + "@" + digestOf(out), nil
	case kube.TypeKubeadm:
		nodes, err := ListMachineNodes(ctx, t.Config)
		if err != nil {
			return "", fmt.Errorf("cluster %s: %w", t.Name, err)
		}
		ref, err := d.digestTag(idx, repo, tag)
		if err != nil {
			return "", err
		}
		return d.NewMachines(nodes).Publish(ctx, idx, ref)
	case "kind":
		if d.KindTagDigest {
			dg, err := idx.Digest()
			if err != nil {
				return "", err
			}
			tag += "-" + dg.Hex[:12]
		}
		ref, err := name.NewTag(repo.String() + ":" + tag)
		if err != nil {
			return "", err
		}
		cluster := strings.TrimPrefix(t.Context, "kind-")
		if cluster == "" || cluster == t.Context {
			cluster = t.Name
		}
		return d.NewKind(cluster).Publish(ctx, idx, ref)
	default:
		ref, err := name.NewTag(repo.String() + ":" + tag)
		if err != nil {
			return "", err
		}
		out, err := d.Remote.Publish(ctx, idx, ref)
		if err != nil {
			return "", err
		}
		return ref.String() + "@" + digestOf(out), nil
	}
}

// digestTag is repo:tag, the tag with the index's digest appended when KindTagDigest says so.
func (d Delivery) digestTag(idx v1.ImageIndex, repo name.Repository, tag string) (name.Tag, error) {
	if d.KindTagDigest {
		dg, err := idx.Digest()
		if err != nil {
			return name.Tag{}, err
		}
		tag += "-" + dg.Hex[:12]
	}
	return name.NewTag(repo.String() + ":" + tag)
}

func digestOf(ref string) string {
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		return ref[i+1:]
	}
	return ref
}

// ConfigMapName and ConfigMapNamespace are KEP-1755's well-known location.
const (
	ConfigMapName      = "local-registry-hosting"
	ConfigMapNamespace = "kube-public"
	ConfigMapKey       = "localRegistryHosting.v1"
)

// Hosting is KEP-1755's localRegistryHosting.v1: where the local registry is, as seen from the
// host (Host: push there), from the nodes' container runtime (FromContainerRuntime: name images
// so in pod specs) and from pods on the cluster network (FromClusterNetwork). Empty fields are
// left out (KEP-1755: the runtime's default is Host).
type Hosting struct {
	Host                 string
	FromContainerRuntime string
	FromClusterNetwork   string
}

// Help is the document's help link.
const Help = "https://github.com/nuv-dev/nuv#the-loopback-registry (nuv registry up|down|status)"

// Doc renders h as the localRegistryHosting.v1 YAML document (fields in the KEP's order).
func (h Hosting) Doc() string {
	var b strings.Builder
	fmt.Fprintf(&b, "host: %q\n", h.Host)
	if h.FromContainerRuntime != "" {
		fmt.Fprintf(&b, "hostFromContainerRuntime: %q\n", h.FromContainerRuntime)
	}
	if h.FromClusterNetwork != "" {
		fmt.Fprintf(&b, "hostFromClusterNetwork: %q\n", h.FromClusterNetwork)
	}
	fmt.Fprintf(&b, "help: %q\n", Help)
	return b.String()
}

// HostingDoc is the localRegistryHosting.v1 document for a registry the nodes reach at host itself
// (nuv's local clusters, whose nodes share the host's loopback).
func HostingDoc(host string) string {
	return Hosting{Host: host, FromContainerRuntime: host}.Doc()
}

// AdvertiseRegistry creates or updates the local-registry-hosting ConfigMap in kube-public for a
// registry the nodes reach at host.
func AdvertiseRegistry(ctx context.Context, cfg *rest.Config, host string) error {
	return Advertise(ctx, cfg, Hosting{Host: host, FromContainerRuntime: host})
}

// Advertise creates or updates the local-registry-hosting ConfigMap in kube-public (labelled as
// nuv's) with h's document; it writes nothing when the ConfigMap says so already.
func Advertise(ctx context.Context, cfg *rest.Config, h Hosting) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("advertise the registry: %w", err)
	}
	cms := cs.CoreV1().ConfigMaps(ConfigMapNamespace)
	want := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: ConfigMapNamespace,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "nuv"}},
		Data: map[string]string{ConfigMapKey: h.Doc()},
	}
	cur, err := cms.Get(ctx, ConfigMapName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err := cms.Create(ctx, want, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create ConfigMap %s/%s: %w", ConfigMapNamespace, ConfigMapName, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read ConfigMap %s/%s: %w", ConfigMapNamespace, ConfigMapName, err)
	}
	if cur.Data[ConfigMapKey] == want.Data[ConfigMapKey] && cur.Labels["app.kubernetes.io/managed-by"] == "nuv" {
		return nil
	}
	cur.Data = want.Data
	if cur.Labels == nil {
		cur.Labels = map[string]string{}
	}
	cur.Labels["app.kubernetes.io/managed-by"] = "nuv"
	if _, err := cms.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update ConfigMap %s/%s: %w", ConfigMapNamespace, ConfigMapName, err)
	}
	return nil
}

// RefFile is where the loaded reference for a cluster is recorded.
func RefFile(project, cluster string) string {
	return filepath.Join(paths.ProjectState(project), "images", cluster+".ref")
}

// WriteRef records ref for cluster (atomically; one line).
func WriteRef(project, cluster, ref string) error {
	return fsutil.WriteFileAtomic(RefFile(project, cluster), []byte(ref+"\n"), 0o644)
}

// ReadRef returns the recorded reference for cluster, "" when none was loaded.
func ReadRef(project, cluster string) (string, error) {
	data, err := os.ReadFile(RefFile(project, cluster))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}
