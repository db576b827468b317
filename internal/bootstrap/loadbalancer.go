package bootstrap

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/nuv-dev/nuv/internal/machine/haproxy"
)

// HAProxyConfigPath is where the load-balancer machine's HAProxy reads its configuration (Debian's).
const HAProxyConfigPath = "/etc/haproxy/haproxy.cfg"

// HAProxyConfig is the load-balancer machine's haproxy.cfg: the endpoint's port on every address,
// balanced over the control planes' API servers with TCP checks.
func (c *Cluster) HAProxyConfig() ([]byte, error) {
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
		fe.Servers = append(fe.Servers, haproxy.Server{Name: m.Name(), Address: m.Address(), Port: APIServerPort})
	}
	return haproxy.Render(haproxy.Config{Frontends: []haproxy.Frontend{fe}})
}

// LoadBalancer configures HAProxy on the load-balancer machine with the control planes as
// backends, checks the configuration with `haproxy -c`, and (re)starts it when it changed or is
// not running; an unchanged configuration of a running HAProxy is left alone.
func (b *Bootstrap) LoadBalancer(ctx context.Context) error {
	const step = "load balancer"
	m := b.Cluster.LoadBalancer
	if m == nil {
		return nil
	}
	cfg, err := b.Cluster.HAProxyConfig()
	if err != nil {
		return err
	}
	cur, _ := m.ReadFile(ctx, HAProxyConfigPath)
	if string(cur) == string(cfg) {
		if _, err := m.Run(ctx, "systemctl is-active --quiet haproxy\n", nil); err == nil {
			b.logf("%s: %s serves the control planes", step, m.Name())
			return nil
		}
	}
	staged := ConfigDir + "/haproxy.cfg"
	if err := b.write(ctx, step, m, staged, cfg, 0o644); err != nil {
		return err
	}
	b.logf("%s: %s -> %d control plane(s)", step, m.Name(), len(b.Cluster.ControlPlanes))
	_, err = b.run(ctx, step, m, "haproxy -c -q -f "+staged+" 2>&1\nmv -f "+staged+" "+HAProxyConfigPath+"\n"+
		"systemctl enable haproxy >/dev/null 2>&1 || true\nsystemctl restart haproxy\n", nil)
	return err
}
