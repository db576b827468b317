package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// EtcdHealthy checks the etcd cluster (stacked on the control planes, or the external tier) the
// way a rolling replacement validates it before it takes the next machine: every member in the
// list has started (it has a name), none is still a learner, and each answers a status request
// on its own client URL. The error names the first member that is not healthy.
func (b *Bootstrap) EtcdHealthy(ctx context.Context) error {
	const step = "etcd health"
	pool := b.Cluster.ControlPlanes
	if len(b.Cluster.Etcd) > 0 {
		pool = b.Cluster.Etcd
	}
	ca, err := b.etcdCA(ctx, step, false, pool)
	if err != nil {
		return err
	}
	cli, err := b.etcdClient(ctx, ca, pool)
	if err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	defer cli.Close()
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	list, err := cli.MemberList(cctx)
	if err != nil {
		return fmt.Errorf("%s: member list: %w", step, err)
	}
	if len(list.Members) == 0 {
		return fmt.Errorf("%s: no member", step)
	}
	for _, mem := range list.Members {
		switch {
		case mem.Name == "":
			return fmt.Errorf("%s: member %x (%s) has not started", step, mem.ID, strings.Join(mem.PeerURLs, ","))
		case mem.IsLearner:
			return fmt.Errorf("%s: member %s is still a learner", step, mem.Name)
		case len(mem.ClientURLs) == 0:
			return fmt.Errorf("%s: member %s has no client URL", step, mem.Name)
		}
		if _, err := cli.Status(cctx, mem.ClientURLs[0]); err != nil {
			return fmt.Errorf("%s: member %s (%s): %w", step, mem.Name, mem.ClientURLs[0], err)
		}
	}
	return nil
}

// WaitNodeReady waits until node is registered and Ready (through the first control plane's
// admin kubeconfig), at most timeout: a machine that joined is a member of the cluster only once
// its kubelet reports Ready.
func (b *Bootstrap) WaitNodeReady(ctx context.Context, node string, timeout time.Duration) error {
	m := b.Cluster.ControlPlanes[0]
	secs := int(timeout.Seconds())
	if secs < 1 {
		return errors.New("wait for node " + node + ": no time given")
	}
	b.logf("wait for node %s Ready", node)
	// `kubectl wait` fails at once on a Node not registered yet: wait for it to be there first.
	script := fmt.Sprintf(`kc='kubectl --kubeconfig %s'
end=$(( $(date +%%s) + %d ))
until $kc get node %s >/dev/null 2>&1; do
  [ $(date +%%s) -lt $end ] || { echo "node %s is not registered after %d s" >&2; exit 1; }
  sleep 1
done
left=$(( end - $(date +%%s) )); [ $left -gt 0 ] || left=1
$kc wait --for=condition=Ready node/%s --timeout=${left}s 2>&1
`, AdminConf, secs, shq(node), node, secs, shq(node))
	_, err := b.run(ctx, "wait for node "+node, m, script, nil)
	return err
}
