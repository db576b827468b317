package localkube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	record "github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/proc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RESTConfig returns an admin client configuration for a cluster (from its state directory).
func (p Clusters) RESTConfig(name string) (*rest.Config, error) {
	return AdminConfig(StateDir(p.Home, name))
}

func AdminConfig(dir string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "config", "admin.kubeconfig"))
	if err != nil {
		return nil, fmt.Errorf("admin kubeconfig: %w", err)
	}
	cfg.Timeout = 10 * time.Second
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

func clientFor(dir string) (kubernetes.Interface, error) {
	cfg, err := AdminConfig(dir)
	if err != nil {
		return nil, err
	}
	return ClientForConfig(cfg)
}

// ClientForConfig returns a client of the built-in APIs for nuv's own calls: protobuf (a node is a
// third of its JSON size to encode and decode, which counts at 1,000 nodes) and a rate limit high
// enough never to be what paces node creation (nodeWorkers bounds the requests in flight).
func ClientForConfig(cfg *rest.Config) (kubernetes.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 1000, 2000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster client: %w", err)
	}
	return cs, nil
}

// Status reports one cluster: its processes, and its nodes when the API answers (its own record,
// in its directory, says all there is to know); the error wraps cluster.ErrNotFound when there is
// no cluster of that name.
func (p Clusters) Status(ctx context.Context, name string) (cluster.Info, error) {
	dir := StateDir(p.Home, name)
	if _, err := os.Stat(dir); err != nil {
		return cluster.Info{}, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	return p.status(ctx, name, dir), nil
}

func (p Clusters) status(ctx context.Context, name, dir string) cluster.Info {
	info := cluster.Info{Name: name, Provider: "local", NodesReady: -1}
	s, err := loadState(dir)
	if err != nil {
		info.Status, info.Err = cluster.Corrupt, err
		return info
	}
	info.APIURL, info.Kubeconfig, info.Flavor, info.Version = s.APIURL, s.Kubeconfig, s.Flavor, s.Version
	info.HA, info.Nodes, info.Created = s.HA, s.Nodes, s.Created
	info.Components, info.Status = processStatus(dir, s)
	info.Binaries = s.BinarySource
	info.Durability = durabilityText(s)
	up := 0
	for _, c := range info.Components {
		if c.Running {
			up++
		}
	}
	if up > 0 {
		if ready, _, err := probeNodes(ctx, dir, ProbeTimeout); err == nil {
			info.NodesReady = ready
		}
	}
	return info
}

// ProbeTimeout bounds how long `nuv cluster list` and `nuv cluster status` wait for a local
// cluster's API to count its Ready nodes: a cluster whose processes run but whose API does not
// answer (stopped with SIGSTOP, overloaded) is shown with "?" nodes instead of holding the list.
const ProbeTimeout = 2 * time.Second

// probeNodes is nodesReady bounded by timeout, on the request (the client's own timeout) and on
// the context alike.
func probeNodes(ctx context.Context, dir string, timeout time.Duration) (ready, total int, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return nodesReadyWithin(ctx, dir, timeout)
}

// List reports every local cluster; a cluster whose state cannot be read is reported as corrupt.
func (p Clusters) List(ctx context.Context) ([]cluster.Info, error) {
	names, err := p.Names()
	if err != nil {
		return nil, err
	}
	infos := make([]cluster.Info, len(names))
	done := make(chan struct{}, len(names))
	for i, n := range names {
		go func() {
			infos[i] = p.status(ctx, n, StateDir(p.Home, n))
			done <- struct{}{}
		}()
	}
	for range names {
		<-done
	}
	return infos, nil
}

// nodesReadyWithin counts a cluster's Ready nodes through its admin kubeconfig, each request
// bounded by timeout (0: the admin config's).
func nodesReadyWithin(ctx context.Context, dir string, timeout time.Duration) (ready, total int, err error) {
	cfg, err := AdminConfig(dir)
	if err != nil {
		return 0, 0, err
	}
	if timeout > 0 {
		cfg.Timeout = timeout
	}
	cs, err := ClientForConfig(cfg)
	if err != nil {
		return 0, 0, err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	for i := range nodes.Items {
		if kube.NodeReady(&nodes.Items[i]) {
			ready++
		}
	}
	return ready, len(nodes.Items), nil
}

// processStatus reports each component's process and the cluster's overall state, without asking
// the API server.
func processStatus(dir string, s *state) ([]cluster.Component, cluster.Status) {
	var out []cluster.Component
	var status cluster.Status
	up := 0
	comps := plan(dir, s)
	for _, c := range comps {
		cc := cluster.Component{Name: c.Name, Port: c.Port}
		if r, err := proc.ReadRecord(pidPath(dir, c)); err == nil {
			cc.PID = r.PID
			cc.Running = r.Alive()
		}
		if cc.Running {
			up++
		}
		out = append(out, cc)
	}
	switch {
	case up == len(comps):
		status = cluster.Running
	case up == 0:
		status = cluster.Stopped
	default:
		status = cluster.Degraded
	}
	if s.Phase == record.Creating && status != cluster.Stopped {
		status = cluster.Creating
	}
	return out, status
}

// durabilityText says whether the cluster's etcd survives a host crash.
func durabilityText(s *state) string {
	if s.durable() {
		return Safe + " (etcd fsyncs every write)"
	}
	return Fast + " (etcd does not fsync: a host crash can lose recent writes; spec.local.durability: safe or --durability safe for clusters whose data must survive)"
}
