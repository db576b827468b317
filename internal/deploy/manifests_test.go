package deploy

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestChooseImage(t *testing.T) {
	root := repoRoot(t)
	cfg := filepath.Join(root, "operator", "config")
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
		src  string
	}{
		{"default", nil, "ghcr.io/nuv-dev/whisk-operator:latest", "default"},
		{"image and tag", map[string]string{"MY_OPERATOR_IMAGE": "reg.example:5000/me/op", "TAG": "v1"}, "reg.example:5000/me/op:v1", "MY_OPERATOR_IMAGE"},
		{"image only", map[string]string{"MY_OPERATOR_IMAGE": "reg.example:5000/me/op"}, "reg.example:5000/me/op:latest", "MY_OPERATOR_IMAGE"},
		{"tag wins over the image's", map[string]string{"MY_OPERATOR_IMAGE": "me/op:old", "TAG": "new"}, "me/op:new", "MY_OPERATOR_IMAGE"},
		{"digest kept", map[string]string{"MY_OPERATOR_IMAGE": "me/op@sha256:abc", "TAG": "x"}, "me/op@sha256:abc", "MY_OPERATOR_IMAGE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Project: t.TempDir(), Getenv: envOf(tc.env)}
			got, err := chooseImage(o, cfg, "dev")
			if err != nil {
				t.Fatal(err)
			}
			if got.Ref != tc.want || got.Source != tc.src {
				t.Errorf("got %q from %s, want %q from %s", got.Ref, got.Source, tc.want, tc.src)
			}
		})
	}
}

func TestBuildOperatorSetsImageAndNamespace(t *testing.T) {
	cfg := filepath.Join(repoRoot(t), "operator", "config")
	objs, err := buildOperator(cfg, imageChoice{Ref: "localhost:5000/op:dev", Name: "ghcr.io/nuv-dev/whisk-operator"})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	var order []string
	for _, o := range objs {
		kinds[o.GetKind()] = true
		order = append(order, o.GetKind())
		if o.GetLabels()["app.kubernetes.io/part-of"] != "whisk-operator" {
			t.Errorf("%s %s lacks the part-of label", o.GetKind(), o.GetName())
		}
		if o.GetKind() == "Deployment" {
			cs, _, _ := unstructuredContainers(o)
			if len(cs) != 1 || cs[0] != "localhost:5000/op:dev" {
				t.Errorf("deployment images = %v", cs)
			}
			if o.GetNamespace() != "nuv-system" {
				t.Errorf("deployment namespace = %q", o.GetNamespace())
			}
		}
	}
	for _, k := range []string{"Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment"} {
		if !kinds[k] {
			t.Errorf("no %s in the build", k)
		}
	}
	if order[0] != "Namespace" || order[len(order)-1] != "Deployment" {
		t.Errorf("apply order = %v", order)
	}
}

func TestDecodeObjects(t *testing.T) {
	objs, err := decodeObjects("x.yaml", []byte("# c\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"))
	if err != nil || len(objs) != 2 || objs[1].GetName() != "b" {
		t.Fatalf("got %v %v", objs, err)
	}
	for _, bad := range []string{"kind: X\n", "apiVersion: v1\nkind: ConfigMap\n", ": : :\n", ""} {
		if _, err := decodeObjects("bad.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
			t.Errorf("%q: error %v does not name the file", bad, err)
		}
	}
}

func TestChooseImageUsesTheLoadedReference(t *testing.T) {
	cfg := filepath.Join(repoRoot(t), "operator", "config")
	project := t.TempDir()
	ref := filepath.Join(project, ".nuv", "images", "dev.ref")
	if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ref, []byte("127.0.0.1:5000/whisk-operator@sha256:0123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Project: project, Getenv: envOf(nil)}
	got, err := chooseImage(o, cfg, "dev")
	if err != nil || got.Ref != "127.0.0.1:5000/whisk-operator@sha256:0123" || !strings.HasPrefix(got.Source, "build-and-load") {
		t.Errorf("got %+v %v", got, err)
	}
	if got, _ := chooseImage(o, cfg, "other"); got.Source != "default" {
		t.Errorf("another cluster used dev's reference: %+v", got)
	}
	o.Getenv = envOf(map[string]string{"MY_OPERATOR_IMAGE": "me/op"})
	if got, _ := chooseImage(o, cfg, "dev"); got.Source != "MY_OPERATOR_IMAGE" {
		t.Errorf("MY_OPERATOR_IMAGE does not win: %+v", got)
	}
}
