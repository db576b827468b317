package dockerapi

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestIntegrationDaemonErrors asks the shared Docker daemon (DOCKER_HOST, a unix socket) about
// what does not exist: its 404s arrive as *Error with the daemon's message, and filters that
// match nothing give empty lists.
func TestIntegrationDaemonErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: asks the Docker daemon")
	}
	ep := Resolve(nil, nil)
	if ep.Socket == "" {
		t.Fatalf("no unix socket to test against (%s): eval \"$(bash hack/dockerd.sh env)\"", ep.Reason)
	}
	if _, err := os.Stat(ep.Socket); err != nil {
		t.Fatalf("the daemon's socket: %v (start the test daemon with `bash hack/dockerd.sh start`)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := New(ep.Socket)
	const missing = "nuv-dockerapi-test-no-such-object"
	_, err := c.InspectContainer(ctx, missing)
	var e *Error
	if !IsNotFound(err) || !errors.As(err, &e) || !strings.Contains(strings.ToLower(e.Message), "no such container") ||
		!strings.Contains(err.Error(), "inspect container "+missing) {
		t.Errorf("inspect of a missing container: %v, want a 404 with the daemon's message", err)
	}
	if _, err := c.InspectNetwork(ctx, missing); !IsNotFound(err) || !strings.Contains(err.Error(), missing) {
		t.Errorf("inspect of a missing network: %v, want a 404 naming it", err)
	}
	if _, err := c.Exec(ctx, missing, []string{"true"}); !IsNotFound(err) || !strings.Contains(err.Error(), "exec in container "+missing) {
		t.Errorf("exec in a missing container: %v, want a 404 naming it", err)
	}
	none := Filters{"label": {"dev.nuv.dockerapi-test=" + missing}}
	if cs, err := c.Containers(ctx, none); err != nil || len(cs) != 0 {
		t.Errorf("containers with a label none has: %v, %v", cs, err)
	}
	if ns, err := c.Networks(ctx, none); err != nil || len(ns) != 0 {
		t.Errorf("networks with a label none has: %v, %v", ns, err)
	}
	if _, err := c.Containers(ctx, Filters{"no-such-filter": {"x"}}); err == nil || IsNotFound(err) {
		t.Errorf("a filter the daemon does not know: %v, want its 400", err)
	}
	if _, err := New(ep.Socket+".none").Containers(ctx, nil); err == nil || !strings.Contains(err.Error(), ep.Socket+".none") {
		t.Errorf("a socket nobody listens on: %v, want an error naming it", err)
	}
}
