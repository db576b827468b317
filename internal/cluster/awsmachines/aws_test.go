package awsmachines

import (
	"context"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awstest"
	"strings"
	"testing"
)

// TestIntegrationMachinesValidate resolves a self-managed spec against the emulator: the zones
// the region has (the control planes spread over up to three), the instance types EC2 offers,
// and nuv's machine image by name; what AWS refuses is a problem with its field path.
func TestIntegrationMachinesValidate(t *testing.T) {
	if testing.Short() {
		t.Skip("the emulator serves nuv's machine image from the node image on the Docker daemon; skipped under -short")
	}
	e := awstest.StartEmulator(t, 0)
	p := New(t.TempDir(), "nuv", e.Getenv, nil)
	doc := strings.Replace(haNLB, "  zones: [us-east-1a, us-east-1b]\n", "", 1)
	c := awstest.Parse(t, doc)
	if errs := p.Validate(c); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs)
	}
	r, errs := p.resolveMachines(context.Background(), c)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(r.zones) != 3 || r.version != "1.36.3" || !strings.HasPrefix(r.image, MachineImagePrefix+"1.36.3") {
		t.Errorf("resolved zones %v, version %s, image %s; want three zones, 1.36.3 and nuv's machine image", r.zones, r.version, r.image)
	}
	for _, tc := range []struct{ name, edit, want string }{
		{"zone", "zones: [us-east-1a, us-east-1b]=>zones: [us-east-1a, eu-west-1b]", `spec.zones[1]: "eu-west-1b" is not a zone of us-east-1`},
		{"instance type", "instanceType: m6i.xlarge=>instanceType: m6i.huge", `spec.aws.controlPlane.instanceType: "m6i.huge" is not an EC2 instance type`},
		{"version", `kubernetesVersion: "1.36"=>kubernetesVersion: "1.31"`, `spec.kubernetesVersion: "1.31": nuv's machine image carries Kubernetes 1.36.3`},
		{"image", "ssh: {cidrs: [203.0.113.0/24]}=>image: someone-elses-image", "spec.aws.image: no available machine image someone-elses-image in us-east-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, repl, _ := strings.Cut(tc.edit, "=>")
			d := strings.Replace(haNLB, old, repl, 1)
			if d == haNLB {
				t.Fatalf("edit %q changed nothing", tc.edit)
			}
			var got []string
			for _, e := range p.Validate(awstest.Parse(t, d)) {
				got = append(got, e.Error())
			}
			if all := strings.Join(got, "\n"); !strings.Contains(all, tc.want) {
				t.Errorf("problems:\n%s\nwant one containing %q", all, tc.want)
			}
		})
	}
}
