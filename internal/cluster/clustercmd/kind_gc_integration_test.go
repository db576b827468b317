package clustercmd

import (
	"context"
	"encoding/json"
	"fmt"
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
)

// TestIntegrationKindGCByLabel: a kind cluster made with spec.ttl carries its expiry and its
// owner (the state store) on its nodes' labels. With its state record and this home's mark of it
// lost (a CI machine that died, the Docker daemon shared), `nuv cluster gc` still finds it by
// those labels: not expired, it is left alone; expired but another owner's, left alone; without
// nuv's cluster label, not nuv's at all and not even listed; expired and this store's, deleted.
// One node, on the shared dockerd.
func TestIntegrationKindGCByLabel(t *testing.T) {
	rt := kindRuntime(t)
	c := cliRun{t: t, home: t.TempDir(), project: t.TempDir()}
	name := fmt.Sprintf("gclabel%d", os.Getpid()%100000)
	ctx := context.Background()
	kp := kindtest.Provider(t, c.home, c.project, nil)
	t.Cleanup(func() { _ = kp.DeleteNodes(context.Background(), name) })
	f := filepath.Join(t.TempDir(), "gc.yaml")
	if err := os.WriteFile(f, []byte(kindSpec(name, 0)+"  ttl: 1h\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	made := time.Now()
	if out, errs, code := c.run("apply", "-f", f); code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
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
}
