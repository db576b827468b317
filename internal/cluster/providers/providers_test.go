package providers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// TestSectionJSONShape: every provider's section is written in records and saved plans exactly as
// before sections became the providers' own (the shape the typed fields of spec.Spec had), and a
// record written that way reads back and writes out byte for byte (saved plans digest it).
func TestSectionJSONShape(t *testing.T) {
	head := "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n"
	for _, tc := range []struct{ name, yaml, json string }{
		{"local", "  provider: local\n  local: {durability: safe, flavor: eks}\n",
			`{"provider":"local","controlPlane":{},"networking":{},"local":{"flavor":"eks","durability":"safe"}}`},
		{"kind", "  provider: kind\n  kind: {ports: [{protocol: TCP, containerPort: 80}], image: img}\n",
			`{"provider":"kind","controlPlane":{},"networking":{},"kind":{"image":"img","ports":[{"containerPort":80,"protocol":"TCP"}]}}`},
		{"gke", "  provider: gke\n  gke: {releaseChannel: STABLE, location: us-central1-a, project: my-project}\n",
			`{"provider":"gke","controlPlane":{},"networking":{},"gke":{"project":"my-project","location":"us-central1-a","releaseChannel":"STABLE"}}`},
		{"gke without project", "  provider: gke\n  region: us-central1\n  gke: {releaseChannel: STABLE}\n",
			`{"provider":"gke","region":"us-central1","controlPlane":{},"networking":{},"gke":{"project":"","location":"","releaseChannel":"STABLE"}}`},
		{"eks", "  provider: eks\n  region: us-east-1\n  eks: {nat: perAZ, endpointAccess: {public: true}}\n",
			`{"provider":"eks","region":"us-east-1","controlPlane":{},"networking":{},"eks":{"endpointAccess":{"public":true},"nat":"perAZ"}}`},
		{"aks", "  provider: aks\n  region: eastus\n  aks: {skuTier: Free, networkPlugin: azure}\n",
			`{"provider":"aks","region":"eastus","controlPlane":{},"networking":{},"aks":{"networkPlugin":"azure","skuTier":"Free"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := Registry().Decoder().Decode("c.yaml", []byte(head+tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(cs[0].Spec)
			if err != nil || strings.TrimSpace(string(got)) != tc.json {
				t.Fatalf("JSON form %s (%v), want %s", got, err, tc.json)
			}
			var back spec.Spec
			if err := json.Unmarshal([]byte(tc.json), &back); err != nil {
				t.Fatal(err)
			}
			again, _ := json.Marshal(back)
			if string(again) != tc.json {
				t.Fatalf("read back and written: %s, want %s", again, tc.json)
			}
		})
	}
}

// TestDocsListEveryProvider: docs/providers.md lists every registered provider with its one-line
// description, and no other.
func TestDocsListEveryProvider(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "providers.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "| `") {
			rows = append(rows, l)
		}
	}
	var want []string
	for _, reg := range Registry().All() {
		want = append(want, fmt.Sprintf("| `%s` | %s |", reg.Name, reg.Short))
	}
	if !slices.Equal(rows, want) {
		t.Errorf("docs/providers.md lists\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}
