package aws

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/nodeimage"
	"github.com/nuv-dev/nuv/internal/machine/container"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
	"github.com/nuv-dev/nuv/internal/runner"
)

// ContainerBalancers runs each balancer as a container of nuv's node image (which carries Debian's
// HAProxy) on the Docker daemon kind clusters use (containerrt.Detect: DOCKER_HOST): HAProxy in master-worker mode
// is the container's only process, its configuration is copied in and reloaded gracefully
// (SIGUSR2: established connections stay on the old workers) when listeners or targets change.
// The container sits on the Docker network of each of the load balancer's subnets
// (SubnetNetwork, made with the subnet's CIDR by package machine/container when missing, as EC2
// instances' machines make it) with the load balancer's address there, and on those of its
// targets' other subnets, so it reaches them without routing through the host.
type ContainerBalancers struct {
	// Image returns the node image to run.
	Image func(ctx context.Context) (string, error)
	// Log receives what the balancers do.
	Log cli.Logger
	// Getenv reads DOCKER_HOST and PATH (nil: the process's environment).
	Getenv func(string) string

	mu sync.Mutex
	// applied is the hash of the configuration each container was last given.
	applied    map[string]string
	mgr        *container.Manager
	dockerPath string // the runtime's program
}

// Labels of what the balancers make, the ones EC2's machines carry too.
const (
	labelEmulator     = "nuv.dev/emulator"
	labelAccount      = "nuv.dev/aws-account"
	labelSubnet       = "nuv.dev/ec2-subnet"
	labelLoadBalancer = "nuv.dev/elb-load-balancer"
)

// manager finds the container runtime the first time it is needed.
func (c *ContainerBalancers) manager(ctx context.Context) (*container.Manager, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mgr != nil {
		return c.mgr, c.dockerPath, nil
	}
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	rt, err := containerrt.Detect(ctx, getenv)
	if err != nil {
		return nil, "", fmt.Errorf("load balancers are containers: %w", err)
	}
	mgr, err := container.New(container.Runtime{Name: rt.Name, Path: rt.Path}, c.Log)
	if err != nil {
		return nil, "", fmt.Errorf("load balancers are containers: %w", err)
	}
	c.mgr, c.dockerPath = mgr, rt.Path
	if err := LinkVPCs(ctx, mgr, ""); err != nil {
		c.Log.Warnf("emulator: %v", err)
	}
	return mgr, rt.Path, nil
}

// NewContainerBalancers runs balancers from the node image nodeimage.Ensure gives (built or
// loaded into the daemon if missing; seconds when cached).
func NewContainerBalancers(log cli.Logger) *ContainerBalancers {
	return &ContainerBalancers{Log: log, Image: func(ctx context.Context) (string, error) {
		return nodeimage.Ensure(ctx, nodeimage.Options{Log: log, Getenv: os.Getenv})
	}}
}

func (c *ContainerBalancers) log() cli.Logger {
	if c.Log == nil {
		return cli.Quiet()
	}
	return c.Log
}

// haproxyConfig is where the configuration lives in the container (the Debian package's place).
const haproxyConfig = "/etc/haproxy/haproxy.cfg"

func (c *ContainerBalancers) docker(ctx context.Context, args ...string) (string, error) {
	_, d, err := c.manager(ctx)
	if err != nil {
		return "", err
	}
	out, err := runner.Output(ctx, runner.Cmd{Path: d, Args: args})
	return strings.TrimSpace(string(out)), err
}

// EnsureNetwork makes the network of a subnet of the emulator of account exist with the subnet's
// CIDR (its first address the gateway, which AWS reserves for the VPC router) and returns its
// name: the network EC2 instances' machines of that subnet sit on too.
func (c *ContainerBalancers) EnsureNetwork(ctx context.Context, account string, sn Subnet) (string, error) {
	mgr, _, err := c.manager(ctx)
	if err != nil {
		return "", err
	}
	name := SubnetNetwork(sn.ID)
	if err := mgr.EnsureNetwork(ctx, name, sn.CIDR, subnetNetworkLabels(account, sn.ID, sn.VPC, sn.VPCCIDR)); err != nil {
		return "", fmt.Errorf("the network of subnet %s (%s): %w", sn.ID, sn.CIDR, err)
	}
	if err := LinkVPC(ctx, mgr, account, sn.VPC); err != nil {
		return "", err
	}
	return name, nil
}

// containerState is what Ensure reads of an existing container.
type containerState struct {
	Running  bool
	Networks map[string]string // network -> address
}

func (c *ContainerBalancers) inspect(ctx context.Context, name string) (*containerState, error) {
	out, err := c.docker(ctx, "container", "inspect", "-f", "{{.State.Running}} {{json .NetworkSettings.Networks}}", name)
	if err != nil {
		var re *runner.RunError
		if errors.As(err, &re) && strings.Contains(strings.ToLower(string(re.Stderr)), "no such") {
			return nil, nil
		}
		return nil, fmt.Errorf("inspect balancer %s: %w", name, err)
	}
	running, js, _ := strings.Cut(out, " ")
	var nets map[string]struct {
		IPAddress  string
		IPAMConfig *struct{ IPv4Address string }
	}
	if err := json.Unmarshal([]byte(js), &nets); err != nil {
		return nil, fmt.Errorf("inspect balancer %s: networks %q: %w", name, js, err)
	}
	st := &containerState{Running: running == "true", Networks: map[string]string{}}
	for n, v := range nets {
		ip := v.IPAddress
		if v.IPAMConfig != nil && v.IPAMConfig.IPv4Address != "" {
			ip = v.IPAMConfig.IPv4Address
		}
		st.Networks[n] = ip
	}
	return st, nil
}

// Ensure implements Balancers.
func (c *ContainerBalancers) Ensure(ctx context.Context, b Balancer) error {
	if len(b.Listen) == 0 {
		return fmt.Errorf("balancer %s has no subnet", b.Container)
	}
	subnets := append(append([]Subnet{}, b.Listen...), b.Reach...)
	for _, sn := range subnets {
		if _, err := c.EnsureNetwork(ctx, b.Account, sn); err != nil {
			return err
		}
	}
	cfg := RenderHAProxy(b)
	sum := sha256.Sum256([]byte(cfg))
	hash := hex.EncodeToString(sum[:])
	st, err := c.inspect(ctx, b.Container)
	if err != nil {
		return err
	}
	if st == nil {
		image, err := c.Image(ctx)
		if err != nil {
			return fmt.Errorf("the node image for balancer %s: %w", b.Container, err)
		}
		first := b.Listen[0]
		if _, err := c.docker(ctx, "container", "create", "--name", b.Container, "--hostname", b.LoadBalancer,
			"--label", labelEmulator+"=aws", "--label", labelAccount+"="+b.Account, "--label", labelLoadBalancer+"="+b.LoadBalancer,
			"--network", SubnetNetwork(first.ID), "--ip", first.IP, "--restart", "unless-stopped",
			"--entrypoint", "/usr/sbin/haproxy", image, "-W", "-db", "-f", haproxyConfig); err != nil {
			return fmt.Errorf("create balancer %s: %w", b.Container, err)
		}
		st = &containerState{Networks: map[string]string{SubnetNetwork(first.ID): first.IP}}
	}
	for _, sn := range subnets {
		net := SubnetNetwork(sn.ID)
		if ip, ok := st.Networks[net]; ok {
			if ip != sn.IP {
				return fmt.Errorf("balancer %s has address %s on network %s, want %s (remove the container to let the emulator make it again)", b.Container, ip, net, sn.IP)
			}
			continue
		}
		if _, err := c.docker(ctx, "network", "connect", "--ip", sn.IP, net, b.Container); err != nil {
			return fmt.Errorf("attach balancer %s to %s at %s: %w", b.Container, net, sn.IP, err)
		}
	}
	c.mu.Lock()
	same := c.applied[b.Container] == hash
	c.mu.Unlock()
	if !same || !st.Running {
		if err := c.copyConfig(ctx, b.Container, cfg); err != nil {
			return err
		}
		loaded, _ := c.loads(ctx, b.Container)
		signal := func() error {
			if st.Running {
				if _, err := c.docker(ctx, "container", "kill", "-s", "USR2", b.Container); err != nil {
					return fmt.Errorf("reload balancer %s: %w", b.Container, err)
				}
				return nil
			}
			if _, err := c.docker(ctx, "container", "start", b.Container); err != nil {
				return fmt.Errorf("start balancer %s: %w", b.Container, err)
			}
			return nil
		}
		if err := signal(); err != nil {
			return err
		}
		if err := c.waitLoaded(ctx, b.Container, loaded, signal); err != nil {
			return err
		}
		c.log().V(1).Infof("emulator: balancer %s runs its configuration (%d listeners)", b.Container, len(b.Listeners))
	}
	if err := c.waitListening(ctx, b); err != nil {
		return err
	}
	c.mu.Lock()
	if c.applied == nil {
		c.applied = map[string]string{}
	}
	c.applied[b.Container] = hash
	c.mu.Unlock()
	return nil
}

// copyConfig copies cfg into the container (created or running).
func (c *ContainerBalancers) copyConfig(ctx context.Context, container, cfg string) error {
	dir, err := os.MkdirTemp("", "nuv-elb-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(f, []byte(cfg), 0o644); err != nil {
		return err
	}
	if _, err := c.docker(ctx, "container", "cp", f, container+":"+haproxyConfig); err != nil {
		return fmt.Errorf("configure balancer %s: %w", container, err)
	}
	return nil
}

// loads counts the configurations the balancer's HAProxy loaded and refused so far (its master
// logs "Loading success" or "Loading failure" at every start and reload).
func (c *ContainerBalancers) loads(ctx context.Context, container string) (ok, failed int) {
	_, d, err := c.manager(ctx)
	if err != nil {
		return 0, 0
	}
	var b bytes.Buffer
	_ = runner.Run(ctx, runner.Cmd{Path: d, Args: []string{"container", "logs", container}, Stdout: &b, Stderr: &b})
	return strings.Count(b.String(), "Loading success"), strings.Count(b.String(), "Loading failure")
}

// waitLoaded waits until HAProxy has loaded a configuration more than before (after signal
// started or reloaded it): a reload signal that comes while HAProxy is still starting can go
// unnoticed, so it is sent again every 5s; a configuration HAProxy refuses is an error.
func (c *ContainerBalancers) waitLoaded(ctx context.Context, container string, before int, signal func() error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, failedBefore := c.loads(ctx, container)
	sent := time.Now()
	for {
		ok, failed := c.loads(ctx, container)
		if ok > before {
			return nil
		}
		if failed > failedBefore {
			return fmt.Errorf("balancer %s refused its configuration: %s", container, c.logs(container))
		}
		if time.Since(sent) > 5*time.Second {
			if err := signal(); err != nil {
				return err
			}
			sent = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("balancer %s did not load its configuration: %w (its last log lines: %s)", container, ctx.Err(), c.logs(container))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitListening waits until every listener accepts connections on every address the balancer
// listens on, and, for a balancer without listeners, until its HAProxy runs.
func (c *ContainerBalancers) waitListening(ctx context.Context, b Balancer) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		var missing []string
		if len(b.Listeners) == 0 {
			st, err := c.inspect(ctx, b.Container)
			if err != nil {
				return err
			}
			if st == nil || !st.Running {
				missing = append(missing, "the HAProxy process")
			}
		}
		for _, l := range b.Listeners {
			for _, sn := range b.Listen {
				addr := net.JoinHostPort(sn.IP, strconv.Itoa(l.Port))
				d := net.Dialer{Timeout: time.Second}
				conn, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					missing = append(missing, addr)
					continue
				}
				conn.Close()
			}
		}
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("balancer %s does not listen on %s: %w (its last log lines: %s)", b.Container, strings.Join(missing, ", "), ctx.Err(), c.logs(b.Container))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// logs are the last lines a balancer's HAProxy wrote (it logs to stderr).
func (c *ContainerBalancers) logs(container string) string {
	c.mu.Lock()
	d := c.dockerPath
	c.mu.Unlock()
	var b bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = runner.Run(ctx, runner.Cmd{Path: d, Args: []string{"container", "logs", "--tail", "5", container}, Stdout: &b, Stderr: &b})
	return strings.Join(strings.Fields(strings.ReplaceAll(b.String(), "\n", " | ")), " ")
}

// Remove implements Balancers.
func (c *ContainerBalancers) Remove(ctx context.Context, container string, subnets []Subnet) error {
	if _, err := c.docker(ctx, "container", "rm", "-f", "-v", container); err != nil {
		var re *runner.RunError
		if !errors.As(err, &re) || !strings.Contains(strings.ToLower(string(re.Stderr)), "no such") {
			return fmt.Errorf("remove balancer %s: %w", container, err)
		}
	}
	c.mu.Lock()
	delete(c.applied, container)
	c.mu.Unlock()
	for _, sn := range subnets {
		if err := c.removeNetworkIfUnused(ctx, SubnetNetwork(sn.ID)); err != nil {
			return err
		}
	}
	return nil
}

// removeNetworkIfUnused removes a subnet's network when no container is attached to it any more
// (the machines of EC2 instances and other balancers keep it).
func (c *ContainerBalancers) removeNetworkIfUnused(ctx context.Context, name string) error {
	mgr, _, err := c.manager(ctx)
	if err != nil {
		return err
	}
	n, err := c.docker(ctx, "network", "inspect", "-f", "{{len .Containers}}", name)
	if err != nil || n != "0" {
		return nil // gone already, or used
	}
	if err := removeSubnetNetwork(ctx, mgr, name); err != nil && !strings.Contains(err.Error(), "still used by") {
		return err // (a machine joining it meanwhile keeps it)
	}
	return nil
}

// RenderHAProxy is the HAProxy configuration of a balancer: a TCP frontend per listener, its
// backend balancing connections round robin over the targets, each checked the way the target
// group checks it (so HAProxy stops sending new connections to a target that fails, as the
// emulator's own checks then report it).
func RenderHAProxy(b Balancer) string {
	var w bytes.Buffer
	fmt.Fprintf(&w, "# nuv AWS emulator: the balancer of network load balancer %s (account %s)\n", b.LoadBalancer, b.Account)
	w.WriteString(`global
  log stdout format raw local0 notice

defaults
  mode tcp
  log global
  option dontlognull
  timeout connect 5s
  timeout client 350s
  timeout server 350s

# what tells that HAProxy runs, inside the container only
frontend nuv-alive
  bind 127.0.0.1:8405
  mode http
  http-request return status 200
`)
	for _, l := range b.Listeners {
		name := "tcp-" + strconv.Itoa(l.Port)
		fmt.Fprintf(&w, "\nfrontend %s\n  bind :%d\n  default_backend %s\n", name, l.Port, name)
		fmt.Fprintf(&w, "\nbackend %s\n  balance roundrobin\n  timeout check %s\n", name, hapDuration(l.Check.Timeout))
		checkOpts := ""
		switch l.Check.Protocol {
		case "HTTP", "HTTPS":
			fmt.Fprintf(&w, "  option httpchk GET %s\n", l.Check.Path)
			if l.Check.Protocol == "HTTPS" {
				checkOpts = " check-ssl verify none"
			}
		}
		if l.Check.Port != 0 {
			checkOpts += " port " + strconv.Itoa(l.Check.Port)
		}
		for i, t := range l.Targets {
			fmt.Fprintf(&w, "  server t%d %s check inter %s rise %d fall %d%s\n", i+1, net.JoinHostPort(t.IP, strconv.Itoa(t.Port)),
				hapDuration(l.Check.Interval), l.Check.Rise, l.Check.Fall, checkOpts)
		}
	}
	return w.String()
}

func hapDuration(d time.Duration) string {
	if d <= 0 {
		d = 10 * time.Second
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}
