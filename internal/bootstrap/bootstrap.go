package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strconv"
	"strings"

	"github.com/nuv-dev/nuv/internal/machine"
)

// Machine is what the bootstrap needs of a machine (package machine's: its name is the node name;
// nuv's SSH and docker-exec machines implement it).
type Machine = machine.Machine

// Host is what the configuration must adapt to on the machines.
type Host struct {
	// CgroupV1: the machines mount cgroup v1; kubelet 1.35+ refuses to start there unless its
	// configuration says failCgroupV1: false.
	CgroupV1 bool
	// Containerized: the machines are containers of nuv's node image sharing the host's kernel and
	// disk (emulated instances): the kubelet runs under the /kubelet cgroup the image's entrypoint
	// makes, does not refuse swap, does not evict on the host's disk usage, and kube-proxy leaves the
	// host-wide conntrack table size alone.
	Containerized bool
	// Emulator names the cloud emulator whose instances the machines are (the emulator says so in
	// /etc/nuv/emulator on each machine it boots: "aws"); empty on a cloud's real machines.
	Emulator string
}

// Cluster is what the bootstrap makes and the machines it makes it on.
type Cluster struct {
	// Name is the cluster's name (kubeadm's clusterName, the kubeconfig's cluster).
	Name string
	// KubernetesVersion is the version the machines carry ("1.36.3" or "v1.36.3").
	KubernetesVersion string
	// Endpoint is host:port of the load balancer in front of the API servers (kubeadm's
	// controlPlaneEndpoint; the kubeconfig's server).
	Endpoint string
	// CertSANs are extra names and addresses of the API server certificate (the load balancer's
	// DNS name, say); the endpoint's host is always one.
	CertSANs []string
	// PodCIDR and ServiceCIDR are the cluster's pod and Service ranges.
	PodCIDR, ServiceCIDR string
	// ControlPlanes are the control-plane machines, the first one initialising the cluster.
	ControlPlanes []Machine
	// Workers are the worker machines.
	Workers []Machine
	// Etcd are the machines of an external etcd tier (placement: external); none means etcd
	// stacked on the control planes.
	Etcd []Machine
	// LoadBalancer is a machine running HAProxy in front of the control planes; nil when the
	// endpoint is something else (a cloud load balancer, or a control plane itself).
	LoadBalancer Machine
	// Host holds the machines' facts.
	Host Host
	// NodeLabels are labels every node registers with (the kubelet's --node-labels): nuv marks
	// its self-managed clusters' nodes with them (nuv.dev/provider, nuv.dev/bootstrap, ...). Keys
	// under kubernetes.io and k8s.io are refused by the NodeRestriction admission; nuv's are not.
	NodeLabels map[string]string
	// KubeProxyMode is kube-proxy's mode ("" is nftables, which has one front-end where iptables'
	// legacy and nft front-ends may disagree).
	KubeProxyMode string
}

// Secrets are what joining machines need: a bootstrap token, the key the control-plane
// certificates are uploaded with, and the hash of the cluster CA's public key. The provider keeps
// them in its state (never in a plan or a log); their String and GoString say nothing.
type Secrets struct {
	Token          string
	CertificateKey string
	CACertHash     string
}

func (Secrets) String() string   { return "bootstrap secrets (redacted)" }
func (Secrets) GoString() string { return "bootstrap.Secrets{redacted}" }

func (s Secrets) values() []string { return []string{s.Token, s.CertificateKey} }

// Bootstrap runs the steps over a cluster's machines.
type Bootstrap struct {
	Cluster Cluster
	// Secrets are the join secrets; Init fills them (read back from the first control plane when
	// it was already initialised), the provider may set them from its state.
	Secrets Secrets
	// Dial connects to host:port of a machine (etcd's client port); nil is a plain TCP dial from
	// this process.
	Dial func(ctx context.Context, address string) (net.Conn, error)
	// Log receives one line per action (never a secret); nil discards.
	Log func(format string, args ...any)
	// Kubeconfig is the admin kubeconfig the kubeconfig step read back (server: the endpoint).
	Kubeconfig []byte

	// fresh: the token and the uploaded certificates were made in this run
	fresh bool
	// ca: the etcd CA (external tier) or kubeadm's etcd CA (stacked), once read
	ca *CA
}

func (b *Bootstrap) logf(format string, args ...any) {
	if b.Log != nil {
		b.Log(format, args...)
	}
}

// Validate checks the cluster before any step runs: every error names the field.
func (c *Cluster) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("cluster name is empty"))
	}
	if _, err := parseVersion(c.KubernetesVersion); err != nil {
		errs = append(errs, err)
	}
	if host, port, err := net.SplitHostPort(c.Endpoint); err != nil || host == "" {
		errs = append(errs, fmt.Errorf("control-plane endpoint %q is not host:port", c.Endpoint))
	} else if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		errs = append(errs, fmt.Errorf("control-plane endpoint %q: port %q is not 1-65535", c.Endpoint, port))
	}
	for _, f := range []struct{ name, v string }{{"pod CIDR", c.PodCIDR}, {"service CIDR", c.ServiceCIDR}} {
		if _, _, err := net.ParseCIDR(f.v); err != nil {
			errs = append(errs, fmt.Errorf("%s %q is not a CIDR", f.name, f.v))
		}
	}
	if len(c.ControlPlanes) == 0 {
		errs = append(errs, errors.New("no control-plane machine"))
	}
	if n := len(c.Etcd); n != 0 && n%2 == 0 {
		errs = append(errs, fmt.Errorf("%d etcd machines: an etcd cluster has an odd number of members (1, 3, 5)", n))
	}
	seen := map[string]string{}
	for _, g := range []struct {
		role string
		ms   []Machine
	}{{"control plane", c.ControlPlanes}, {"worker", c.Workers}, {"etcd", c.Etcd}, {"load balancer", nonNil(c.LoadBalancer)}} {
		for _, m := range g.ms {
			if m.Name() == "" || net.ParseIP(m.Address()) == nil {
				errs = append(errs, fmt.Errorf("%s machine %q: address %q is not an IP address", g.role, m.Name(), m.Address()))
			}
			if r, ok := seen[m.Name()]; ok {
				errs = append(errs, fmt.Errorf("machine %q is both %s and %s", m.Name(), r, g.role))
			}
			seen[m.Name()] = g.role
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cluster %q: %w", c.Name, errors.Join(errs...))
	}
	return nil
}

func nonNil(m Machine) []Machine {
	if m == nil {
		return nil
	}
	return []Machine{m}
}

// version is a Kubernetes version's major, minor and patch.
type version struct{ major, minor, patch int }

func (v version) String() string { return fmt.Sprintf("v%d.%d.%d", v.major, v.minor, v.patch) }

// parseVersion reads "1.36.3" or "v1.36.3"; kubeadm's v1beta4 configuration needs 1.31 or later.
func parseVersion(s string) (version, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	var v version
	if len(parts) != 3 {
		return v, fmt.Errorf("kubernetes version %q is not MAJOR.MINOR.PATCH", s)
	}
	fields := []*int{&v.major, &v.minor, &v.patch}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, fmt.Errorf("kubernetes version %q is not MAJOR.MINOR.PATCH", s)
		}
		*fields[i] = n
	}
	if v.major != 1 || v.minor < 31 {
		return v, fmt.Errorf("kubernetes version %q: nuv bootstraps 1.31 and later (kubeadm's v1beta4 configuration)", s)
	}
	return v, nil
}

// run runs a script on m for step; a failure names the step and the machine and quotes the end of
// the output with the secrets redacted.
func (b *Bootstrap) run(ctx context.Context, step string, m Machine, script string, stdin io.Reader) ([]byte, error) {
	out, err := m.Run(ctx, script, stdin)
	if err != nil {
		return out, &StepError{Step: step, Machine: m.Name(), msg: string(b.redact([]byte(err.Error()))) + quote(b.redact(out)), err: err}
	}
	return out, nil
}

// StepError is a step that failed on a machine. Its message has the join secrets redacted; the
// error it wraps may not.
type StepError struct {
	Step, Machine string
	msg           string
	err           error
}

func (e *StepError) Error() string { return e.Step + " on " + e.Machine + ": " + e.msg }
func (e *StepError) Unwrap() error { return e.err }

// exists reports whether path exists on m.
func (b *Bootstrap) exists(ctx context.Context, step string, m Machine, path string) (bool, error) {
	out, err := b.run(ctx, step, m, "if [ -e "+shq(path)+" ]; then echo yes; else echo no; fi", nil)
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(out)) == "yes", nil
}

func (b *Bootstrap) write(ctx context.Context, step string, m Machine, path string, data []byte, mode fs.FileMode) error {
	if err := m.WriteFile(ctx, path, data, mode); err != nil {
		return fmt.Errorf("%s on %s: write %s: %w", step, m.Name(), path, err)
	}
	return nil
}

func (b *Bootstrap) read(ctx context.Context, step string, m Machine, path string) ([]byte, error) {
	data, err := m.ReadFile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: read %s: %w", step, m.Name(), path, err)
	}
	return data, nil
}

// redact replaces every secret value in out.
func (b *Bootstrap) redact(out []byte) []byte {
	for _, s := range b.Secrets.values() {
		if len(s) >= 6 {
			out = bytes.ReplaceAll(out, []byte(s), []byte("<redacted>"))
		}
	}
	// a token's secret half, should a tool print it alone
	if _, sec, ok := strings.Cut(b.Secrets.Token, "."); ok && len(sec) >= 6 {
		out = bytes.ReplaceAll(out, []byte(sec), []byte("<redacted>"))
	}
	return out
}

// quote is the last lines of a command's output for an error message.
func quote(out []byte) string {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return ""
	}
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return "\n" + s
}

// shq quotes s for a POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
