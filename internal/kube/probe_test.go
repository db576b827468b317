package kube

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// silentListener returns a loopback address whose listener never accepts: the kernel completes
// the TCP handshake, then nothing ever answers (a blackhole inside 127.0.0.0/8).
func silentListener(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

func TestProbeUnreachableIsFastAndParallel(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 4; i++ {
		files[fmt.Sprintf("closed%d.kubeconfig", i)] = kubeconfigFor("c", "https://"+closedPort(t))
		files[fmt.Sprintf("silent%d.kubeconfig", i)] = kubeconfigFor("s", "https://"+silentListener(t))
	}
	files["broken.kubeconfig"] = "x: ["
	proj := project(t, files)
	env := envMap(t)
	cs, err := ListEnv(proj, env)
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 400 * time.Millisecond
	start := time.Now()
	sts := ProbeAll(context.Background(), proj, cs, timeout, env)
	elapsed := time.Since(start)
	if elapsed > 3*timeout {
		t.Errorf("probing %d clusters took %s; unreachable ones must time out in parallel (timeout %s)", len(cs), elapsed, timeout)
	}
	for i, c := range cs {
		st := sts[i]
		if st.Reachable {
			t.Errorf("%s reachable?", c.Name)
		}
		var want string
		switch {
		case strings.HasPrefix(c.Name, "closed"):
			want = "connection refused"
		case strings.HasPrefix(c.Name, "silent"):
			want = "no answer within 400ms"
		default:
			want = "not a kubeconfig"
		}
		if st.Err == nil || !strings.Contains(st.Err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", c.Name, st.Err, want)
		}
		if st.Err != nil && strings.Contains(st.Err.Error(), "s3cret") {
			t.Errorf("%s: error leaks the token", c.Name)
		}
	}
}

func TestRESTConfigBounds(t *testing.T) {
	proj := project(t, map[string]string{"s.kubeconfig": kubeconfigFor("s", "https://"+silentListener(t))})
	cfg, err := RESTConfig(proj + "/clusters/s.kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Dial == nil || cfg.QPS < 50 || cfg.BearerToken != "s3cret-s" {
		t.Errorf("config not set up: dial=%v qps=%v", cfg.Dial != nil, cfg.QPS)
	}
	if _, err := RESTConfig(proj + "/clusters/missing.kubeconfig"); err == nil {
		t.Error("missing kubeconfig accepted")
	}
	// Detect against a server that never answers ends with the context, not later.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := Detect(ctx, cfg); err == nil {
		t.Error("Detect against a silent server succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Detect took %s with a 300ms context", d)
	}
}

func TestNodeSummary(t *testing.T) {
	cases := []struct {
		nodes []NodeInfo
		want  string
	}{
		{nil, "no nodes"},
		{[]NodeInfo{{Name: "a", Ready: true, Version: "v1.36.3"}}, "1 node, 1 Ready (v1.36.3): a"},
		{[]NodeInfo{{Name: "a", Ready: true, Version: "v1.36.3"}, {Name: "b", Version: "v1.35.0"}}, "2 nodes, 1 Ready (v1.35.0, v1.36.3): a, b"},
		{[]NodeInfo{{Name: "1"}, {Name: "2"}, {Name: "3"}, {Name: "4"}, {Name: "5"}, {Name: "6"}, {Name: "7"}}, "7 nodes, 0 Ready: 1, 2, 3, 4, 5, ... (2 more)"},
	}
	for _, c := range cases {
		if got := NodeSummary(c.nodes); got != c.want {
			t.Errorf("NodeSummary = %q, want %q", got, c.want)
		}
	}
}
