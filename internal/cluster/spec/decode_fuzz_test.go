package spec

import (
	"strings"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the cluster spec decoder (what `nuv cluster apply -f`
// reads): it must never panic, must name the file in every error, and what it accepts is a
// non-empty list of named clusters.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: dev\nspec:\n  provider: local\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("spec: [1, {a: *x}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := Decode("spec.yaml", data)
		if err != nil {
			if !strings.Contains(err.Error(), "spec.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(cs) == 0 {
			t.Fatal("no error and no cluster")
		}
		for _, c := range cs {
			if c == nil || c.Metadata.Name == "" {
				t.Fatalf("accepted a cluster without a name: %+v", c)
			}
		}
	})
}
