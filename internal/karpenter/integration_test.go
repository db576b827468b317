package karpenter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// TestIntegrationKarpenterObjects installs Karpenter's real CRDs on a real local control plane,
// applies the objects of a few groups, reads them back with no difference a plan would show,
// updates and deletes them, and has the API server refuse invalid objects through the CRDs' own
// schema and CEL rules, with the object, field and message reported.
func TestIntegrationKarpenterObjects(t *testing.T) {
	c := localtest.Start(t, localtest.Options{Flavor: "eks"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := c.Config

	if ok, err := Installed(ctx, cfg); err != nil || ok {
		t.Fatalf("Installed before Install = %v, %v", ok, err)
	}
	web := spec.NodeGroup{Name: "web", Manager: "karpenter", InstanceType: "m5.large", Max: ip(10), Labels: map[string]string{"tier": "web"}}
	webObjs := mustObjects(t, testCluster, web)
	if err := Apply(ctx, cfg, webObjs); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Apply without the CRDs: %v, want ErrNotInstalled", err)
	}
	if o, err := Observe(ctx, cfg, testCluster.Name); err != nil || o.Installed || len(o.Objects) != 0 {
		t.Fatalf("Observe without the CRDs = %+v, %v", o, err)
	}

	start := time.Now()
	if err := Install(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	t.Logf("Install: the three CRDs Established in %v", time.Since(start).Round(time.Millisecond))
	if err := Install(ctx, cfg); err != nil { // a second install changes nothing
		t.Fatalf("second Install: %v", err)
	}
	if ok, err := Installed(ctx, cfg); err != nil || !ok {
		t.Fatalf("Installed after Install = %v, %v", ok, err)
	}

	// A CRD that is not nuv's (Karpenter's chart put it there) is left alone by Install.
	dc := dynamic.NewForConfigOrDie(cfg)
	crd, err := dc.Resource(crdGVR).Get(ctx, "nodeclaims.karpenter.sh", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if crd.GetLabels()[LabelManagedBy] != "nuv" || crd.GetAnnotations()[AnnotationVersion] != ModuleVersion {
		t.Errorf("installed CRD labels %v annotations %v", crd.GetLabels(), crd.GetAnnotations())
	}
	crd.SetLabels(map[string]string{LabelManagedBy: "Helm"})
	if _, err := dc.Resource(crdGVR).Update(ctx, crd, metav1.UpdateOptions{FieldManager: "helm"}); err != nil {
		t.Fatal(err)
	}
	if err := Install(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if crd, err = dc.Resource(crdGVR).Get(ctx, "nodeclaims.karpenter.sh", metav1.GetOptions{}); err != nil || crd.GetLabels()[LabelManagedBy] != "Helm" {
		t.Errorf("Install took over a CRD that is not nuv's: labels %v, %v", crd.GetLabels(), err)
	}

	// Three groups, one per shape: dynamic on-demand, spot with taints and a disk, static.
	groups := []spec.NodeGroup{web}
	for _, tc := range goldenGroups[1:3] {
		groups = append(groups, tc.g)
	}
	desired := map[string][]*unstructured.Unstructured{}
	var all []*unstructured.Unstructured
	for _, g := range groups {
		desired[g.Name] = mustObjects(t, testCluster, g)
		all = append(all, desired[g.Name]...)
	}
	if err := Apply(ctx, cfg, all); err != nil {
		t.Fatal(err)
	}
	obs := observe(t, ctx, cfg)
	if got := strings.Join(obs.Groups(), ","); got != "batch,system,web" {
		t.Fatalf("observed groups %s", got)
	}
	for name, objs := range desired {
		assertNoDiff(t, name, objs, obs.Group(name))
	}
	// The server kept what Karpenter's schema defaults (so the CRDs' defaulting ran too).
	np := obs.Group("web")[1]
	if v, _, _ := unstructured.NestedString(np.Object, "spec", "template", "spec", "expireAfter"); v != "720h" {
		t.Errorf("NodePool web: expireAfter %q, want the CRD's default 720h", v)
	}

	// Scaling a group is an update in place; adding count to a dynamic group is refused by
	// Karpenter's CEL transition rule, which is why Replaces says it needs a replacement.
	web.Max = ip(20)
	webObjs = mustObjects(t, testCluster, web)
	if err := Apply(ctx, cfg, webObjs); err != nil {
		t.Fatal(err)
	}
	assertNoDiff(t, "web", webObjs, observe(t, ctx, cfg).Group("web"))
	static := web
	static.Count = ip(2)
	if r, _ := Replaces(web, static); !r {
		t.Fatal("Replaces(dynamic, static) = false")
	}
	err = Apply(ctx, cfg, mustObjects(t, testCluster, static))
	assertRejected(t, err, KindNodePool, "web", "Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes")

	// Invalid objects forced past the mapping's own checks: the real CRDs refuse them.
	for _, tc := range []struct {
		name, kind, want string
		edit             func(objs []*unstructured.Unstructured)
	}{
		{"no subnet selector terms", KindNodeClass, "subnetSelectorTerms cannot be empty", func(objs []*unstructured.Unstructured) {
			must(t, unstructured.SetNestedSlice(objs[0].Object, []any{}, "spec", "subnetSelectorTerms"))
		}},
		{"role and instance profile", KindNodeClass, "must specify exactly one of ['role', 'instanceProfile']", func(objs []*unstructured.Unstructured) {
			must(t, unstructured.SetNestedField(objs[0].Object, "dev-profile", "spec", "instanceProfile"))
		}},
		{"unknown AMI family", KindNodeClass, "family is not supported", func(objs []*unstructured.Unstructured) {
			must(t, unstructured.SetNestedSlice(objs[0].Object, []any{map[string]any{"alias": "ubuntu@latest"}}, "spec", "amiSelectorTerms"))
		}},
		{"karpenter label", KindNodePool, `label domain "karpenter.sh" is restricted`, func(objs []*unstructured.Unstructured) {
			must(t, unstructured.SetNestedField(objs[1].Object, "x", "spec", "template", "metadata", "labels", "karpenter.sh/team"))
		}},
		{"In without values", KindNodePool, "requirements with operator 'In' must have a value defined", func(objs []*unstructured.Unstructured) {
			reqs, _, _ := unstructured.NestedSlice(objs[1].Object, "spec", "template", "spec", "requirements")
			reqs[len(reqs)-1].(map[string]any)["values"] = []any{}
			must(t, unstructured.SetNestedSlice(objs[1].Object, reqs, "spec", "template", "spec", "requirements"))
		}},
		{"weight on a static pool", KindNodePool, "'weight' is not supported on static NodePools", func(objs []*unstructured.Unstructured) {
			must(t, unstructured.SetNestedField(objs[1].Object, int64(10), "spec", "weight"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := spec.NodeGroup{Name: "bad", Manager: "karpenter", Max: ip(3), Count: ip(1)}
			objs := mustObjects(t, testCluster, g)
			tc.edit(objs)
			if tc.kind == KindNodePool { // the class is fine: apply the pool alone so it is the one refused
				objs = objs[1:]
			}
			assertRejected(t, Apply(ctx, cfg, objs), tc.kind, "bad", tc.want)
		})
	}

	// What the CRDs do not check: a capacity type Karpenter does not know is accepted by the API
	// server (only Karpenter's controller would find it wrong, at run time). nuv's mapping writes
	// only "spot" or "on-demand", from the group's spot field.
	odd := mustObjects(t, testCluster, spec.NodeGroup{Name: "odd", Manager: "karpenter", Max: ip(1)})
	reqs, _, _ := unstructured.NestedSlice(odd[1].Object, "spec", "template", "spec", "requirements")
	reqs[len(reqs)-1].(map[string]any)["values"] = []any{"reserved-spot"}
	must(t, unstructured.SetNestedSlice(odd[1].Object, reqs, "spec", "template", "spec", "requirements"))
	if err := Apply(ctx, cfg, odd); err != nil {
		t.Fatalf("an unknown capacity type: %v (the CRD has started to check it: make this case a rejection)", err)
	}
	if err := Delete(ctx, cfg, odd); err != nil {
		t.Fatal(err)
	}

	// An object of the same name that nuv did not make is refused, and never deleted.
	theirs := mustObjects(t, testCluster, spec.NodeGroup{Name: "theirs", Manager: "karpenter", Max: ip(1)})[1]
	theirs.SetLabels(nil)
	if _, err := dc.Resource(nodePoolGVR).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ours := mustObjects(t, testCluster, spec.NodeGroup{Name: "theirs", Manager: "karpenter", Max: ip(5)})
	var fe *ForeignError
	if err := Apply(ctx, cfg, ours); !errors.As(err, &fe) || fe.Name != "theirs" {
		t.Fatalf("Apply over a foreign NodePool: %v", err)
	}
	if _, err := dc.Resource(nodeClassGVR).Get(ctx, "theirs", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused Apply wrote the EC2NodeClass anyway: %v", err)
	}
	if err := Delete(ctx, cfg, ours); !errors.As(err, &fe) {
		t.Fatalf("Delete of a foreign NodePool: %v", err)
	}
	obs = observe(t, ctx, cfg)
	if len(obs.ForeignNamed("theirs")) != 1 || obs.Group("theirs") != nil {
		t.Errorf("Observe: foreign %d, ours %d", len(obs.ForeignNamed("theirs")), len(obs.Group("theirs")))
	}
	// Another nuv cluster's objects are not this cluster's either.
	other := testCluster
	other.Name = "other"
	if o, err := Observe(ctx, cfg, other.Name); err != nil || len(o.Objects) != 0 {
		t.Errorf("Observe(other) = %d objects, %v", len(o.Objects), err)
	}

	// Delete: pools first, then their classes; gone afterwards, and a second delete is a no-op.
	var current []*unstructured.Unstructured
	for _, name := range []string{"batch", "system"} {
		current = append(current, desired[name]...)
	}
	current = append(current, Named(testCluster.Name, "web")...) // as if web had left the spec
	if err := Delete(ctx, cfg, current); err != nil {
		t.Fatal(err)
	}
	if err := Delete(ctx, cfg, current); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if left := observe(t, ctx, cfg).Groups(); len(left) != 0 {
		t.Errorf("left after Delete: %v", left)
	}
	if _, err := dc.Resource(nodePoolGVR).Get(ctx, "theirs", metav1.GetOptions{}); err != nil {
		t.Errorf("the foreign NodePool is gone: %v", err)
	}
}

func mustObjects(t *testing.T, c Cluster, g spec.NodeGroup) []*unstructured.Unstructured {
	t.Helper()
	objs, err := Objects(c, g)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func observe(t *testing.T, ctx context.Context, cfg *rest.Config) *Observed {
	t.Helper()
	o, err := Observe(ctx, cfg, testCluster.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !o.Installed {
		t.Fatal("Observe: CRDs not installed")
	}
	return o
}

// assertNoDiff checks that what the cluster has gives the same Fields as what Objects made: a plan
// after an apply shows no changes.
func assertNoDiff(t *testing.T, name string, want, got []*unstructured.Unstructured) {
	t.Helper()
	if len(got) != 2 {
		t.Fatalf("group %s: %d objects on the cluster, want 2", name, len(got))
	}
	w, g := Fields(want), Fields(got)
	for k := range w {
		if w[k] != g[k] {
			t.Errorf("group %s: %s is %q on the cluster, want %q", name, k, g[k], w[k])
		}
	}
}

func assertRejected(t *testing.T, err error, kind, name, want string) {
	t.Helper()
	var re *RejectedError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a RejectedError", err)
	}
	if re.Kind != kind || re.Name != name || !strings.Contains(err.Error(), want) {
		t.Fatalf("rejected %s %q: %v\nwant %s %q and %q", re.Kind, re.Name, err, kind, name, want)
	}
	t.Logf("refused as expected: %v", err)
}
