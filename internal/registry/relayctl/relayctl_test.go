package relayctl

import (
	"regexp"
	"testing"
)

// TestName: the relay is named after the registry's directory: stable, a DNS label, distinct per
// nuv home.
func TestName(t *testing.T) {
	a, b := Name("/home/a/.nuv/registry"), Name("/home/b/.nuv/registry")
	if a == b || a != Name("/home/a/.nuv/registry") {
		t.Errorf("relay names %s %s: want stable and distinct per directory", a, b)
	}
	if !regexp.MustCompile(`^nuv-registry-[0-9a-f]{8}$`).MatchString(a) {
		t.Errorf("relay name %q", a)
	}
}

// TestRelayString: the status line of `nuv registry status` for a relay.
func TestRelayString(t *testing.T) {
	for _, tc := range []struct {
		r    Relay
		want string
	}{
		{Relay{Name: "nuv-registry-1a2b3c4d", Running: true, Runtime: "docker", Networks: []string{"kind", "other"}},
			"relay nuv-registry-1a2b3c4d for kind clusters: running (docker, networks: kind, other)"},
		{Relay{Name: "nuv-registry-1a2b3c4d", Runtime: "podman"},
			"relay nuv-registry-1a2b3c4d for kind clusters: stopped (podman, networks: none)"},
	} {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}
