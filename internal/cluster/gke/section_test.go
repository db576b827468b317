package gke

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

func decodeOne(t *testing.T, body string) *spec.Cluster {
	t.Helper()
	cs, err := spec.Decode("c.yaml", []byte("apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n  provider: gke\n"+body))
	if err != nil {
		t.Fatal(err)
	}
	return cs[0]
}

// TestPlacement: a GKE cluster is placed by spec.region and spec.zones as every provider's is (a
// single zone: zonal; a region, or a highly available control plane: regional), spec.gke.location
// keeps working, and the project comes from spec.gke.project or the environment as gcloud's does.
func TestPlacement(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "sa.json")
	if err := os.WriteFile(key, []byte(`{"type":"service_account","project_id":"from-the-key"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body             string
		env                    map[string]string
		project, location, err string
	}{
		{"region, like aks", "  region: us-central1\n  nodeGroups: [{name: a}]\n", map[string]string{"CLOUDSDK_CORE_PROJECT": "my-project"}, "my-project", "us-central1", ""},
		{"one zone: zonal", "  zones: [us-central1-a]\n", map[string]string{"GOOGLE_CLOUD_PROJECT": "my-project"}, "my-project", "us-central1-a", ""},
		{"region and one zone: zonal", "  region: us-central1\n  zones: [us-central1-b]\n", map[string]string{"GOOGLE_CLOUD_PROJECT": "my-project"}, "my-project", "us-central1-b", ""},
		{"zones: regional", "  zones: [us-central1-a, us-central1-b]\n", map[string]string{"GOOGLE_CLOUD_PROJECT": "my-project"}, "my-project", "us-central1", ""},
		{"HA in one zone: regional", "  controlPlane: {count: 3}\n  zones: [europe-west1-b]\n", map[string]string{"GOOGLE_CLOUD_PROJECT": "my-project"}, "my-project", "europe-west1", ""},
		{"core project first", "  region: us-central1\n", map[string]string{"CLOUDSDK_CORE_PROJECT": "core-project", "GOOGLE_CLOUD_PROJECT": "other-project"}, "core-project", "us-central1", ""},
		{"project of the credentials", "  region: us-central1\n", map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": key}, "from-the-key", "us-central1", ""},
		{"section wins", "  region: us-central1\n  gke: {project: spec-project, location: us-central1-c}\n", map[string]string{"CLOUDSDK_CORE_PROJECT": "env-project"}, "spec-project", "us-central1-c", ""},
		{"old form", "  gke: {project: my-project, location: us-central1-a}\n", nil, "my-project", "us-central1-a", ""},
		{"no project", "  region: us-central1\n", nil, "", "us-central1", "spec.gke.project: required: the Google Cloud project (or set CLOUDSDK_CORE_PROJECT"},
		{"no place", "  nodeGroups: [{name: a}]\n", map[string]string{"GOOGLE_CLOUD_PROJECT": "my-project"}, "my-project", "", "spec.region: required: the region (us-central1: a regional cluster) or one zone in spec.zones"},
		{"region and location disagree", "  region: europe-west1\n  gke: {project: my-project, location: us-central1-a}\n", nil, "my-project", "us-central1-a", `spec.region: "europe-west1" differs from the region of spec.gke.location us-central1-a`},
		{"zone as region", "  region: us-central1-a\n", map[string]string{"GOOGLE_CLOUD_PROJECT": "my-project"}, "my-project", "us-central1-a", `spec.region: "us-central1-a" is not a region`},
		{"zonal HA", "  controlPlane: {count: 3}\n  gke: {project: my-project, location: us-central1-a}\n", nil, "my-project", "us-central1-a", "spec.controlPlane.count: 3: a zonal cluster (spec.gke.location us-central1-a)"},
		{"zone outside the region", "  region: us-central1\n  zones: [europe-west1-b, europe-west1-c]\n", map[string]string{"GOOGLE_CLOUD_PROJECT": "my-project"}, "my-project", "us-central1", "spec.zones[0]: zone europe-west1-b is not in region us-central1 of spec.region"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Provider{Getenv: func(k string) string { return tc.env[k] }}
			c := decodeOne(t, tc.body)
			s := p.section(c)
			if s.Project != tc.project || s.Location != tc.location {
				t.Errorf("placed in project %q, location %q; want %q, %q", s.Project, s.Location, tc.project, tc.location)
			}
			var got []string
			for _, e := range p.Validate(c) {
				got = append(got, e.Error())
			}
			all := strings.Join(got, "\n")
			if (tc.err == "") != (all == "") || !strings.Contains(all, tc.err) {
				t.Errorf("validation: got %q, want %q", all, tc.err)
			}
		})
	}
}

// TestPlacementPlansAlike: a spec written like the AKS one (region, zones, the project from the
// environment) asks for the very resources the spec.gke form does, so existing clusters see no
// change when their spec is rewritten either way.
func TestPlacementPlansAlike(t *testing.T) {
	p := &Provider{Project: t.TempDir(), Getenv: func(k string) string {
		return map[string]string{"CLOUDSDK_CORE_PROJECT": "my-project"}[k]
	}}
	for _, pair := range [][2]string{
		{"  region: us-central1\n  nodeGroups: [{name: a, count: 2}]\n", "  gke: {project: my-project, location: us-central1}\n  nodeGroups: [{name: a, count: 2}]\n"},
		{"  zones: [us-central1-a]\n  nodeGroups: [{name: a}]\n", "  zones: [us-central1-a]\n  gke: {project: my-project, location: us-central1-a}\n  nodeGroups: [{name: a}]\n"},
	} {
		var desired [2]any
		for i, body := range pair {
			c := decodeOne(t, body)
			if errs := p.Validate(c); len(errs) > 0 {
				t.Fatalf("%q: %v", body, errs)
			}
			d, err := p.Desired(c)
			if err != nil {
				t.Fatal(err)
			}
			desired[i] = d
		}
		if !reflect.DeepEqual(desired[0], desired[1]) {
			t.Errorf("the two forms differ:\n%+v\n%+v", desired[0], desired[1])
		}
	}
}
