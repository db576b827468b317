package eks

import (
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"go.yaml.in/yaml/v3"
)

func decodeYAML(t *testing.T, s string) spec.ProviderSpec {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDecodeSectionErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // "path: message fragment"
	}{
		{"unknown field", "natt: single", []string{"spec.eks.natt: unknown field (valid: endpoint, profile, vpcId"}},
		{"nat value", "nat: double", []string{`spec.eks.nat: "double": want none, single or perAZ`}},
		{"nat type", "nat: [single]", []string{"spec.eks.nat: want none, single or perAZ, got a list"}},
		{"endpoint scheme", "endpoint: 127.0.0.1:5002", []string{`spec.eks.endpoint: "127.0.0.1:5002": want an http:// or https:// URL`}},
		{"vpc without subnets", "vpcId: vpc-123", []string{"spec.eks.subnetIds: vpcId and subnetIds go together"}},
		{"one subnet", "vpcId: vpc-1\nsubnetIds: [subnet-1]", []string{"spec.eks.subnetIds: EKS needs subnets in at least two zones; 1 given"}},
		{"subnet id", "vpcId: vpc-1\nsubnetIds: [subnet-1, sg-2]", []string{`spec.eks.subnetIds[1]: "sg-2" is not a subnet id`}},
		{"vpc id", "vpcId: net-1\nsubnetIds: [subnet-1, subnet-2]", []string{`spec.eks.vpcId: "net-1" is not a VPC id`}},
		{"existing vpc and cidrs", "vpcId: vpc-1\nsubnetIds: [subnet-1, subnet-2]\npublicSubnetCIDRs: [10.0.0.0/24]", []string{"spec.eks.vpcId: an existing VPC keeps its subnets"}},
		{"log type", "logging: [api, kubelet]", []string{`spec.eks.logging[1]: "kubelet" is not an EKS log type`}},
		{"endpoint access field", "endpointAccess: {public: true, open: yes}", []string{"spec.eks.endpointAccess.open: unknown field (valid: public, private, publicCIDRs)"}},
		{"endpoint access type", "endpointAccess: {public: maybe}", []string{`spec.eks.endpointAccess.public: want true or false, got "maybe"`}},
		{"no endpoint", "endpointAccess: {public: false}", []string{"spec.eks.endpointAccess: the API endpoint needs public or private access"}},
		{"public cidr", "endpointAccess: {publicCIDRs: [10.0.0.0/33]}", []string{`spec.eks.endpointAccess.publicCIDRs[0]: invalid CIDR "10.0.0.0/33"`}},
		{"addons type", "addons: [coredns]", []string{"spec.eks.addons: want a mapping of add-on name to version"}},
		{"addon version type", "addons: {coredns: 1}", []string{`spec.eks.addons.coredns: want a string, got "1"`}},
		{"two at once", "nat: many\nlogging: api", []string{"spec.eks.logging: want a list of strings", `spec.eks.nat: "many"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := DecodeSection(decodeYAML(t, tc.yaml))
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("errors %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("error %d: %q, want it to start with %q", i, got[i], w)
				}
			}
		})
	}
}

func TestDecodeSectionDefaults(t *testing.T) {
	s, errs := DecodeSection(decodeYAML(t, "addons: {coredns: v1.12.4-eksbuild.1, kube-proxy: none, aws-ebs-csi-driver: default}\nlogging: [audit, api, audit]"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if s.NAT != awsnet.NATSingle || !s.EndpointPublic || s.EndpointPrivate || s.AMIType != "AL2023_x86_64_STANDARD" || strings.Join(s.Logging, ",") != "api,audit" {
		t.Fatalf("defaults: %+v", s)
	}
	got := s.AddonVersions()
	want := map[string]string{"vpc-cni": "", "coredns": "v1.12.4-eksbuild.1", "aws-ebs-csi-driver": ""}
	if len(got) != len(want) {
		t.Fatalf("add-ons %v, want %v", got, want)
	}
	for k, v := range want {
		if gv, ok := got[k]; !ok || gv != v {
			t.Errorf("add-on %s: %q (present %v), want %q", k, gv, ok, v)
		}
	}
}
