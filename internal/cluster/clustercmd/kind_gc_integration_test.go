package clustercmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster/kind"
	"github.com/nuv-dev/nuv/internal/cluster/kind/kindtest"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

// gcByLabel: a kind cluster made with spec.ttl (TestIntegrationKind's one-node cluster, made at
// time made through c's home and project) carries its expiry and its owner (the state
// store) on its nodes' labels. With its state record and this home's mark of it lost (a CI
// machine that died, the Docker daemon shared), `nuv cluster gc` still finds it by those labels:
// not expired, it is left alone; expired but another owner's, left alone; without nuv's cluster
// label, not nuv's at all and not even listed; expired and this store's, deleted, leaving no
// container, volume or network.
func gcByLabel(t *testing.T, rt containerrt.Runtime, c cliRun, name string, made time.Time) {
	t.Helper()
	ctx := context.Background()
	vols := nodeVolumes(t, rt, name)
	// once its record is gone, nuv's delete no longer knows the cluster: a failure below leaves
	// it to this clean-up
	kp := kindtest.Provider(t, c.home, c.project, nil)
	t.Cleanup(func() { _ = kp.DeleteNodes(context.Background(), name) })
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(c.project, "clusters", name+".kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 1 {
		t.Fatalf("nodes: %v %v", nodes, err)
	}
	labels := nodes.Items[0].Labels
	at, err := strconv.ParseInt(labels[kind.LabelExpiresAt], 10, 64)
	if err != nil || time.Unix(at, 0).Before(made.Add(59*time.Minute)) || time.Unix(at, 0).After(time.Now().Add(61*time.Minute)) {
		t.Fatalf("node labels %v: want %s about an hour from now in Unix seconds", labels, kind.LabelExpiresAt)
	}
	owner := labels[kind.LabelOwner]
	if !strings.HasPrefix(owner, "dir-") || labels[kind.LabelCluster] != name {
		t.Fatalf("node labels %v: want nuv's cluster and owner", labels)
	}
	relabel := func(k, v string) {
		t.Helper()
		var val any = v
		if v == "" {
			val = nil
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{k: val}}})
		if _, err := cs.CoreV1().Nodes().Patch(ctx, nodes.Items[0].Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	gc := func(args ...string) string {
		t.Helper()
		out, errs, code := c.run(append([]string{"gc", "--provider", "kind"}, args...)...)
		if code != 0 {
			t.Fatalf("gc %v: exit %d\n%s%s", args, code, out, errs)
		}
		return out
	}
	exists := func() bool {
		return rtOut(t, rt, "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name, "--format", "{{.Names}}") != ""
	}

	// The record and this home's mark are lost.
	if err := os.Remove(filepath.Join(c.home, "state", name+".json")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(c.home, "kind", name)); err != nil {
		t.Fatal(err)
	}
	if out := gc("--dry-run"); !regexpMatch(`(?m)^`+name+`\s+kind\s+\S+Z\s+skipped\s+record lost; not expired: expires at `, out) {
		t.Fatalf("gc --dry-run before the expiry:\n%s", out)
	}

	// Expired (as an hour passing would), but another store's.
	relabel(kind.LabelExpiresAt, strconv.FormatInt(time.Now().Add(-10*time.Minute).Unix(), 10))
	relabel(kind.LabelOwner, "dir-0123456789ab")
	if out := gc(); !regexpMatch(`(?m)^`+name+`\s+kind\s+\S+Z\s+skipped\s+owned by another state store \(dir-0123456789ab; this one is `+owner+`\)`, out) || !exists() {
		t.Fatalf("gc of another owner's cluster (exists: %v):\n%s", exists(), out)
	}
	// This store's, but without nuv's cluster label: not nuv's, not listed.
	relabel(kind.LabelOwner, owner)
	relabel(kind.LabelCluster, "")
	if out := gc(); strings.Contains(out, name) || !exists() {
		t.Fatalf("gc of a cluster without nuv's label (exists: %v):\n%s", exists(), out)
	}
	// nuv's, this store's, expired: deleted.
	relabel(kind.LabelCluster, name)
	if out := gc(); !regexpMatch(`(?m)^`+name+`\s+kind\s+\S+Z\s+deleted\s+record lost, found by tag; expired \d+m ago \[container runtime \w+\]`, out) {
		t.Fatalf("gc of the expired cluster:\n%s", out)
	}
	if exists() {
		t.Fatal("gc said it deleted the cluster, its node containers are still there")
	}
	if left := kindLeftovers(t, rt, name, vols); len(left) > 0 {
		t.Errorf("left after gc: %s", strings.Join(left, "; "))
	}
}
