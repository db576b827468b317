package deploy

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestOperatorManifestsGolden pins what `nuv operator` applies (image overridden), so a change to
// operator/config shows up in review as a diff of testdata/operator.golden.yaml.
func TestOperatorManifestsGolden(t *testing.T) {
	objs, err := buildOperator(filepath.Join(repoRoot(t), "operator", "config"), imageChoice{Ref: "registry.example/whisk-operator:v1", Name: "ghcr.io/nuv-dev/whisk-operator"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	golden := filepath.Join("testdata", "operator.golden.yaml")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestOperatorManifestsGolden -update)", err)
	}
	if string(want) != b.String() {
		t.Errorf("operator manifests differ from %s (go test -run TestOperatorManifestsGolden -update rewrites it):\n%s", golden, b.String())
	}
}
