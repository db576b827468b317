package addons

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
)

const crdYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.nuv.dev
spec:
  group: example.nuv.dev
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: crds-info
  namespace: default
data:
  provides: widgets.example.nuv.dev
`

var kustFiles = map[string]string{
	"kust/ns.yaml":     "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kust-system\n",
	"kust/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: \"1\"\n",
	"kust/old.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: old-config\ndata:\n  gone: soon\n",
	"kust/widget.yaml": "apiVersion: example.nuv.dev/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 1\n",
	"kust/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: kust-system\n" +
		"resources: [ns.yaml, config.yaml, old.yaml, widget.yaml]\n",
}

const webDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {app: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      containers:
      - name: web
        image: {{ .Values.image }}
`

const webService = `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: 80}]
`

func indexYAML(kustVersion, extra string) string {
	return fmt.Sprintf(`apiVersion: nuv.dev/v1alpha1
kind: Addons
metadata: {name: test}
spec:
  addons:
  - name: crds
    version: 1.0.0
    source: {path: crds}
    prune: {crds: true}
  - name: kust
    version: %s
    source: {kustomize: kust}
    dependsOn: [crds]
  - name: web
    namespace: web-system
    version: 1.0.0
    kubernetesVersion: ">=1.25.0"
    source:
      chart:
        repo: oci://{{REGISTRY}}/charts
        name: web
        version: 1.0.0
        values: {replicas: 2}
    dependsOn: [kust]
  - name: eks-only
    version: 0.1.0
    selector: {types: [eks]}
    source: {path: crds}
  - name: future
    version: 0.1.0
    kubernetesVersion: ">=9.0.0"
    source: {path: crds}
%s`, kustVersion, extra)
}

// snapshot returns the resourceVersion of every object the cluster's records list.
func snapshot(t *testing.T, ctx context.Context, tg *Target) map[string]string {
	t.Helper()
	recs, err := tg.Records(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range recs {
		for _, ref := range r.Inventory {
			u, err := tg.get(ctx, ref)
			if err != nil || u == nil {
				t.Fatalf("%s of %s: %v (exists: %v)", ref, r.Name, err, u != nil)
			}
			out[ref.Key()] = u.GetResourceVersion()
		}
	}
	return out
}

func actions(p *Plan) string {
	var s []string
	for _, st := range p.Steps {
		s = append(s, st.Name+"="+string(st.Action))
	}
	return strings.Join(s, " ")
}

func TestIntegrationAddonsLifecycle(t *testing.T) {
	c := localtest.Shared(t, localtest.Options{})
	leaveNoAddons(t, c, "kust-system")
	deleteAtEnd(t, c, "apps", "deployments", "default", "stuck") // the failing add-on's, never recorded
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	host := startRegistry(t)
	pushChart(t, host, chartArchive(t, "web", "1.0.0", map[string]any{"replicas": 1, "image": "nginx:1.27"},
		map[string]string{"deployment.yaml": webDeployment, "service.yaml": webService}), "web", "1.0.0")

	dir := t.TempDir()
	files := map[string]string{"crds/crd.yaml": crdYAML}
	for k, v := range kustFiles {
		files[k] = v
	}
	files["index.yaml"] = strings.ReplaceAll(indexYAML("1.0.0", ""), "{{REGISTRY}}", host)
	writeFiles(t, dir, files)
	load := func() *Index {
		idx, err := Load(filepath.Join(dir, "index.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return idx
	}
	tg, err := NewTarget(ctx, c.Name, "", c.Config)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Type != "local" {
		t.Fatalf("type %q, want local", tg.Type)
	}
	var out bytes.Buffer
	o := Options{Out: &out, Timeout: 2 * time.Minute, Fetcher: &Fetcher{CacheDir: t.TempDir()}}

	// plan on an empty cluster
	p, err := MakePlan(ctx, tg, load(), o)
	if err != nil {
		t.Fatal(err)
	}
	p.Print(&out)
	if got, want := actions(p), "crds=install kust=install web=install eks-only=skipped future=skipped"; got != want {
		t.Fatalf("first plan: %s, want %s\n%s", got, want, out.String())
	}
	if s := p.Step("eks-only"); !strings.Contains(s.Reason, "cluster type local is not one of eks") {
		t.Errorf("eks-only skipped for %q", s.Reason)
	}
	if s := p.Step("future"); !strings.Contains(s.Reason, "outside >=9.0.0") {
		t.Errorf("future skipped for %q", s.Reason)
	}

	// apply: dependency order, waits, records
	if err := Execute(ctx, tg, p, o); err != nil {
		t.Fatalf("apply: %v\n%s", err, out.String())
	}
	cs := kubernetes.NewForConfigOrDie(c.Config)
	dep, err := cs.AppsV1().Deployments("web-system").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *dep.Spec.Replicas != 2 || dep.Status.AvailableReplicas != 2 {
		t.Errorf("web deployment: replicas %d (values from the index: 2), available %d", *dep.Spec.Replicas, dep.Status.AvailableReplicas)
	}
	if dep.Labels[labelPartOf] != applySetID("web") {
		t.Errorf("web deployment labels %v: want the ApplySet part-of label", dep.Labels)
	}
	parent, err := cs.CoreV1().ConfigMaps(StateNamespace).Get(ctx, "addon-web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if parent.Labels[labelApplySetID] != applySetID("web") || parent.Annotations[annGroupKinds] != "Deployment.apps,Service" ||
		parent.Annotations[annAdditionalNSes] != "web-system" || parent.Data["version"] != "1.0.0" {
		t.Errorf("web record: labels %v annotations %v data %v", parent.Labels, parent.Annotations, parent.Data)
	}
	order := out.String()
	if !(strings.Index(order, "install crds") < strings.Index(order, "install kust") && strings.Index(order, "install kust") < strings.Index(order, "install web")) {
		t.Errorf("not applied in dependency order:\n%s", order)
	}

	// a second plan and apply change nothing and touch no object
	before := snapshot(t, ctx, tg)
	out.Reset()
	p, err = Apply(ctx, tg, load(), o)
	if err != nil {
		t.Fatalf("second apply: %v\n%s", err, out.String())
	}
	if got, want := actions(p), "crds=unchanged kust=unchanged web=unchanged eks-only=skipped future=skipped"; got != want {
		t.Fatalf("second plan: %s, want %s", got, want)
	}
	if after := snapshot(t, ctx, tg); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("second apply touched objects:\nbefore %v\nafter  %v", before, after)
	}

	// bump kust: one upgrade; the object it no longer has is pruned, the others are untouched
	files["kust/kustomization.yaml"] = strings.Replace(kustFiles["kust/kustomization.yaml"], " old.yaml,", "", 1)
	files["index.yaml"] = strings.ReplaceAll(indexYAML("1.1.0", ""), "{{REGISTRY}}", host)
	writeFiles(t, dir, files)
	out.Reset()
	p, err = MakePlan(ctx, tg, load(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := actions(p), "crds=unchanged kust=upgrade web=unchanged eks-only=skipped future=skipped"; got != want {
		t.Fatalf("plan after the bump: %s, want %s", got, want)
	}
	if s := p.Step("kust"); s.From != "1.0.0" || s.To != "1.1.0" {
		t.Errorf("kust upgrade %s -> %s", s.From, s.To)
	}
	if err := Execute(ctx, tg, p, o); err != nil {
		t.Fatalf("apply the bump: %v\n%s", err, out.String())
	}
	if _, err := cs.CoreV1().ConfigMaps("kust-system").Get(ctx, "old-config", metav1.GetOptions{}); err == nil {
		t.Errorf("old-config was not pruned:\n%s", out.String())
	}
	after := snapshot(t, ctx, tg)
	for k, rv := range before {
		if strings.Contains(k, "/old-config") {
			continue
		}
		if after[k] != rv {
			t.Errorf("%s changed (resourceVersion %s -> %s) though the upgrade does not change it", k, rv, after[k])
		}
	}

	// an object deleted by hand is put back by the next apply (and only that add-on is applied)
	if err := cs.CoreV1().ConfigMaps("kust-system").Delete(ctx, "settings", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if p, err = Apply(ctx, tg, load(), o); err != nil {
		t.Fatalf("repair: %v\n%s", err, out.String())
	}
	if s := p.Step("kust"); s.Action != Upgrade || !strings.Contains(s.Reason, "1 object(s) missing") || p.Changes() != 1 {
		t.Errorf("repair plan: %s (kust: %s %q)", actions(p), s.Action, s.Reason)
	}
	if _, err := cs.CoreV1().ConfigMaps("kust-system").Get(ctx, "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("settings not restored: %v", err)
	}
	after = snapshot(t, ctx, tg)

	// a failing add-on: named with its object and last condition after a bounded wait; the others stay
	files["stuck/deploy.yaml"] = `apiVersion: apps/v1
kind: Deployment
metadata: {name: stuck, namespace: default}
spec:
  selector: {matchLabels: {app: stuck}}
  template:
    metadata: {labels: {app: stuck}}
    spec:
      nodeSelector: {nuv.dev/no-such-node: "true"}
      containers: [{name: c, image: nginx:1.27}]
`
	files["index.yaml"] = strings.ReplaceAll(indexYAML("1.1.0", "  - name: stuck\n    version: 1.0.0\n    source: {path: stuck}\n    dependsOn: [crds]\n"), "{{REGISTRY}}", host)
	writeFiles(t, dir, files)
	out.Reset()
	fo := o
	fo.Only, fo.Timeout = []string{"stuck"}, 8*time.Second
	start := time.Now()
	_, err = Apply(ctx, tg, load(), fo)
	var ae *AddonError
	if !errors.As(err, &ae) || ae.Addon != "stuck" || ae.Object != "deployment default/stuck" || !strings.Contains(err.Error(), "0/1 replicas available") {
		t.Fatalf("failing add-on: %v\n%s", err, out.String())
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("the failing add-on took %s (wait bounded by 8s)", d)
	}
	t.Logf("failing add-on reported: %v", err)
	if recs, _ := tg.Records(ctx); recs["stuck"] != nil {
		t.Errorf("a failed add-on was recorded as installed")
	}
	if now := snapshot(t, ctx, tg); fmt.Sprint(now) != fmt.Sprint(after) {
		t.Errorf("the failing add-on touched other add-ons' objects")
	}

	// status reads the records
	sts, err := Status(ctx, tg, load())
	if err != nil || len(sts) != 3 {
		t.Fatalf("status: %v, %d add-ons", err, len(sts))
	}
	for _, s := range sts {
		if !s.Ready || s.Missing != 0 {
			t.Errorf("status of %s: ready %v (%s), missing %d", s.Name, s.Ready, s.NotReady, s.Missing)
		}
	}

	// remove: refused while a dependent stays; then everything, CRDs too (prune.crds on crds)
	if err := RemoveAddons(ctx, tg, load(), []string{"crds"}, false, o); err == nil || !strings.Contains(err.Error(), "crds is needed by installed add-on kust") {
		t.Fatalf("removing crds under kust: %v", err)
	}
	installed, err := tg.Records(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := RemoveAddons(ctx, tg, load(), nil, true, o); err != nil {
		t.Fatalf("remove --all: %v\n%s", err, out.String())
	}
	if strings.Index(out.String(), "remove web") > strings.Index(out.String(), "remove crds") {
		t.Errorf("dependents must go first:\n%s", out.String())
	}
	recs, err := tg.Records(ctx)
	if err != nil || len(recs) != 0 {
		t.Fatalf("records after remove: %v %v", recs, err)
	}
	if _, err := cs.AppsV1().Deployments("web-system").Get(ctx, "web", metav1.GetOptions{}); err == nil {
		t.Errorf("web deployment left after remove")
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "kust-system", metav1.GetOptions{}); err == nil {
		t.Errorf("namespace kust-system left after remove")
	}
	n := 0
	for _, r := range installed {
		for _, ref := range r.Inventory {
			n++
			if u, err := tg.get(ctx, ref); err != nil || u != nil {
				t.Errorf("%s of %s left after remove (err %v)", ref, r.Name, err)
			}
		}
	}
	if n != 7 { // crds: CRD, ConfigMap; kust: Namespace, ConfigMap, Widget; web: Deployment, Service
		t.Errorf("%d objects were installed, want 7", n)
	}
}

// TestIntegrationAddonsRefusals: a digest mismatch, two add-ons owning one object and a manifest
// URL with the right digest, planned on a real cluster.
func TestIntegrationAddonsRefusals(t *testing.T) {
	c := localtest.Shared(t, localtest.Options{})
	leaveNoAddons(t, c)
	deleteAtEnd(t, c, "", "configmaps", "default", "from-url")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	manifest := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-url, namespace: default}\ndata: {a: b}\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(manifest) }))
	defer srv.Close()
	dir := t.TempDir()
	good := digestOf(manifest)
	bad := "sha256:" + strings.Repeat("0", 64)
	writeFiles(t, dir, map[string]string{
		"a/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared, namespace: default}\n",
		"b/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\n", // namespace defaults to default
		"index.yaml": fmt.Sprintf(`apiVersion: nuv.dev/v1alpha1
kind: Addons
spec:
  addons:
  - {name: a, version: "1", source: {path: a}}
  - {name: b, version: "1", source: {path: b}}
  - {name: good-url, version: "1", source: {url: %q, digest: %q}}
  - {name: bad-url, version: "1", source: {url: %q, digest: %q}}
`, srv.URL+"/m.yaml", good, srv.URL+"/m.yaml", bad),
	})
	idx, err := Load(filepath.Join(dir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget(ctx, c.Name, "", c.Config)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Fetcher: &Fetcher{CacheDir: t.TempDir()}, Timeout: time.Minute}
	cs := kubernetes.NewForConfigOrDie(c.Config)

	o.Only = []string{"bad-url"}
	_, err = Apply(ctx, tg, idx, o)
	var de *DigestError
	if !errors.As(err, &de) || de.Want != bad || de.Got != good {
		t.Fatalf("bad digest: %v", err)
	}
	o.Only = []string{"a", "b"}
	_, err = Apply(ctx, tg, idx, o)
	var oe *OwnershipError
	if !errors.As(err, &oe) || oe.A != "a" || oe.B != "b" || oe.Object != "configmap default/shared" {
		t.Fatalf("two owners: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "shared", metav1.GetOptions{}); err == nil {
		t.Errorf("a refused plan applied something")
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, StateNamespace, metav1.GetOptions{}); err == nil {
		t.Errorf("a refused plan created %s", StateNamespace)
	}
	o.Only = []string{"good-url"}
	if _, err := Apply(ctx, tg, idx, o); err != nil {
		t.Fatalf("url with the right digest: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "from-url", metav1.GetOptions{}); err != nil {
		t.Errorf("url add-on not applied: %v", err)
	}
}

// leaveNoAddons deletes, when the test ends on the shared cluster, what the add-ons of these tests
// make outside the test's own objects: their records' namespace, the web chart's namespace and
// the crds add-on's CRD and ConfigMap, and the namespaces given.
func leaveNoAddons(t *testing.T, c *localtest.Cluster, namespaces ...string) {
	t.Helper()
	for _, ns := range append([]string{StateNamespace, "web-system"}, namespaces...) {
		deleteAtEnd(t, c, "", "namespaces", "", ns)
	}
	deleteAtEnd(t, c, "apiextensions.k8s.io", "customresourcedefinitions", "", "widgets.example.nuv.dev")
	deleteAtEnd(t, c, "", "configmaps", "default", "crds-info")
}

// deleteAtEnd deletes one object (group "" for the core group, all at version v1) when the test ends.
func deleteAtEnd(t *testing.T, c *localtest.Cluster, group, resource, namespace, name string) {
	t.Helper()
	c.DeleteAtEnd(t, schema.GroupVersionResource{Group: group, Version: "v1", Resource: resource}, namespace, name)
}
