package addons

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/kobj"
	"github.com/nuv-dev/nuv/internal/kobj/kustomized"
	"github.com/nuv-dev/nuv/internal/yamlerr"
)

// Rendered is an add-on's desired objects and their hash.
type Rendered struct {
	Addon   *Addon
	Objects []*unstructured.Unstructured
	// Hash is "sha256:<hex>" over the objects (canonical JSON, in order) and the add-on's namespace.
	Hash string
}

// Fetcher gets remote sources: manifest URLs and Helm charts. Content pinned by digest is cached
// under CacheDir (content-addressed), so it is downloaded once.
type Fetcher struct {
	// CacheDir holds downloaded content by digest; "" disables the cache.
	CacheDir string
	// HTTP is the client for URLs and chart repositories (default: 60 s timeout).
	HTTP *http.Client
	// PlainHTTP lists OCI registry hosts reached over plain HTTP; loopback hosts always are.
	PlainHTTP []string
}

func (f *Fetcher) client() *http.Client {
	if f.HTTP != nil {
		return f.HTTP
	}
	return &http.Client{Timeout: 60 * time.Second}
}

// render builds the objects of a (without defaulting namespaces: that needs the cluster).
func (f *Fetcher) render(ctx context.Context, a *Addon, kubeVersion string) (*Rendered, error) {
	var objs []*unstructured.Unstructured
	var err error
	switch a.SourceKind() {
	case "path":
		objs, err = readManifestPath(a.resolve(a.Source.Path))
	case "kustomize":
		objs, err = kustomize(a.resolve(a.Source.Kustomize))
	case "url":
		var data []byte
		data, err = f.fetchURL(ctx, a.Source.URL, a.Source.Digest)
		if err == nil {
			objs, err = decodeObjects(a.Source.URL, data)
		}
	case "chart":
		objs, err = f.renderChart(ctx, a, kubeVersion)
	}
	if err != nil {
		return nil, fmt.Errorf("add-on %s (%s): %w", a.Name, a.at(), err)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("add-on %s (%s): its source %s yields no objects", a.Name, a.at(), a.SourceString())
	}
	return &Rendered{Addon: a, Objects: objs, Hash: hashObjects(a.Namespace, objs)}, nil
}

func (a *Addon) resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.Dir, p)
}

func hashObjects(ns string, objs []*unstructured.Unstructured) string {
	h := sha256.New()
	fmt.Fprintf(h, "namespace=%s\n", ns)
	for _, o := range objs {
		b, _ := json.Marshal(o.Object) // map keys are sorted: canonical
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// readManifestPath reads one manifest file, or every *.yaml, *.yml and *.json under a directory
// (recursively, in path order).
func readManifestPath(p string) ([]*unstructured.Unstructured, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("manifests: %w", err)
	}
	var files []string
	if !st.IsDir() {
		files = []string{p}
	} else {
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch strings.ToLower(filepath.Ext(path)) {
			case ".yaml", ".yml", ".json":
				if !d.IsDir() {
					files = append(files, path)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("manifests %s: %w", p, err)
		}
		sort.Strings(files)
	}
	var objs []*unstructured.Unstructured
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("manifests: %w", err)
		}
		o, err := decodeObjects(file, data)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o...)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("manifests %s: no objects", p)
	}
	return objs, nil
}

// kustomize builds the kustomization in dir with kustomize's Go API (krusty).
func kustomize(dir string) ([]*unstructured.Unstructured, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("kustomization: %w", err)
	}
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	return kustomized.Objects(rm, dir)
}

// decodeObjects splits a multi-document YAML (or JSON) file into objects; file names it in errors.
// A List is flattened into its items.
func decodeObjects(file string, data []byte) ([]*unstructured.Unstructured, error) {
	if err := yamlerr.Syntax(file, data); err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for i, doc := range yamlerr.Split(data) {
		at := fmt.Sprintf("%s:%d: document %d", file, doc.Line, i+1)
		js, err := yaml.YAMLToJSON(doc.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if t := strings.TrimSpace(string(js)); t == "null" || t == "{}" || t == "" {
			continue
		}
		u, err := kobj.FromJSON(js)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if u.IsList() {
			l, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", at, err)
			}
			for j := range l.Items {
				objs = append(objs, &l.Items[j])
			}
			continue
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s has no apiVersion/kind", at)
		}
		if u.GetName() == "" {
			return nil, fmt.Errorf("%s (%s) has no metadata.name", at, u.GetKind())
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// DigestError is content whose digest is not the pinned one.
type DigestError struct {
	What, Want, Got string
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("%s: digest mismatch: the index pins %s, the content is %s; refusing it", e.What, e.Want, e.Got)
}

func digestOf(data []byte) string {
	s := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(s[:])
}

func verify(what string, data []byte, want string) error {
	if want == "" {
		return nil
	}
	if got := digestOf(data); got != want {
		return &DigestError{What: what, Want: want, Got: got}
	}
	return nil
}

func (f *Fetcher) cachePath(digest string) string {
	if f.CacheDir == "" || digest == "" {
		return ""
	}
	return filepath.Join(f.CacheDir, strings.ReplaceAll(digest, ":", "-"))
}

// cached returns the content of digest from the cache, verified, or nil.
func (f *Fetcher) cached(digest string) []byte {
	p := f.cachePath(digest)
	if p == "" {
		return nil
	}
	data, err := os.ReadFile(p)
	if err != nil || digestOf(data) != digest {
		return nil
	}
	return data
}

func (f *Fetcher) store(digest string, data []byte) {
	if p := f.cachePath(digest); p != "" {
		_ = fsutil.WriteFileAtomic(p, data, 0o644) // a cache: a failed write only costs a download
	}
}

// fetchURL downloads url (or takes it from the cache) and checks it against digest.
func (f *Fetcher) fetchURL(ctx context.Context, url, digest string) ([]byte, error) {
	if data := f.cached(digest); data != nil {
		return data, nil
	}
	data, err := f.get(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := verify(url, data, digest); err != nil {
		return nil, err
	}
	f.store(digest, data)
	return data, nil
}

func (f *Fetcher) get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download %s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("download %s: %w", url, err)
	}
	return data, nil
}
