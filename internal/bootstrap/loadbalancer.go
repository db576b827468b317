package bootstrap

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/nuv-dev/nuv/internal/machine/haproxy"
)

// HAProxyConfigPath is where the load-balancer machine's HAProxy reads its configuration (Debian's).
const HAProxyConfigPath = "/etc/haproxy/haproxy.cfg"

// HAProxyConfig is the load-balancer machine's haproxy.cfg: the endpoint's port on every address,
// balanced over the control planes' API servers with TCP checks; the control planes named in
// without are left out (drained).
func (c *Cluster) HAProxyConfig(without ...string) ([]byte, error) {
	_, p, err := net.SplitHostPort(c.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("control-plane endpoint %q: %w", c.Endpoint, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return nil, fmt.Errorf("control-plane endpoint %q: port %q", c.Endpoint, p)
	}
	fe := haproxy.Frontend{Name: "kube-apiserver", Port: port}
	for _, m := range c.ControlPlanes {
		if slices.Contains(without, m.Name()) {
			continue
		}
		fe.Servers = append(fe.Servers, haproxy.Server{Name: m.Name(), Address: m.Address(), Port: APIServerPort})
	}
	return haproxy.Render(haproxy.Config{Frontends: []haproxy.Frontend{fe}})
}

// LoadBalancer configures HAProxy on the load-balancer machine with the control planes as
// backends, checks the configuration with `haproxy -c`, and reloads a running HAProxy gracefully
// (its connections finish on the old configuration) or starts one; an unchanged configuration of
// a running HAProxy is left alone.
func (b *Bootstrap) LoadBalancer(ctx context.Context) error {
	return b.configureLB(ctx, "load balancer")
}

// DrainLoadBalancer takes control plane name out of HAProxy's backends (a graceful reload: new
// connections go to the others, the open ones finish) before it leaves: a roll, a scale-down.
// LoadBalancer puts it back. Nothing to do without a load-balancer machine or with name as the
// only backend.
func (b *Bootstrap) DrainLoadBalancer(ctx context.Context, name string) error {
	if len(b.Cluster.ControlPlanes) < 2 {
		return nil
	}
	return b.configureLB(ctx, "drain "+name+" from the load balancer", name)
}

func (b *Bootstrap) configureLB(ctx context.Context, step string, without ...string) error {
	m := b.Cluster.LoadBalancer
	if m == nil {
		return nil
	}
	cfg, err := b.Cluster.HAProxyConfig(without...)
	if err != nil {
		return err
	}
	active := false
	if _, err := m.Run(ctx, "systemctl is-active --quiet haproxy\n", nil); err == nil {
		active = true
	}
	cur, _ := m.ReadFile(ctx, HAProxyConfigPath)
	if string(cur) == string(cfg) && active {
		b.logf("%s: %s serves %d control plane(s)", step, m.Name(), len(b.Cluster.ControlPlanes)-len(without))
		return nil
	}
	staged := ConfigDir + "/haproxy.cfg"
	if err := b.write(ctx, step, m, staged, cfg, 0o644); err != nil {
		return err
	}
	start := "systemctl enable haproxy >/dev/null 2>&1 || true\nsystemctl restart haproxy\n"
	how := "started"
	if active {
		start, how = "systemctl reload haproxy\n", "reloaded"
	}
	b.logf("%s: %s -> %d control plane(s), %s", step, m.Name(), len(b.Cluster.ControlPlanes)-len(without), how)
	_, err = b.run(ctx, step, m, "haproxy -c -q -f "+staged+" 2>&1\nmv -f "+staged+" "+HAProxyConfigPath+"\n"+start, nil)
	return err
}
