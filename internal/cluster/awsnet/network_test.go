package awsnet

import (
	"strings"
	"testing"
)

func TestCarveSubnets(t *testing.T) {
	for _, tc := range []struct {
		name          string
		vpc           string
		zones         []string
		public, priv  []string
		want, wantErr string
	}{
		{name: "default /16, two zones", zones: []string{"a", "b"},
			want: "private-a=10.0.0.0/19 private-b=10.0.32.0/19 public-a=10.0.128.0/19 public-b=10.0.160.0/19"},
		{name: "/20, three zones", vpc: "172.16.16.0/20", zones: []string{"a", "b", "c"},
			want: "private-a=172.16.16.0/23 private-b=172.16.18.0/23 private-c=172.16.20.0/23 public-a=172.16.24.0/23 public-b=172.16.26.0/23 public-c=172.16.28.0/23"},
		{name: "/24", vpc: "10.1.2.0/24", zones: []string{"a", "b"},
			want: "private-a=10.1.2.0/27 private-b=10.1.2.32/27 public-a=10.1.2.128/27 public-b=10.1.2.160/27"},
		{name: "given", zones: []string{"a", "b"}, public: []string{"10.0.100.0/24", "10.0.101.0/24"}, priv: []string{"10.0.0.0/20", "10.0.16.0/20"},
			want: "private-a=10.0.0.0/20 private-b=10.0.16.0/20 public-a=10.0.100.0/24 public-b=10.0.101.0/24"},
		{name: "invalid vpc", vpc: "10.0.0.0/40", zones: []string{"a", "b"}, wantErr: `spec.networking.vpcCIDR: invalid IPv4 CIDR "10.0.0.0/40"`},
		{name: "host bits", vpc: "10.0.0.1/16", zones: []string{"a", "b"}, wantErr: `spec.networking.vpcCIDR: "10.0.0.1/16" has host bits set (did you mean 10.0.0.0/16?)`},
		{name: "too small", vpc: "10.0.0.0/26", zones: []string{"a", "b"}, wantErr: "spec.networking.vpcCIDR: 10.0.0.0/26: an EKS VPC that nuv carves into subnets is a /16 to a /24"},
		{name: "overlap", zones: []string{"a", "b"}, public: []string{"10.0.0.0/24", "10.0.101.0/24"}, priv: []string{"10.0.0.0/20", "10.0.16.0/20"},
			wantErr: "spec.eks.publicSubnetCIDRs[0]: subnet 10.0.0.0/24 overlaps subnet 10.0.0.0/20 (spec.eks.privateSubnetCIDRs[0])"},
		{name: "outside", zones: []string{"a", "b"}, priv: []string{"10.0.0.0/20", "10.1.0.0/20"}, wantErr: "spec.eks.privateSubnetCIDRs[1]: 10.1.0.0/20 is not inside the VPC 10.0.0.0/16"},
		{name: "bad subnet", zones: []string{"a", "b"}, priv: []string{"10.0.0.0/20", "ten"}, wantErr: `spec.eks.privateSubnetCIDRs[1]: invalid IPv4 CIDR "ten"`},
		{name: "count", zones: []string{"a", "b"}, priv: []string{"10.0.0.0/20"}, wantErr: "spec.eks.privateSubnetCIDRs: 1 CIDRs for 2 zones"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := CarveSubnets(tc.vpc, tc.zones, tc.public, tc.priv)
			if tc.wantErr != "" {
				if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), tc.wantErr) {
					t.Fatalf("errors %v, want %q", errs, tc.wantErr)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			var s []string
			for _, sn := range got {
				s = append(s, sn.Name()+"="+sn.CIDR)
			}
			if strings.Join(s, " ") != tc.want {
				t.Fatalf("got %s\nwant %s", strings.Join(s, " "), tc.want)
			}
		})
	}
}
