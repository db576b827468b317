package kind

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/registry"
	"github.com/nuv-dev/nuv/internal/registry/relayctl"
)

// TestRelayMirror: the nodes' hosts.toml maps both registry names to the relay over HTTP (the
// relay's name: relayctl's TestName).
func TestRelayMirror(t *testing.T) {
	a := relayctl.Name("/home/a/.nuv/registry")
	if got := mirrorHosts("localhost:5001", a); len(got) != 2 || got[0] != "localhost:5001" || got[1] != a+":5000" {
		t.Errorf("mirror hosts %v", got)
	}
	want := "# nuv: pulls go to nuv's registry through its relay on the cluster's network\n[host.\"http://" + a + ":5000\"]\n  capabilities = [\"pull\", \"resolve\"]\n"
	if got := hostsTOML(a); got != want {
		t.Errorf("hosts.toml:\n%s\nwant:\n%s", got, want)
	}
	h := hosting("localhost:5001", a)
	if h.Host != "localhost:5001" || h.FromContainerRuntime != "localhost:5001" || h.FromClusterNetwork != a+":5000" {
		t.Errorf("hosting %+v", h)
	}
	if !strings.Contains(containerdCertsPatch, `config_path = "/etc/containerd/certs.d"`) {
		t.Errorf("containerd patch %q", containerdCertsPatch)
	}
}

// TestIntegrationRegistryPortTaken: when the registry's port is published by a container that is
// not nuv's registry (kind's own local-registry recipe, say), the error names the port and the
// container.
func TestIntegrationRegistryPortTaken(t *testing.T) {
	rt := requireRuntime(t)
	ctx := context.Background()
	p := &Provider{Home: t.TempDir(), Project: t.TempDir(), Log: localtest.Logger(t)}
	img, err := relayctl.EnsureImage(ctx, rt, p.getenv, p.log())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// a network of its own: the test daemon has no default bridge to publish from
	const other, network = "nuv-reg-test-not-a-registry", "nuv-reg-test-net"
	if _, err := rt.Output(ctx, "network", "create", network); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := rt.Output(context.Background(), "network", "rm", network); err != nil {
			t.Errorf("clean-up: remove network %s: %v", network, err)
		}
	})
	if _, err := rt.Output(ctx, "run", "-d", "--name", other, "--network", network, "-p", "127.0.0.1:"+strconv.Itoa(port)+":5000", img, "serve"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := rt.Output(context.Background(), "rm", "-f", "-v", other); err != nil {
			t.Errorf("clean-up: remove container %s: %v", other, err)
		}
	})
	p.RegistryHost = "localhost:" + strconv.Itoa(port)
	_, _, upErr := registry.Up(ctx, registry.UpOptions{Dir: filepath.Join(p.Home, "registry"), Port: port, Command: []string{"/bin/false"}})
	if upErr == nil {
		t.Fatalf("the registry started on port %d, which container %s publishes", port, other)
	}
	err = p.explainPort(ctx, rt, upErr)
	t.Log(err)
	for _, w := range []string{"port " + strconv.Itoa(port), other, "not nuv's registry", "NUV_REGISTRY_PORT"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}
