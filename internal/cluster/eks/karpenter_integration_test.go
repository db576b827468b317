package eks_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// TestIntegrationEKSKarpenter: a manager: karpenter group becomes a NodePool and an EC2NodeClass
// accepted by the emulated cluster's real API server with Karpenter's CRDs; removing the group
// from the spec deletes them.
func TestIntegrationEKSKarpenter(t *testing.T) {
	if testing.Short() {
		t.Skip("makes an emulated EKS cluster; skipped under -short")
	}
	w := newWorld(t)
	t.Cleanup(func() { w.nuv(nil, "cluster", "delete", "kp") })
	doc := `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: kp}
spec:
  provider: eks
  nodeGroups:
  - {name: system, count: 1}
  - {name: burst, manager: karpenter, max: 5, spot: true, instanceType: m6i.large, labels: {tier: burst}}
  eks: {nat: none}
`
	f := w.spec("kp", doc)
	out, errs, code := w.nuv(nil, "cluster", "apply", "-f", f)
	if code != 0 || !strings.Contains(out, "created karpenter/burst") {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(w.project, "clusters", "kp.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	dc := dynamic.NewForConfigOrDie(cfg)
	pools := schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	classes := schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}
	ctx := context.Background()
	p, err := dc.Resource(pools).Get(ctx, "burst", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Resource(classes).Get(ctx, "burst", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("NodePool: %v", p.Object["spec"])
	if _, _, code := w.nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode"); code != 0 {
		t.Fatalf("plan after apply: exit %d", code)
	}
	f = w.spec("kp", strings.Replace(doc, "  - {name: burst, manager: karpenter, max: 5, spot: true, instanceType: m6i.large, labels: {tier: burst}}\n", "", 1))
	out, _, code = w.nuv(nil, "cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "- delete karpenter/burst") {
		t.Fatalf("plan without the group: exit %d\n%s", code, out)
	}
	if out, errs, code := w.nuv(nil, "cluster", "apply", "-f", f); code != 0 {
		t.Fatalf("apply without the group: exit %d\n%s%s", code, out, errs)
	}
	if _, err := dc.Resource(pools).Get(ctx, "burst", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("NodePool after the group went: %v", err)
	}
	if out, errs, code := w.nuv(nil, "cluster", "delete", "kp"); code != 0 {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
	}
}
