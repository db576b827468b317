package addons

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
)

// BenchmarkNoChangeApply measures what `nuv addons apply` costs when nothing changed, for an
// index of 10 add-ons (6 manifest directories, 2 kustomizations, 2 Helm charts from the loopback
// OCI registry, one of them pinned by digest) on a local cluster: load the index, connect, read
// the records, fetch and render every source, plan, and touch nothing. Target: <= 1 s.
// The peer, measured in the same run when kubectl is on PATH, is `kubectl apply --server-side`
// of the same objects (which sends every object to the server).
//
//	go test -run '^$' -bench NoChangeApply -benchtime 10x ./internal/addons/
func BenchmarkNoChangeApply(b *testing.B) {
	c := localtest.Start(b, localtest.Options{})
	ctx := context.Background()
	host := startRegistry(b)
	dir := b.TempDir()
	files := map[string]string{}
	var idx strings.Builder
	idx.WriteString("apiVersion: nuv.dev/v1alpha1\nkind: Addons\nspec:\n  addons:\n")
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("bench%d", i)
		ns := name + "-system"
		manifests := fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %[2]s}\n---\n"+
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %[1]s-config, namespace: %[2]s}\ndata: {index: \"%[3]d\"}\n---\n"+
			"apiVersion: v1\nkind: Service\nmetadata: {name: %[1]s, namespace: %[2]s}\nspec: {selector: {app: %[1]s}, ports: [{port: 80}]}\n---\n"+
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %[1]s, namespace: %[2]s}\nspec:\n  selector: {matchLabels: {app: %[1]s}}\n"+
			"  template:\n    metadata: {labels: {app: %[1]s}}\n    spec: {containers: [{name: c, image: \"nginx:1.27\"}]}\n", name, ns, i)
		dep := ""
		if i > 0 {
			dep = fmt.Sprintf(", dependsOn: [bench%d]", i-1)
		}
		switch {
		case i < 6:
			files[name+"/all.yaml"] = manifests
			fmt.Fprintf(&idx, "  - {name: %s, version: 1.0.0, source: {path: %s}%s}\n", name, name, dep)
		case i < 8:
			files[name+"/all.yaml"] = manifests
			files[name+"/kustomization.yaml"] = "resources: [all.yaml]\nlabels: [{pairs: {tier: bench}}]\n"
			fmt.Fprintf(&idx, "  - {name: %s, version: 1.0.0, source: {kustomize: %s}%s}\n", name, name, dep)
		default:
			archive := chartArchive(b, name, "1.0.0", map[string]any{"replicas": 1, "image": "nginx:1.27"},
				map[string]string{"deployment.yaml": webDeployment, "service.yaml": webService})
			pushChart(b, host, archive, name, "1.0.0")
			digest := ""
			if i == 8 {
				digest = ", digest: " + digestOf(archive)
			}
			fmt.Fprintf(&idx, "  - {name: %s, namespace: %s, version: 1.0.0, source: {chart: {repo: \"oci://%s/charts\", name: %s, version: 1.0.0}%s}%s}\n",
				name, ns, host, name, digest, dep)
		}
	}
	files["index.yaml"] = idx.String()
	writeFiles(b, dir, files)
	o := Options{Fetcher: &Fetcher{CacheDir: b.TempDir()}, Timeout: 3 * time.Minute}
	once := func() (*Plan, time.Duration) {
		start := time.Now()
		ix, err := Load(filepath.Join(dir, "index.yaml"))
		if err != nil {
			b.Fatal(err)
		}
		tg, err := NewTarget(ctx, c.Name, "", c.Config)
		if err != nil {
			b.Fatal(err)
		}
		p, err := Apply(ctx, tg, ix, o)
		if err != nil {
			b.Fatal(err)
		}
		return p, time.Since(start)
	}
	first, d := once()
	if first.Changes() != 10 {
		b.Fatalf("first apply made %d changes, want 10", first.Changes())
	}
	b.Logf("first apply of 10 add-ons (install, wait ready): %s", d.Round(time.Millisecond))

	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, d := once()
		if p.Changes() != 0 {
			b.Fatalf("no-change apply planned %d changes", p.Changes())
		}
		times = append(times, d)
	}
	b.StopTimer()
	med := median(times)
	b.ReportMetric(float64(med.Microseconds())/1000, "ms/no-change-apply")
	fmt.Printf("no-change apply, 10 add-ons: median %s over %d runs (target <= 1s)\n", med.Round(time.Millisecond), len(times))

	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		fmt.Println("peer: kubectl is not on PATH; no ratio")
		return
	}
	var all bytes.Buffer
	for _, s := range first.Steps {
		for _, obj := range s.Rendered.Objects {
			y, _ := yaml.Marshal(obj.Object)
			all.WriteString("---\n")
			all.Write(y)
		}
	}
	f := filepath.Join(b.TempDir(), "all.yaml")
	if err := os.WriteFile(f, all.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	var peer []time.Duration
	for i := 0; i < 5; i++ {
		start := time.Now()
		out, err := exec.Command(kubectl, "--kubeconfig", c.Kubeconfig, "apply", "--server-side", "--field-manager", FieldManager, "-f", f).CombinedOutput()
		if err != nil {
			b.Fatalf("kubectl apply: %v\n%s", err, out)
		}
		peer = append(peer, time.Since(start))
	}
	pm := median(peer)
	fmt.Printf("peer: kubectl apply --server-side of the same %d objects: median %s; nuv/kubectl = %.2f\n",
		strings.Count(all.String(), "---\n"), pm.Round(time.Millisecond), float64(med)/float64(pm))
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
