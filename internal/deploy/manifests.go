package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/nuv-dev/nuv/internal/deploy/rendercache"
	"github.com/nuv-dev/nuv/internal/kobj"
	"github.com/nuv-dev/nuv/internal/kobj/kustomized"
	"github.com/nuv-dev/nuv/internal/yamlerr"
)

// operatorDir is the operator's source directory: $NUV_OPERATOR_DIR, else <source>/operator (the
// source is the project unless Options.Source names another checkout).
func operatorDir(o Options) string { return rendercache.OperatorDir(o.source(), o.Getenv) }

// imageChoice is the operator image nuv deploys and where it came from.
type imageChoice struct {
	Ref    string // full reference
	Source string // "MY_OPERATOR_IMAGE", "build-and-load", "default"
	Name   string // the image name in the kustomization the override replaces
}

// chooseImage picks the operator image: MY_OPERATOR_IMAGE[:TAG]; else the reference that
// `nuv image load` (build-and-load) recorded for this cluster in .nuv/images/<cluster>.ref; else
// the default of config/default/kustomization.yaml (its first images: entry).
func chooseImage(o Options, configDir, clusterName string) (imageChoice, error) {
	def, err := defaultImage(configDir)
	if err != nil {
		return imageChoice{}, err
	}
	if img := o.Getenv("MY_OPERATOR_IMAGE"); img != "" {
		name, tag, digest := splitRef(img)
		if t := o.Getenv("TAG"); t != "" && digest == "" {
			tag = t
		}
		if tag == "" && digest == "" {
			tag = "latest"
		}
		return imageChoice{Ref: joinRef(name, tag, digest), Source: "MY_OPERATOR_IMAGE", Name: def.Name}, nil
	}
	if clusterName != "" {
		refFile := rendercache.ImageRefFile(o.Project, clusterName)
		if b, err := os.ReadFile(refFile); err == nil && strings.TrimSpace(string(b)) != "" {
			return imageChoice{Ref: strings.TrimSpace(string(b)), Source: "build-and-load (" + refFile + ")", Name: def.Name}, nil
		}
	}
	return def, nil
}

// defaultImage reads the first images: entry of the kustomization in configDir/default.
func defaultImage(configDir string) (imageChoice, error) {
	path := filepath.Join(configDir, "default", "kustomization.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return imageChoice{}, fmt.Errorf("operator kustomization: %w", err)
	}
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return imageChoice{}, fmt.Errorf("operator kustomization %s: %w", path, err)
	}
	if len(k.Images) == 0 {
		return imageChoice{}, fmt.Errorf("operator kustomization %s has no images: entry naming the operator image", path)
	}
	im := k.Images[0]
	name := im.NewName
	if name == "" {
		name = im.Name
	}
	tag := im.NewTag
	if tag == "" && im.Digest == "" {
		tag = "latest"
	}
	return imageChoice{Ref: joinRef(name, tag, im.Digest), Source: "default", Name: name}, nil
}

// splitRef splits an image reference into name, tag and digest.
func splitRef(ref string) (name, tag, digest string) {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, digest = ref[:i], ref[i+1:]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref, tag = ref[:i], ref[i+1:]
	}
	return ref, tag, digest
}

func joinRef(name, tag, digest string) string {
	switch {
	case digest != "":
		return name + "@" + digest
	case tag != "":
		return name + ":" + tag
	}
	return name
}

// buildOperator runs kustomize (krusty, in memory) over configDir/default with an overlay that sets
// the operator image, and returns the objects in kustomize's apply order.
func buildOperator(configDir string, img imageChoice) ([]*unstructured.Unstructured, error) {
	mem := filesys.MakeFsInMemory()
	err := rendercache.EachFile(configDir, func(rel string, data []byte) error {
		return mem.WriteFile("/config/"+rel, data)
	})
	if err != nil {
		return nil, fmt.Errorf("read operator manifests %s: %w", configDir, err)
	}
	name, tag, digest := splitRef(img.Ref)
	overlay := types.Kustomization{
		Resources: []string{"../config/default"},
		Images:    []types.Image{{Name: img.Name, NewName: name, NewTag: tag, Digest: digest}},
	}
	data, err := yaml.Marshal(overlay)
	if err != nil {
		return nil, err
	}
	if err := mem.WriteFile("/overlay/kustomization.yaml", data); err != nil {
		return nil, err
	}
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(mem, "/overlay")
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", filepath.Join(configDir, "default"), err)
	}
	objs, err := kustomized.Objects(rm, configDir)
	if err != nil {
		return nil, err
	}
	sortForApply(objs)
	return objs, nil
}

// decodeObjects splits a multi-document YAML file into objects; file names it in errors, each
// with the line of the fault (syntax) or of the document concerned.
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
		if t := strings.TrimSpace(string(js)); t == "null" || t == "{}" {
			continue
		}
		if !strings.HasPrefix(strings.TrimSpace(string(js)), "{") {
			return nil, fmt.Errorf("%s: want a Kubernetes object (a mapping with apiVersion, kind and metadata), got %s", at, describeJSON(js))
		}
		u, err := kobj.FromJSON(js)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("%s has no apiVersion/kind", at)
		}
		if u.GetName() == "" {
			return nil, fmt.Errorf("%s (%s) has no metadata.name", at, u.GetKind())
		}
		objs = append(objs, u)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s: no objects (want at least one Kubernetes object, such as a Whisk)", file)
	}
	return objs, nil
}

// describeJSON names a JSON value that is not an object: "a list" or the value.
func describeJSON(js []byte) string {
	t := strings.TrimSpace(string(js))
	if strings.HasPrefix(t, "[") {
		return "a list"
	}
	if len(t) > 40 {
		t = t[:40] + "..."
	}
	return t
}
