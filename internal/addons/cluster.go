package addons

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/nuv-dev/nuv/internal/kube"
)

// Names nuv uses in the cluster.
const (
	// StateNamespace holds one ConfigMap per installed add-on (its ApplySet parent and record).
	StateNamespace = "nuv-addons"
	// FieldManager is the server-side apply field manager of add-on objects.
	FieldManager = "nuv-addons"
	// LabelAddon marks add-on objects and records with the add-on's name.
	LabelAddon = "addons.nuv.dev/name"
	// LabelRecord marks the record ConfigMaps.
	LabelRecord = "addons.nuv.dev/record"

	labelApplySetID      = "applyset.kubernetes.io/id"
	labelPartOf          = "applyset.kubernetes.io/part-of"
	annTooling           = "applyset.kubernetes.io/tooling"
	annGroupKinds        = "applyset.kubernetes.io/contains-group-kinds"
	annAdditionalNSes    = "applyset.kubernetes.io/additional-namespaces"
	toolingValue         = "nuv/v1"
	recordPrefix         = "addon-"
	recordKeyVersion     = "version"
	recordKeyHash        = "hash"
	recordKeySource      = "source"
	recordKeyInventory   = "inventory"
	recordKeyPruneCRDs   = "pruneCRDs"
	recordKeyDescription = "description"
)

// Target is the cluster add-ons are planned for and applied to.
type Target struct {
	// Name is the cluster's name (its kubeconfig's name in clusters/).
	Name string
	// Type is the cluster type (kube.Types) selectors match.
	Type string
	// Version is the server's version ("v1.36.3"); "" when the server does not say.
	Version string

	cs     kubernetes.Interface
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	nodes  []corev1.Node
}

// Connect resolves the cluster: kubeconfig when given, else the project's selected cluster
// (NUV_CLUSTER, then .nuv/current, as the deploy verbs do). kubeType overrides the detected type.
func Connect(ctx context.Context, project, kubeconfig, kubeType string, getenv func(string) string) (*Target, error) {
	name := ""
	if kubeconfig == "" {
		c, err := kube.Selected(project, getenv)
		if err != nil {
			return nil, err
		}
		kubeconfig, name = c.Path, c.Name
		if kubeType == "" {
			kubeType = c.Type
		}
	} else {
		name = strings.TrimSuffix(filepath.Base(kubeconfig), kube.Ext)
	}
	cfg, err := kube.RESTConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	return NewTarget(ctx, name, kubeType, cfg)
}

// NewTarget builds a Target from a client configuration; an empty kubeType is detected.
func NewTarget(ctx context.Context, name, kubeType string, cfg *rest.Config) (*Target, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS < 50 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	t := &Target{Name: name, Type: kubeType}
	var err error
	if t.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	if t.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	t.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	if v, err := dc.ServerVersion(); err != nil {
		return nil, fmt.Errorf("cluster %s: server version: %w", name, err)
	} else {
		t.Version = v.GitVersion
	}
	if t.Type == "" {
		if t.Type, err = kube.Detect(ctx, cfg); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", name, err)
		}
	}
	return t, nil
}

// Nodes returns the cluster's nodes (listed once).
func (t *Target) Nodes(ctx context.Context) ([]corev1.Node, error) {
	if t.nodes != nil {
		return t.nodes, nil
	}
	l, err := t.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: list nodes: %w", t.Name, err)
	}
	t.nodes = l.Items
	return t.nodes, nil
}

// ObjRef identifies one object of an add-on.
type ObjRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// Key identifies the object whatever its API version.
func (r ObjRef) Key() string { return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name }

// String names the object for people: "deployment web/api", "customresourcedefinition x.y".
func (r ObjRef) String() string {
	k := strings.ToLower(r.Kind)
	if r.Namespace != "" {
		return k + " " + r.Namespace + "/" + r.Name
	}
	return k + " " + r.Name
}

func refOf(u *unstructured.Unstructured) ObjRef {
	gvk := u.GroupVersionKind()
	return ObjRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

func (r ObjRef) gvk() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// Record is what the cluster records about one installed add-on.
type Record struct {
	Name        string
	Version     string
	Hash        string
	Source      string
	Description string
	PruneCRDs   bool
	Inventory   []ObjRef
}

// Records reads the installed add-ons from the cluster, by name.
func (t *Target) Records(ctx context.Context) (map[string]*Record, error) {
	l, err := t.cs.CoreV1().ConfigMaps(StateNamespace).List(ctx, metav1.ListOptions{LabelSelector: LabelRecord + "=true"})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: read installed add-ons (configmaps in %s): %w", t.Name, StateNamespace, err)
	}
	out := map[string]*Record{}
	for _, cm := range l.Items {
		r := &Record{
			Name: cm.Labels[LabelAddon], Version: cm.Data[recordKeyVersion], Hash: cm.Data[recordKeyHash],
			Source: cm.Data[recordKeySource], Description: cm.Data[recordKeyDescription],
			PruneCRDs: cm.Data[recordKeyPruneCRDs] == "true",
		}
		if r.Name == "" {
			r.Name = strings.TrimPrefix(cm.Name, recordPrefix)
		}
		if err := json.Unmarshal([]byte(cm.Data[recordKeyInventory]), &r.Inventory); err != nil {
			return nil, fmt.Errorf("cluster %s: configmap %s/%s: inventory: %w", t.Name, StateNamespace, cm.Name, err)
		}
		out[r.Name] = r
	}
	return out, nil
}

// applySetID is the KEP-3659 id of a ConfigMap parent: base64url(sha256(name.namespace.kind.group)).
func applySetID(name string) string {
	sum := sha256.Sum256([]byte(recordPrefix + name + "." + StateNamespace + ".ConfigMap."))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// writeRecord server-side applies the add-on's record (its ApplySet parent).
func (t *Target) writeRecord(ctx context.Context, r *Record) error {
	inv, err := json.Marshal(r.Inventory)
	if err != nil {
		return err
	}
	gks := map[string]bool{}
	nss := map[string]bool{}
	for _, o := range r.Inventory {
		gk := o.Kind
		if o.Group != "" {
			gk += "." + o.Group
		}
		gks[gk] = true
		if o.Namespace != "" && o.Namespace != StateNamespace {
			nss[o.Namespace] = true
		}
	}
	cm := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": recordPrefix + r.Name, "namespace": StateNamespace,
			"labels": map[string]any{LabelRecord: "true", LabelAddon: r.Name, labelApplySetID: applySetID(r.Name)},
			"annotations": map[string]any{
				annTooling: toolingValue, annGroupKinds: strings.Join(sortedKeys(gks), ","),
				annAdditionalNSes: strings.Join(sortedKeys(nss), ","),
			},
		},
		"data": map[string]any{
			recordKeyVersion: r.Version, recordKeyHash: r.Hash, recordKeySource: r.Source,
			recordKeyDescription: r.Description, recordKeyPruneCRDs: fmt.Sprint(r.PruneCRDs), recordKeyInventory: string(inv),
		},
	}
	return t.ssa(ctx, &unstructured.Unstructured{Object: cm})
}

func (t *Target) deleteRecord(ctx context.Context, name string) error {
	err := t.cs.CoreV1().ConfigMaps(StateNamespace).Delete(ctx, recordPrefix+name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the record of add-on %s: %w", name, err)
	}
	return nil
}

// ensureStateNamespace creates the nuv-addons namespace when it is missing.
func (t *Target) ensureStateNamespace(ctx context.Context) error {
	if _, err := t.cs.CoreV1().Namespaces().Get(ctx, StateNamespace, metav1.GetOptions{}); err == nil {
		return nil
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": StateNamespace}}}
	return t.ssa(ctx, ns)
}

// ensureNamespace creates an add-on's namespace when it is missing and none of its objects is
// that namespace (like helm --create-namespace). Such a namespace is not the add-on's: other
// add-ons may share it, and removing the add-on leaves it.
func (t *Target) ensureNamespace(ctx context.Context, ns string, objs []*unstructured.Unstructured) error {
	if ns == "" {
		return nil
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" && o.GetAPIVersion() == "v1" && o.GetName() == ns {
			return nil
		}
	}
	_, err := t.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("namespace %s: %w", ns, err)
	}
	_, err = t.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// resource returns the dynamic client for an object of gvk in namespace ns.
func (t *Target) resource(gvk schema.GroupVersionKind, ns string) (dynamic.ResourceInterface, bool, error) {
	m, err := t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		t.mapper.Reset()
		m, err = t.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, false, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return t.dyn.Resource(m.Resource).Namespace(ns), true, nil
	}
	return t.dyn.Resource(m.Resource), false, nil
}

// ssa server-side applies obj with nuv's add-ons field manager.
func (t *Target) ssa(ctx context.Context, obj *unstructured.Unstructured) error {
	ri, _, err := t.resource(obj.GroupVersionKind(), obj.GetNamespace())
	if err != nil {
		return fmt.Errorf("apply %s: %w", refOf(obj), err)
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	force := true
	if _, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: FieldManager, Force: &force}); err != nil {
		return fmt.Errorf("apply %s: %w", refOf(obj), err)
	}
	return nil
}

// get reads the live object of r; nil when it does not exist (or its kind is no longer served).
func (t *Target) get(ctx context.Context, r ObjRef) (*unstructured.Unstructured, error) {
	ri, _, err := t.resource(r.gvk(), r.Namespace)
	if meta.IsNoMatchError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u, err := ri.Get(ctx, r.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// delete removes the object of r (background propagation); a missing object is fine.
func (t *Target) delete(ctx context.Context, r ObjRef) error {
	ri, _, err := t.resource(r.gvk(), r.Namespace)
	if meta.IsNoMatchError(err) {
		return nil // its kind is gone, and so is the object
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", r, err)
	}
	bg := metav1.DeletePropagationBackground
	err = ri.Delete(ctx, r.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s: %w", r, err)
	}
	return nil
}
