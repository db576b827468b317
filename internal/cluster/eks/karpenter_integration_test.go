package eks_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/karpenter"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// TestIntegrationEKSKarpenter: a manager: karpenter group becomes a NodePool and an EC2NodeClass
// accepted by the emulated cluster's real API server with Karpenter's CRDs. Plans compare what
// the cluster has: a new max is exactly one NodePool field change; a hand edit of the NodePool
// shows up and is put back; a NodePool deleted by hand is created again; adding count replaces the
// pool (static); objects of the same name that are another cluster's are a conflict and left
// alone; removing the group from the spec deletes both objects. Without the cluster's
// kubeconfig the state record stands in, with a warning.
func TestIntegrationEKSKarpenter(t *testing.T) {
	if testing.Short() {
		t.Skip("makes an emulated EKS cluster; skipped under -short")
	}
	w := newWorld(t)
	t.Cleanup(func() { w.Nuv(nil, "cluster", "delete", "--yes", "kp") })
	const burst = "  - {name: burst, manager: karpenter, max: 5, spot: true, instanceType: \"m6i.large,c6i.large\", labels: {tier: burst}}\n"
	doc := `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: kp}
spec:
  provider: eks
  nodeGroups:
  - {name: system, count: 1}
` + burst + `  eks: {nat: none}
`
	f := w.Spec("kp", doc)
	out, errs, code := w.Nuv(nil, "cluster", "apply", "--yes", "-f", f)
	if code != 0 || !strings.Contains(out, "created karpenter/burst") {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(w.Project, "clusters", "kp.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	dc := dynamic.NewForConfigOrDie(cfg)
	pools := schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	classes := schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}
	ctx := context.Background()
	limit := func() int64 {
		t.Helper()
		p, err := dc.Resource(pools).Get(ctx, "burst", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n, _, _ := unstructured.NestedInt64(p.Object, "spec", "limits", "nodes")
		return n
	}
	if n := limit(); n != 5 {
		t.Fatalf("NodePool limits.nodes = %d, want 5", n)
	}
	if _, err := dc.Resource(classes).Get(ctx, "burst", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	plan := func(f string, want int) string {
		t.Helper()
		out, errs, code := w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
		if code != want {
			t.Fatalf("plan: exit %d, want %d\n%s%s", code, want, out, errs)
		}
		return out
	}
	plan(f, 0)

	// Without the kubeconfig the objects cannot be read: the state record stands in, with a warning.
	kc := filepath.Join(w.Project, "clusters", "kp.kubeconfig")
	if err := os.Rename(kc, kc+".away"); err != nil {
		t.Fatal(err)
	}
	out, errs, code = w.Nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 || strings.Contains(out, "karpenter/burst") || !strings.Contains(out, "+ create kubeconfig/kp") ||
		!strings.Contains(errs, "the Karpenter objects of [burst] were not read from the cluster") || !strings.Contains(errs, "the plan uses the state record") {
		t.Fatalf("plan without the kubeconfig: exit %d\n%s%s", code, out, errs)
	}
	if err := os.Rename(kc+".away", kc); err != nil {
		t.Fatal(err)
	}

	// A new max: one field of one resource.
	f = w.Spec("kp", strings.Replace(doc, "max: 5", "max: 8", 1))
	out = plan(f, 2)
	if !regexp.MustCompile(`(?m)^  ~ update karpenter/burst.*\n      nodepool.limits: nodes=5 -> nodes=8\nPlan: 0 to create, 1 to update, 0 to replace, 0 to delete;`).MatchString(out) {
		t.Fatalf("plan with max 8 is not exactly that change:\n%s", out)
	}
	if out, errs, code := w.Nuv(nil, "cluster", "apply", "--yes", "-f", f); code != 0 {
		t.Fatalf("apply max 8: exit %d\n%s%s", code, out, errs)
	}
	if n := limit(); n != 8 {
		t.Fatalf("NodePool limits.nodes = %d after apply, want 8", n)
	}
	plan(f, 0)

	// A hand edit of the NodePool shows in the plan, and apply puts the spec's value back.
	if _, err := dc.Resource(pools).Patch(ctx, "burst", types.MergePatchType, []byte(`{"spec":{"limits":{"nodes":3}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := plan(f, 2); !strings.Contains(out, "nodepool.limits: nodes=3 -> nodes=8") {
		t.Fatalf("plan after a hand edit:\n%s", out)
	}
	if out, errs, code := w.Nuv(nil, "cluster", "apply", "--yes", "-f", f); code != 0 || limit() != 8 {
		t.Fatalf("apply after a hand edit: exit %d, limit %d\n%s%s", code, limit(), out, errs)
	}

	// A NodePool deleted by hand is created again.
	if err := dc.Resource(pools).Delete(ctx, "burst", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := plan(f, 2); !strings.Contains(out, "+ create karpenter/burst") || !strings.Contains(out, "Plan: 1 to create, 0 to update, 0 to replace, 0 to delete;") {
		t.Fatalf("plan after the NodePool was deleted by hand:\n%s", out)
	}
	if out, errs, code := w.Nuv(nil, "cluster", "apply", "--yes", "-f", f); code != 0 || limit() != 8 {
		t.Fatalf("apply after the NodePool was deleted: exit %d\n%s%s", code, out, errs)
	}
	plan(f, 0)

	// count added: the pool turns static, which Karpenter refuses in place, so it is replaced.
	static := strings.Replace(doc, "max: 5", "count: 2, max: 8", 1)
	f = w.Spec("kp", static)
	if out := plan(f, 2); !strings.Contains(out, "-/+ replace karpenter/burst") || !strings.Contains(out, "nodepool.mode: dynamic -> static  (forces replacement)") ||
		!strings.Contains(out, "nodepool.replicas: (none) -> 2") {
		t.Fatalf("plan with count:\n%s", out)
	}
	if out, errs, code := w.Nuv(nil, "cluster", "apply", "--yes", "-f", f); code != 0 {
		t.Fatalf("apply with count: exit %d\n%s%s", code, out, errs)
	}
	p, err := dc.Resource(pools).Get(ctx, "burst", metav1.GetOptions{})
	if n, _, _ := unstructured.NestedInt64(p.Object, "spec", "replicas"); err != nil || n != 2 {
		t.Fatalf("NodePool replicas = %d (%v) after the replace, want 2", n, err)
	}
	plan(f, 0)

	// Objects of the same name that are another cluster's: a conflict, left alone.
	foreign, err := karpenter.Objects(karpenter.Cluster{Name: "someone-else", NodeRole: "other-nodes"}, spec.NodeGroup{Name: "other", Manager: "karpenter", Max: ptrTo(1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := karpenter.Apply(ctx, cfg, foreign); err != nil {
		t.Fatal(err)
	}
	plan(f, 0) // not in the spec: not this cluster's business
	withOther := w.Spec("kp", strings.Replace(static, "  eks:", "  - {name: other, manager: karpenter, max: 1}\n  eks:", 1))
	out, errs, _ = w.Nuv(nil, "cluster", "plan", "-f", withOther)
	if !strings.Contains(out+errs, "! conflict karpenter/other") {
		t.Fatalf("plan with a group named like another cluster's objects:\n%s%s", out, errs)
	}

	// The group removed from the spec: both objects are deleted.
	f = w.Spec("kp", strings.Replace(doc, burst, "", 1))
	if out := plan(f, 2); !strings.Contains(out, "- delete karpenter/burst") {
		t.Fatalf("plan without the group:\n%s", out)
	}
	if out, errs, code := w.Nuv(nil, "cluster", "apply", "--yes", "-f", f); code != 0 {
		t.Fatalf("apply without the group: exit %d\n%s%s", code, out, errs)
	}
	for _, gvr := range []schema.GroupVersionResource{pools, classes} {
		if _, err := dc.Resource(gvr).Get(ctx, "burst", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("%s burst after the group went: %v", gvr.Resource, err)
		}
	}
	plan(f, 0)
	for _, gvr := range []schema.GroupVersionResource{pools, classes} {
		if _, err := dc.Resource(gvr).Get(ctx, "other", metav1.GetOptions{}); err != nil {
			t.Fatalf("another cluster's %s: %v", gvr.Resource, err)
		}
	}
	if out, errs, code := w.Nuv(nil, "cluster", "delete", "--yes", "kp"); code != 0 {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
	}
}

func ptrTo[T any](v T) *T { return &v }
