package container

import (
	"reflect"
	"strings"
	"testing"
)

func TestLinkRules(t *testing.T) {
	c := `-m comment --comment nuv-vpc 000000000000/vpc-1`
	tests := []struct {
		name       string
		bridges    []string
		dockerUser bool
		want       []string
	}{
		{"three subnets, Docker manages iptables", []string{"br-a", "br-b", "br-c"}, true, []string{
			"filter DOCKER-USER -i br-a -o br-b " + c + " -j ACCEPT",
			"filter DOCKER-USER -i br-a -o br-c " + c + " -j ACCEPT",
			"filter DOCKER-USER -i br-b -o br-a " + c + " -j ACCEPT",
			"filter DOCKER-USER -i br-b -o br-c " + c + " -j ACCEPT",
			"filter DOCKER-USER -i br-c -o br-a " + c + " -j ACCEPT",
			"filter DOCKER-USER -i br-c -o br-b " + c + " -j ACCEPT",
			"nat POSTROUTING -s 10.77.0.0/16 -d 10.77.0.0/16 " + c + " -j RETURN",
		}},
		{"three subnets, Docker without iptables", []string{"br-a", "br-b", "br-c"}, false, []string{
			"filter FORWARD -i br-a ! -o br-a " + c + " -j DROP (appended)",
			"filter FORWARD -i br-b ! -o br-b " + c + " -j DROP (appended)",
			"filter FORWARD -i br-c ! -o br-c " + c + " -j DROP (appended)",
			"filter FORWARD -i br-a -o br-b " + c + " -j ACCEPT",
			"filter FORWARD -i br-a -o br-c " + c + " -j ACCEPT",
			"filter FORWARD -i br-b -o br-a " + c + " -j ACCEPT",
			"filter FORWARD -i br-b -o br-c " + c + " -j ACCEPT",
			"filter FORWARD -i br-c -o br-a " + c + " -j ACCEPT",
			"filter FORWARD -i br-c -o br-b " + c + " -j ACCEPT",
			"nat POSTROUTING -s 10.77.0.0/16 -d 10.77.0.0/16 " + c + " -j RETURN",
		}},
		{"no subnet network", nil, true, []string{
			"nat POSTROUTING -s 10.77.0.0/16 -d 10.77.0.0/16 " + c + " -j RETURN",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range LinkRules("000000000000/vpc-1", "10.77.0.0/16", tt.bridges, tt.dockerUser) {
				line := r.Table + " " + r.Chain + " " + strings.Join(r.Args, " ")
				if r.Last {
					line += " (appended)"
				}
				got = append(got, line)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestSplitRule(t *testing.T) {
	got := splitRule(`-A FORWARD -i br-a ! -o br-a -m comment --comment "nuv-vpc 1/vpc-1" -j DROP`)
	want := []string{"-A", "FORWARD", "-i", "br-a", "!", "-o", "br-a", "-m", "comment", "--comment", "nuv-vpc 1/vpc-1", "-j", "DROP"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("splitRule = %q, want %q", got, want)
	}
}
