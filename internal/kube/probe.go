package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// DefaultProbeTimeout bounds one cluster's reachability check in `nuv kube list` and `use`.
const DefaultProbeTimeout = time.Second

// Status is what a probe learnt about one cluster.
type Status struct {
	Reachable bool
	Err       error  // why it is not reachable, or why its nodes could not be read
	Type      string // override, else detected from nodes ("" when unknown)
	Nodes     []NodeInfo
	Elapsed   time.Duration
}

// NodeInfo is the summary of one node.
type NodeInfo struct {
	Name    string
	Ready   bool
	Version string
}

// Probe checks one cluster within timeout: it lists its nodes, detects its type (unless
// overridden) and remembers the detected type. Unreachable is a Status, not an error.
func Probe(ctx context.Context, project string, c Cluster, timeout time.Duration, getenv func(string) string) Status {
	start := time.Now()
	st := Status{Type: c.Type}
	defer func() { st.Elapsed = time.Since(start) }()
	if c.Err != nil {
		st.Err = c.Err
		return st
	}
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	override, oerr := Override(project, c.Name, getenv)
	cfg, err := RESTConfig(c.Path)
	if err != nil {
		st.Err = err
		return st
	}
	cfg.Timeout = timeout
	nodes, err := listNodes(ctx, cfg)
	switch {
	case err == nil:
		st.Reachable = true
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		// The server answered: reachable, but these credentials may not read nodes.
		st.Reachable = true
		st.Err = err
	default:
		st.Err = shortNetErr(err, timeout)
		return st
	}
	for _, n := range nodes {
		st.Nodes = append(st.Nodes, NodeInfo{Name: n.Name, Ready: NodeReady(&n), Version: n.Status.NodeInfo.KubeletVersion})
	}
	sort.Slice(st.Nodes, func(i, j int) bool { return st.Nodes[i].Name < st.Nodes[j].Name })
	switch {
	case oerr != nil:
		st.Type = ""
		st.Err = oerr
	case override != "":
		st.Type = override
	case err == nil:
		st.Type = DetectNodes(nodes)
		_ = Remember(project, c.Name, c.Path, st.Type)
	}
	return st
}

// ProbeAll probes every cluster concurrently; the result is indexed like cs. The whole call
// takes about one timeout however many clusters do not answer.
func ProbeAll(ctx context.Context, project string, cs []Cluster, timeout time.Duration, getenv func(string) string) []Status {
	out := make([]Status, len(cs))
	var wg sync.WaitGroup
	for i := range cs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out[i] = Probe(ctx, project, cs[i], timeout, getenv)
		}(i)
	}
	wg.Wait()
	return out
}

// NodeReady reports whether the node's Ready condition is True (false while it has none yet).
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// shortNetErr turns a client error into a short reason ("connection refused", "timed out after
// 1s", ...) that never includes credentials.
func shortNetErr(err error, timeout time.Duration) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		return fmt.Errorf("no answer within %s", timeout)
	case isRefused(err):
		return errors.New("connection refused")
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return fmt.Errorf("unknown host %s", dnsErr.Name)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	msg := err.Error()
	if strings.Contains(msg, "context deadline exceeded") || strings.Contains(msg, "Client.Timeout") {
		return fmt.Errorf("no answer within %s", timeout)
	}
	return err
}

func isRefused(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return strings.Contains(oe.Err.Error(), "connection refused")
	}
	return strings.Contains(err.Error(), "connection refused")
}

// NodeSummary is a one-line description of nodes: "3 nodes, 3 Ready (v1.36.3): a, b, c".
func NodeSummary(nodes []NodeInfo) string {
	if len(nodes) == 0 {
		return "no nodes"
	}
	ready := 0
	versions := map[string]bool{}
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if n.Ready {
			ready++
		}
		if n.Version != "" {
			versions[n.Version] = true
		}
		names = append(names, n.Name)
	}
	if len(names) > 5 {
		names = append(names[:5], fmt.Sprintf("... (%d more)", len(nodes)-5))
	}
	vs := make([]string, 0, len(versions))
	for v := range versions {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	word := "nodes"
	if len(nodes) == 1 {
		word = "node"
	}
	s := fmt.Sprintf("%d %s, %d Ready", len(nodes), word, ready)
	if len(vs) > 0 {
		s += " (" + strings.Join(vs, ", ") + ")"
	}
	return s + ": " + strings.Join(names, ", ")
}
