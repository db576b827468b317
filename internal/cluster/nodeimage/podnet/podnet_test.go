package podnet

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConflistGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cidrs []string
	}{
		{"ipv4", []string{"10.244.1.0/24"}},
		{"dual-stack", []string{"10.244.2.0/24", "fd00:10:244:2::/64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Conflist(tc.cidrs)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", tc.name+".conflist")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("Conflist(%v) =\n%s\nwant (%s)\n%s", tc.cidrs, got, golden, want)
			}
		})
	}
}

func TestConflistRefuses(t *testing.T) {
	for _, tc := range []struct {
		cidrs []string
		want  string
	}{
		{nil, "no pod CIDR yet"},
		{[]string{"10.244.1.0"}, `pod CIDR "10.244.1.0"`},
		{[]string{"10.244.1.0/24", "10.245.1.0/24"}, "two ranges of one IP family"},
	} {
		if _, err := Conflist(tc.cidrs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Conflist(%v) error %v, want %q", tc.cidrs, err, tc.want)
		}
	}
}

func TestRoutes(t *testing.T) {
	nodes := []Node{
		{Name: "cp", PodCIDRs: []string{"10.244.0.0/24", "fd00:10:244::/64"}, Addresses: []string{"172.18.0.2", "fc00::2"}},
		{Name: "w1", PodCIDRs: []string{"10.244.1.0/24"}, Addresses: []string{"172.18.0.3"}},
		{Name: "w2", PodCIDRs: nil, Addresses: []string{"172.18.0.4"}},                            // no range yet
		{Name: "w3", PodCIDRs: []string{"fd00:10:244:3::/64"}, Addresses: []string{"172.18.0.5"}}, // no v6 address
	}
	for _, tc := range []struct {
		self string
		want []string
	}{
		{"cp", []string{"10.244.1.0/24 via 172.18.0.3 (w1)"}},
		{"w1", []string{"10.244.0.0/24 via 172.18.0.2 (cp)", "fd00:10:244::/64 via fc00::2 (cp)"}},
		{"w2", []string{"10.244.0.0/24 via 172.18.0.2 (cp)", "10.244.1.0/24 via 172.18.0.3 (w1)", "fd00:10:244::/64 via fc00::2 (cp)"}},
	} {
		t.Run(tc.self, func(t *testing.T) {
			rs, err := Routes(tc.self, nodes)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rs {
				got = append(got, r.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("Routes(%s) =\n%s\nwant\n%s", tc.self, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	if _, err := Routes("cp", []Node{{Name: "x", PodCIDRs: []string{"bad"}, Addresses: []string{"1.2.3.4"}}}); err == nil || !strings.Contains(err.Error(), "node x") {
		t.Fatalf("Routes accepted a bad pod CIDR: %v", err)
	}
}

func TestMasqueradeRules(t *testing.T) {
	got, err := MasqueradeRules("10.244.0.0/16,fd00:10:244::/56")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "masquerade.nft")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("MasqueradeRules =\n%s\nwant\n%s", got, want)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "no pod subnet"},
		{"10.244.0.0", `pod subnet "10.244.0.0"`},
		{"10.244.0.0/16,10.245.0.0/16", "two ranges of one IP family"},
	} {
		if _, err := MasqueradeRules(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MasqueradeRules(%q): %v, want %q", tc.in, err, tc.want)
		}
	}
}
