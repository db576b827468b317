package gke_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/container/apiv1/containerpb"

	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
)

// TestValidate: the spec's GKE rules, each refusal with its field path (offline: no API call).
func TestValidate(t *testing.T) {
	base := "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n  provider: gke\n"
	for _, tc := range []struct{ name, body, want string }{
		{"ok zonal", "  gke: {project: my-project, location: us-central1-a}\n  nodeGroups: [{name: a, count: 1, instanceType: n2-standard-8}]\n", ""},
		{"ok regional HA", "  controlPlane: {count: 3}\n  zones: [us-central1-a, us-central1-b]\n  gke: {project: my-project, location: us-central1, releaseChannel: STABLE, nodePools: [{name: a, zones: [us-central1-b]}]}\n  nodeGroups: [{name: a, min: 1, max: 3}]\n", ""},
		{"no place", "  nodeGroups: [{name: a}]\n", "spec.region: required"},
		{"no project", "  gke: {location: us-central1-a}\n", "spec.gke.project: required"},
		{"bad project", "  gke: {project: X, location: us-central1-a}\n", `spec.gke.project: "X" is not a project id`},
		{"bad location", "  gke: {project: my-project, location: moon}\n", `spec.gke.location: "moon" is neither a zone`},
		{"zonal HA", "  controlPlane: {count: 3}\n  gke: {project: my-project, location: us-central1-a}\n", "spec.controlPlane.count: 3: a zonal cluster"},
		{"zone elsewhere", "  zones: [europe-west1-b]\n  gke: {project: my-project, location: us-central1}\n", "spec.zones[0]: zone europe-west1-b is not in region us-central1"},
		{"channel", "  gke: {project: my-project, location: us-central1-a, releaseChannel: FAST}\n", `spec.gke.releaseChannel: "FAST": want RAPID`},
		{"machine type", "  gke: {project: my-project, location: us-central1-a}\n  nodeGroups: [{name: a, instanceType: e2-standard-3}]\n", `spec.nodeGroups[0].instanceType: machine type "e2-standard-3" does not exist: e2-standard comes with 2, 4, 8, 16, 32 vCPUs`},
		{"machine series", "  gke: {project: my-project, location: us-central1-a}\n  nodeGroups: [{name: a, instanceType: m5.large}]\n", `spec.nodeGroups[0].instanceType: machine type "m5.large" is not a Compute Engine machine type`},
		{"half autoscaling", "  gke: {project: my-project, location: us-central1-a}\n  nodeGroups: [{name: a, min: 1}]\n", "spec.nodeGroups[0].max: GKE autoscaling needs both min and max"},
		{"reserved label", "  gke: {project: my-project, location: us-central1-a}\n  nodeGroups: [{name: a, labels: {cloud.google.com/gke-nodepool: x}}]\n", "spec.nodeGroups[0].labels.cloud.google.com/gke-nodepool: label cloud.google.com/gke-nodepool is GKE's own"},
		{"bootstrap name", "  gke: {project: my-project, location: us-central1-a}\n  nodeGroups: [{name: nuv-bootstrap}]\n", "spec.nodeGroups[0].name: nuv-bootstrap is the pool nuv creates clusters with"},
		{"unknown pool", "  gke: {project: my-project, location: us-central1-a, nodePools: [{name: b}]}\n  nodeGroups: [{name: a}]\n", `spec.gke.nodePools[0].name: "b" is not a node group`},
		{"pool zone outside", "  gke: {project: my-project, location: us-central1-a, nodePools: [{name: a, zones: [us-central1-b]}]}\n  nodeGroups: [{name: a}]\n", "spec.gke.nodePools[0].zones[0]: zone us-central1-b is not one of the cluster's zones"},
		{"tags", "  tags: {Team: x}\n  gke: {project: my-project, location: us-central1-a}\n", "spec.tags.Team: GKE resource labels need lower-case"},
		{"registry", "  registry: true\n  gke: {project: my-project, location: us-central1-a}\n", "spec.registry: a GKE cluster cannot reach nuv's loopback registry"},
		{"karpenter", "  gke: {project: my-project, location: us-central1-a}\n  nodeGroups: [{name: a, manager: karpenter}]\n", "spec.nodeGroups[0].manager: karpenter runs on EKS only"},
	} {
		cs, err := spec.Decode("c.yaml", []byte(base+tc.body))
		if err != nil {
			if tc.want == "" || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: decode: %v", tc.name, err)
			}
			continue
		}
		p := &gke.Provider{}
		var got []string
		for _, e := range p.Validate(cs[0]) {
			got = append(got, e.Error())
		}
		all := strings.Join(got, "\n")
		if (tc.want == "") != (all == "") || !strings.Contains(all, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, all, tc.want)
		}
	}
}

// TestPlanBadInput: what only the API can refuse is refused at plan time, with the file, the line
// and the field path, before anything is made; missing credentials are one message naming what
// was tried; a cluster of the same name that nuv did not make is a conflict, left alone.
func TestPlanBadInput(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	spec := func(version, location, extra string) string {
		return w.spec("bad", "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: bad}\nspec:\n  provider: gke\n  kubernetesVersion: \""+version+"\"\n"+extra+
			"  nodeGroups: [{name: a, count: 1}]\n  gke: {project: "+w.gcpProject+", location: "+location+"}\n")
	}
	for _, tc := range []struct{ name, version, location, want string }{
		{"version", "1.30", "us-central1-a", `bad.yaml:6: spec.kubernetesVersion: 1.30 is not offered in us-central1-a (offered: 1.36.3, 1.36.2, 1.35.7, 1.35.6, 1.34.9)`},
		{"location", "1.35", "us-central9-a", `bad.yaml:8: spec.gke.location: us-central9-a: Location "us-central9-a" does not exist.`},
	} {
		out, errs, code := w.nuv("cluster", "plan", "-f", spec(tc.version, tc.location, ""))
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, want 1 and %q\n%s%s", tc.name, code, tc.want, out, errs)
		}
	}
	f := w.spec("ch", "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: ch}\nspec:\n  provider: gke\n  kubernetesVersion: \"1.36\"\n  gke: {project: "+w.gcpProject+", location: us-central1, releaseChannel: STABLE}\n")
	if _, errs, code := w.nuv("cluster", "plan", "-f", f); code != 1 || !strings.Contains(errs, "ch.yaml:6: spec.kubernetesVersion: 1.36 is not offered in release channel STABLE (offered: 1.35.6, 1.34.9)") {
		t.Errorf("version outside the channel: exit %d\n%s", code, errs)
	}
	f = w.spec("other", "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: other}\nspec:\n  provider: gke\n  gke: {project: someone-elses, location: us-central1-a}\n")
	if _, errs, code := w.nuv("cluster", "plan", "-f", f); code != 1 || !strings.Contains(errs, "other.yaml:6: spec.gke.project: someone-elses: Permission 'container.clusters.list' denied") {
		t.Errorf("another project: exit %d\n%s", code, errs)
	}

	// No credentials: one message naming what was tried, and nothing made.
	good := spec("1.35", "us-central1-a", "")
	cmd := w.cmd("cluster", "apply", "--yes", "-f", good)
	home := t.TempDir()
	cmd.Env = append(cmd.Env, "GOOGLE_APPLICATION_CREDENTIALS=", "HOME="+home, "CLOUDSDK_CONFIG=")
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "no Google credentials: tried GOOGLE_APPLICATION_CREDENTIALS (unset), gcloud's application default credentials "+home+"/.config/gcloud/application_default_credentials.json (missing), the metadata server of Google Cloud (not on Google Cloud)") {
		t.Errorf("apply without credentials: %v\n%s", err, b)
	}
	l, err := w.conn.Client.ListClusters(ctx, &containerpb.ListClustersRequest{Parent: "projects/" + w.gcpProject + "/locations/-"})
	if err != nil || len(l.Clusters) != 0 {
		t.Fatalf("clusters after refused applies: %v %v", l, err)
	}

	// A cluster named like the spec's that nuv did not make (its creation fails, so that no
	// control plane is needed): a conflict in the plan, and apply refuses to touch it.
	w.fault(`{"method":"CreateCluster","kind":"fail-operation","count":1}`)
	if _, err := w.conn.Client.CreateCluster(ctx, &containerpb.CreateClusterRequest{Parent: "projects/" + w.gcpProject + "/locations/us-central1-a",
		Cluster: &containerpb.Cluster{Name: "bad", InitialNodeCount: 1}}); err != nil {
		t.Fatal(err)
	}
	out, errs, code := w.nuv("cluster", "plan", "-f", good)
	if code != 0 || !strings.Contains(out, "! conflict cluster/bad (projects/"+w.gcpProject+"/locations/us-central1-a/clusters/bad): exists but was not made by nuv; left alone") {
		t.Errorf("plan over a foreign cluster: exit %d\n%s%s", code, out, errs)
	}
	if _, errs, code := w.nuv("cluster", "apply", "--yes", "-f", good); code == 0 || !strings.Contains(errs, "cluster/bad exist(s) but nuv did not make them") {
		t.Errorf("apply over a foreign cluster: exit %d\n%s", code, errs)
	}
	if n := len(w.ops("bad", containerpb.Operation_DELETE_CLUSTER)); n != 0 {
		t.Errorf("nuv deleted a cluster it did not make")
	}
}

// The example spec the repository ships is valid.
func TestExampleSpec(t *testing.T) {
	cs, err := spec.ReadFile("../../../clusters/specs/gke.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if errs := (&gke.Provider{}).Validate(cs[0]); len(errs) > 0 {
		t.Fatal(errs)
	}
}

// GKE's quota throttling (RESOURCE_EXHAUSTED) of the first three calls is retried: the plan goes through.
func TestPlanRetriesThrottling(t *testing.T) {
	w := newWorld(t)
	w.fault(`{"method":"*","kind":"throttle","count":3}`)
	f := w.spec("thr", "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: thr}\nspec:\n  provider: gke\n  nodeGroups: [{name: a}]\n  gke: {project: "+w.gcpProject+", location: us-east1-b}\n")
	out, errs, code := w.nuv("cluster", "plan", "-f", f, "--detailed-exitcode")
	if code != 2 || !strings.Contains(out, "+ create cluster/thr") {
		t.Fatalf("plan under throttling: exit %d\n%s%s", code, out, errs)
	}
	resp, err := http.DefaultClient.Do(w.adminRequest(http.MethodGet, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var faults []gcp.Fault
	if err := json.NewDecoder(resp.Body).Decode(&faults); err != nil || len(faults) != 1 || faults[0].Fired != 3 {
		t.Fatalf("the throttle did not fire 3 times: %+v %v", faults, err)
	}
}

// TestEndpointEnvIsTheEmulators: the variable the provider reads its endpoint from is the one
// `nuv emulator env gcp` sets.
func TestEndpointEnvIsTheEmulators(t *testing.T) {
	if gke.EndpointEnv != gcp.ContainerEndpointEnv {
		t.Fatalf("gke.EndpointEnv %q, the emulator's %q", gke.EndpointEnv, gcp.ContainerEndpointEnv)
	}
}
