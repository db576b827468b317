package addons

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"path"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// renderChart fetches the add-on's chart at its pinned version and renders it with the Helm SDK
// (no helm binary): CRDs of crds/ first, then the templates in name order. Test hooks are left out;
// the release is named after the add-on, in the add-on's namespace (default "default").
func (f *Fetcher) renderChart(ctx context.Context, a *Addon, kubeVersion string) ([]*unstructured.Unstructured, error) {
	c := a.Source.Chart
	archive, err := f.fetchChart(ctx, c, a.Source.Digest)
	if err != nil {
		return nil, err
	}
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("chart %s %s: %w", c.Name, c.Version, err)
	}
	if ch.Metadata.Version != strings.TrimPrefix(c.Version, "v") && ch.Metadata.Version != c.Version {
		return nil, fmt.Errorf("chart %s: the archive is version %s, the index pins %s", c.Name, ch.Metadata.Version, c.Version)
	}
	vals := chartutil.CoalesceTables(copyValues(a.StackValues), copyValues(c.Values))
	ns := a.Namespace
	if ns == "" {
		ns = "default"
	}
	caps := chartutil.DefaultCapabilities.Copy()
	if kubeVersion != "" {
		if kv, err := chartutil.ParseKubeVersion(kubeVersion); err == nil {
			caps.KubeVersion = *kv
		}
	}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: a.Name, Namespace: ns, Revision: 1, IsInstall: true}, caps)
	if err != nil {
		return nil, fmt.Errorf("chart %s %s values: %w", c.Name, c.Version, err)
	}
	files, err := engine.Render(ch, top)
	if err != nil {
		return nil, fmt.Errorf("render chart %s %s: %w", c.Name, c.Version, err)
	}
	var objs []*unstructured.Unstructured
	for _, crd := range ch.CRDObjects() {
		o, err := decodeObjects(crd.Filename, crd.File.Data)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.Name, err)
		}
		objs = append(objs, o...)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		base := path.Base(n)
		if strings.HasPrefix(base, "_") || strings.HasSuffix(base, ".txt") || strings.TrimSpace(files[n]) == "" {
			continue
		}
		o, err := decodeObjects(n, []byte(files[n]))
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.Name, err)
		}
		for _, obj := range o {
			if strings.Contains(obj.GetAnnotations()["helm.sh/hook"], "test") {
				continue
			}
			objs = append(objs, obj)
		}
	}
	return objs, nil
}

// copyValues deep-copies a values tree (CoalesceTables writes into its arguments).
func copyValues(v map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, x := range v {
		out[k] = copyValue(x)
	}
	return out
}

func copyValue(x any) any {
	switch t := x.(type) {
	case map[string]any:
		return copyValues(t)
	case []any:
		s := make([]any, len(t))
		for i := range t {
			s[i] = copyValue(t[i])
		}
		return s
	}
	return x
}

// fetchChart returns the chart archive (.tgz): from the cache when digest pins it, else from the
// OCI registry or the chart repository, checked against digest (and, for a repository, against the
// digest its index lists).
func (f *Fetcher) fetchChart(ctx context.Context, c *Chart, digest string) ([]byte, error) {
	if data := f.cached(digest); data != nil {
		return data, nil
	}
	var data []byte
	var err error
	what := fmt.Sprintf("chart %s %s", c.Name, c.Version)
	if strings.HasPrefix(c.Repo, "oci://") {
		data, err = f.pullOCI(c)
	} else {
		data, err = f.fromRepo(ctx, c)
	}
	if err != nil {
		return nil, err
	}
	if err := verify(what, data, digest); err != nil {
		return nil, err
	}
	f.store(digest, data)
	return data, nil
}

// OCIRef is the reference of an OCI chart: <repo without oci://>/<name>:<version>.
func OCIRef(c *Chart) string {
	return strings.TrimSuffix(strings.TrimPrefix(c.Repo, "oci://"), "/") + "/" + c.Name + ":" + c.Version
}

func (f *Fetcher) pullOCI(c *Chart) ([]byte, error) {
	ref := OCIRef(c)
	opts := []registry.ClientOption{}
	if f.plainHTTP(ref) {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	rc, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("helm registry client: %w", err)
	}
	res, err := rc.Pull(ref, registry.PullOptWithChart(true))
	if err != nil {
		return nil, fmt.Errorf("pull chart oci://%s: %w", ref, err)
	}
	if res.Chart == nil || len(res.Chart.Data) == 0 {
		return nil, fmt.Errorf("pull chart oci://%s: no chart layer", ref)
	}
	return res.Chart.Data, nil
}

// plainHTTP tells whether the registry of ref is reached over plain HTTP: loopback hosts and the
// hosts listed in PlainHTTP.
func (f *Fetcher) plainHTTP(ref string) bool {
	host, _, _ := strings.Cut(ref, "/")
	for _, h := range f.PlainHTTP {
		if h == host {
			return true
		}
	}
	hn := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		hn = h
	}
	if hn == "localhost" {
		return true
	}
	ip := net.ParseIP(hn)
	return ip != nil && ip.IsLoopback()
}

// fromRepo downloads the chart from a chart repository: its index.yaml names the archive's URL
// and digest.
func (f *Fetcher) fromRepo(ctx context.Context, c *Chart) ([]byte, error) {
	base := strings.TrimSuffix(c.Repo, "/")
	data, err := f.get(ctx, base+"/index.yaml")
	if err != nil {
		return nil, fmt.Errorf("chart repository %s: %w", c.Repo, err)
	}
	var idx repo.IndexFile
	if err := yaml.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("chart repository %s: index.yaml: %w", c.Repo, err)
	}
	var cv *repo.ChartVersion
	for _, v := range idx.Entries[c.Name] {
		if v != nil && v.Metadata != nil && (v.Version == c.Version || v.Version == strings.TrimPrefix(c.Version, "v")) {
			cv = v
			break
		}
	}
	if cv == nil {
		return nil, fmt.Errorf("chart repository %s has no chart %s at version %s", c.Repo, c.Name, c.Version)
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("chart repository %s: chart %s %s lists no URL", c.Repo, c.Name, c.Version)
	}
	u, err := url.Parse(cv.URLs[0])
	if err != nil {
		return nil, fmt.Errorf("chart repository %s: chart %s %s: %w", c.Repo, c.Name, c.Version, err)
	}
	if !u.IsAbs() {
		b, err := url.Parse(base + "/")
		if err != nil {
			return nil, err
		}
		u = b.ResolveReference(u)
	}
	archive, err := f.get(ctx, u.String())
	if err != nil {
		return nil, err
	}
	if cv.Digest != "" {
		want := cv.Digest
		if !strings.HasPrefix(want, "sha256:") {
			want = "sha256:" + want
		}
		if err := verify(fmt.Sprintf("chart %s %s (digest listed by %s/index.yaml)", c.Name, c.Version, base), archive, want); err != nil {
			return nil, err
		}
	}
	return archive, nil
}
