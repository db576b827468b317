package gke_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
)

// TestPlanCostEstimate: `nuv cluster plan` of a GKE spec against the emulator prints, beside the
// expected apply time, each node pool's hourly estimate from the Cloud Billing Catalog API (its
// count in each zone, its vCPUs and memory at the series' prices) and the total, labelled an
// estimate with its source; a custom machine type has no price and says why.
func TestPlanCostEstimate(t *testing.T) {
	w := newWorld(t)
	f := w.spec("priced", "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: priced}\nspec:\n  provider: gke\n"+
		"  zones: [us-central1-a, us-central1-b]\n"+
		"  nodeGroups:\n  - {name: web, count: 2, instanceType: e2-standard-4}\n  - {name: small, count: 1}\n  - {name: odd, count: 1, instanceType: custom-4-8192}\n"+
		"  gke: {project: "+w.gcpProject+", location: us-central1}\n")
	t0 := time.Now()
	out, errs, code := w.nuv("cluster", "plan", "-f", f, "--detailed-exitcode")
	first := time.Since(t0)
	if code != 2 {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"Estimated hourly cost of cluster priced (on-demand list prices of the machines the changes run, from the cloud's price API; an estimate, not a bill):\n",
		"  create node-pool/web    estimate: $0.5344/h (4 x e2-standard-4 at $0.1336/h, Cloud Billing Catalog API us-central1 on-demand, E2 vCPU + RAM)\n",
		"  create node-pool/small  estimate: $0.0668/h (2 x e2-medium at $0.0334/h, Cloud Billing Catalog API us-central1 on-demand, E2 vCPU + RAM)\n",
		"  create node-pool/odd    no price for 2 x custom-4-8192 (nuv does not know the vCPUs and memory of custom-4-8192)\n",
		"  estimated cost: $0.6012/h (Cloud Billing Catalog API us-central1 on-demand, E2 vCPU + RAM; 1 of the machine types without a price, not counted)\n",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("plan's stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(out, "estimate") {
		t.Errorf("the estimate is in the plan document on stdout:\n%s", out)
	}

	// The next plan reads the prices from the cache (0600) and says how old they are.
	t0 = time.Now()
	_, errs, _ = w.nuv("cluster", "plan", "-f", f)
	cached := time.Since(t0)
	if !regexp.MustCompile(`estimate: \$0\.5344/h \(4 x e2-standard-4 at \$0\.1336/h, Cloud Billing Catalog API us-central1 on-demand, E2 vCPU \+ RAM, cached \d+s ago\)`).MatchString(errs) {
		t.Errorf("second plan, prices from the cache:\n%s", errs)
	}
	if fi, err := os.Stat(filepath.Join(w.home, "cache", "prices.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("price cache: %v %v", fi, err)
	}
	// NUV_PRICES=off: no estimate at all.
	t0 = time.Now()
	cmd := w.cmd("cluster", "plan", "-f", f)
	cmd.Env = append(cmd.Env, "NUV_PRICES=off")
	_, errs, _ = clustertest.Output(t, cmd)
	off := time.Since(t0)
	if strings.Contains(errs, "Estimated hourly cost") {
		t.Errorf("NUV_PRICES=off still estimates:\n%s", errs)
	}
	t.Logf("plan: %s with the catalogue asked, %s with the cache, %s without estimate", first, cached, off)
}
