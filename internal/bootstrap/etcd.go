package bootstrap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
)

// Paths of an etcd member's files (kubeadm's).
const (
	etcdManifest = "/etc/kubernetes/manifests/etcd.yaml"
	etcdServer   = PKIDir + "/etcd/server"
	etcdPeer     = PKIDir + "/etcd/peer"
	kubeletDrop  = "/etc/systemd/system/kubelet.service.d/20-nuv-etcd.conf"
	kubeletYAML  = "/var/lib/kubelet/config.yaml"
)

// etcdWait bounds the wait for a member to answer and join.
var etcdWait = 3 * time.Minute

// Now is the clock certificates are issued by.
var now = time.Now

// etcdCA is the external etcd tier's CA: made once by the first member's step, read back from any
// member afterwards (each member keeps it, as each control plane keeps kubeadm's).
func (b *Bootstrap) etcdCA(ctx context.Context, step string, create bool, from []Machine) (*CA, error) {
	if b.ca != nil {
		return b.ca, nil
	}
	for _, m := range from {
		crt, err := m.ReadFile(ctx, etcdCACert)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			b.logf("%s: %s does not answer (%v); the etcd CA from another machine", step, m.Name(), err)
			continue
		}
		key, err := b.read(ctx, step, m, etcdCAKey)
		if err != nil {
			return nil, err
		}
		ca, err := ParseCA(crt, key)
		if err != nil {
			return nil, fmt.Errorf("%s on %s: %s: %w", step, m.Name(), etcdCACert, err)
		}
		b.ca = ca
		return ca, nil
	}
	if !create {
		return nil, fmt.Errorf("%s: no machine has the etcd CA (%s)", step, etcdCACert)
	}
	ca, err := NewCA("etcd-ca", now())
	if err != nil {
		return nil, fmt.Errorf("%s: make the etcd CA: %w", step, err)
	}
	b.ca = ca
	return ca, nil
}

// EtcdMember starts external etcd member i (Cluster.Etcd[i]), one at a time: its certificates
// (server and peer, signed by the etcd CA nuv makes with the first member), a standalone kubelet,
// and the static pod kubeadm writes (`kubeadm init phase etcd local`). The first member of a new
// tier starts a cluster of its own; any other is first added to the member list of the running
// ones as a learner, started with initial-cluster-state=existing, and promoted once it has caught
// up. A member that is in the member list and answers is left alone. A machine that runs no
// member while the list holds one at its address or under its name (a lost machine's, healed at
// the same address or another) has that member removed first and is added anew, with fresh
// certificates.
func (b *Bootstrap) EtcdMember(ctx context.Context, i int) error {
	c := &b.Cluster
	m := c.Etcd[i]
	step := "etcd member"
	others := append(append([]Machine(nil), c.Etcd[:i]...), c.Etcd[i+1:]...)
	ca, err := b.etcdCA(ctx, step, true, append([]Machine{m}, others...))
	if err != nil {
		return err
	}
	if err := b.memberFiles(ctx, step, m, ca); err != nil {
		return err
	}
	started, err := b.exists(ctx, step, m, etcdManifest)
	if err != nil {
		return err
	}
	// the running members: the others with a manifest
	var running []Machine
	for _, o := range others {
		ok, err := b.exists(ctx, step, o, etcdManifest)
		if err != nil {
			b.logf("%s: %s does not answer: %v", step, o.Name(), err)
			continue
		}
		if ok {
			running = append(running, o)
		}
	}
	peerURL := "https://" + hostPort(m.Address(), EtcdPeerPort)
	if started {
		return b.waitMember(ctx, step, m, append(running, m), peerURL)
	}
	initial := []string{m.Name() + "=" + peerURL}
	existing := len(running) > 0
	if existing {
		cli, err := b.etcdClient(ctx, ca, running)
		if err != nil {
			return fmt.Errorf("%s %s: %w", step, m.Name(), err)
		}
		defer cli.Close()
		list, err := cli.MemberList(ctx)
		if err != nil {
			return fmt.Errorf("%s %s: member list: %w", step, m.Name(), err)
		}
		for _, mem := range list.Members {
			if !contains(mem.PeerURLs, peerURL) && mem.Name != m.Name() {
				continue
			}
			// A member at m's address or under m's name while m runs no etcd: the member of a
			// machine that was lost (or replaced), whose data went with it, or a learner added
			// by an apply killed before it started the member. It is removed, and m added anew
			// with its own certificates: a member never restarts without its data.
			b.logf("%s: remove member %x (%s, %v): %s runs no etcd member; it is added anew", step, mem.ID, orNone(mem.Name), mem.PeerURLs, m.Name())
			if _, err := cli.MemberRemove(ctx, mem.ID); err != nil {
				return fmt.Errorf("%s %s: remove the dead member %x: %w", step, m.Name(), mem.ID, err)
			}
		}
		if list, err = cli.MemberList(ctx); err != nil {
			return fmt.Errorf("%s %s: member list: %w", step, m.Name(), err)
		}
		for _, mem := range list.Members {
			if mem.Name == "" {
				return fmt.Errorf("%s %s: member %x (%v) was added but never started: remove it first", step, m.Name(), mem.ID, mem.PeerURLs)
			}
			initial = append(initial, mem.Name+"="+mem.PeerURLs[0])
		}
		b.logf("%s: add %s to the member list as a learner", step, m.Name())
		// etcd refuses a new member until every started one has been reachable for a while
		// ("unhealthy cluster"): a member that just joined may not count yet; ask again.
		for deadline := time.Now().Add(2 * time.Minute); ; {
			_, err := cli.MemberAddAsLearner(ctx, []string{peerURL})
			if err == nil {
				break
			}
			if !strings.Contains(err.Error(), "unhealthy cluster") || time.Now().After(deadline) {
				return fmt.Errorf("%s %s: member add: %w", step, m.Name(), err)
			}
			b.logf("%s: etcd is not ready for a new member yet (%v); asking again", step, err)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(2 * time.Second):
			}
		}
	}
	cfg, err := c.EtcdMemberConfig(m, initial, existing)
	if err != nil {
		return err
	}
	path := ConfigDir + "/etcd.yaml"
	if err := b.write(ctx, step, m, path, cfg, 0o600); err != nil {
		return err
	}
	b.logf("%s: start %s (%d member(s) before it)", step, m.Name(), len(running))
	if _, err := b.run(ctx, step, m, "kubeadm init phase etcd local --config "+path+" 2>&1\n", nil); err != nil {
		return err
	}
	return b.waitMember(ctx, step, m, append(running, m), peerURL)
}

// orNone is s, or "unstarted" for a member that never started (no name yet).
func orNone(s string) string {
	if s == "" {
		return "unstarted"
	}
	return s
}

// memberFiles puts the CA, the member's server and peer certificates and its standalone kubelet
// on m, where they are not yet.
func (b *Bootstrap) memberFiles(ctx context.Context, step string, m Machine, ca *CA) error {
	have, err := b.exists(ctx, step, m, etcdPeer+".key")
	if err != nil {
		return err
	}
	if !have {
		hosts := []string{m.Name(), "localhost", "127.0.0.1", "::1", m.Address()}
		srv, srvKey, err := ca.Issue(CertRequest{CommonName: m.Name(), Hosts: hosts, Server: true, Client: true}, now())
		if err != nil {
			return err
		}
		peer, peerKey, err := ca.Issue(CertRequest{CommonName: m.Name(), Hosts: hosts, Server: true, Client: true}, now())
		if err != nil {
			return err
		}
		for _, f := range []struct {
			path string
			data []byte
			mode fs.FileMode
		}{{etcdCACert, ca.CertPEM, 0o644}, {etcdCAKey, ca.KeyPEM, 0o600},
			{etcdServer + ".crt", srv, 0o644}, {etcdServer + ".key", srvKey, 0o600},
			{etcdPeer + ".crt", peer, 0o644}, {etcdPeer + ".key", peerKey, 0o600}} {
			if err := b.write(ctx, step, m, f.path, f.data, f.mode); err != nil {
				return err
			}
		}
	}
	kc, err := b.Cluster.EtcdKubeletConfig()
	if err != nil {
		return err
	}
	cur, _ := m.ReadFile(ctx, kubeletYAML)
	drop, _ := m.ReadFile(ctx, kubeletDrop)
	if string(cur) == string(kc) && string(drop) == etcdKubeletDropIn {
		return nil
	}
	if err := b.write(ctx, step, m, kubeletYAML, kc, 0o644); err != nil {
		return err
	}
	if err := b.write(ctx, step, m, kubeletDrop, []byte(etcdKubeletDropIn), 0o644); err != nil {
		return err
	}
	_, err = b.run(ctx, step, m, "systemctl daemon-reload\nsystemctl enable kubelet >/dev/null 2>&1 || true\nsystemctl restart kubelet\n", nil)
	return err
}

// waitMember waits until m's member answers and is a voting member of the list (a learner is
// promoted once it has caught up).
func (b *Bootstrap) waitMember(ctx context.Context, step string, m Machine, members []Machine, peerURL string) error {
	cli, err := b.etcdClient(ctx, b.ca, members)
	if err != nil {
		return fmt.Errorf("%s %s: %w", step, m.Name(), err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, etcdWait)
	defer cancel()
	var last error
	for {
		last = b.checkMember(ctx, cli, m, peerURL)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s %s: not a healthy member after %s: %w", step, m.Name(), etcdWait, last)
		case <-time.After(time.Second):
		}
	}
}

func (b *Bootstrap) checkMember(ctx context.Context, cli *clientv3.Client, m Machine, peerURL string) error {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	list, err := cli.MemberList(cctx)
	if err != nil {
		return err
	}
	for _, mem := range list.Members {
		if !contains(mem.PeerURLs, peerURL) {
			continue
		}
		if mem.IsLearner {
			if _, err := cli.MemberPromote(cctx, mem.ID); err != nil {
				return fmt.Errorf("promote the learner: %w", err)
			}
			b.logf("etcd member: %s promoted", m.Name())
			return errors.New("promoted; checking again")
		}
		if mem.Name == "" {
			return errors.New("the member has not started")
		}
		if _, err := cli.Status(cctx, "https://"+hostPort(m.Address(), EtcdClientPort)); err != nil {
			return fmt.Errorf("status: %w", err)
		}
		return nil
	}
	return fmt.Errorf("%s is not in the member list", peerURL)
}

// etcdClient is an etcd v3 client of the members' client URLs, authenticated with a client
// certificate signed in memory by the etcd CA (valid for an hour, never written anywhere).
func (b *Bootstrap) etcdClient(ctx context.Context, ca *CA, members []Machine) (*clientv3.Client, error) {
	if len(members) == 0 {
		return nil, errors.New("no etcd member to ask")
	}
	crt, key, err := ca.Issue(CertRequest{CommonName: "nuv", Client: true}, now())
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	var eps []string
	for _, m := range members {
		eps = append(eps, "https://"+hostPort(m.Address(), EtcdClientPort))
	}
	cfg := clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second, Context: ctx, Logger: zap.NewNop(),
		TLS: &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, MinVersion: tls.VersionTLS12}}
	if b.Dial != nil {
		cfg.DialOptions = append(cfg.DialOptions, grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return b.Dial(ctx, addr)
		}))
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd client of %s: %w", strings.Join(eps, ","), err)
	}
	return cli, nil
}

// placeEtcdClient puts the external etcd CA's certificate and the API server's etcd client
// certificate on control plane m, where they are not yet.
func (b *Bootstrap) placeEtcdClient(ctx context.Context, step string, m Machine) error {
	have, err := b.exists(ctx, step, m, etcdClientKey)
	if err != nil || have {
		return err
	}
	ca, err := b.etcdCA(ctx, step, false, b.Cluster.Etcd)
	if err != nil {
		return err
	}
	crt, key, err := ca.Issue(CertRequest{CommonName: "kube-apiserver-etcd-client", Client: true}, now())
	if err != nil {
		return err
	}
	if err := b.write(ctx, step, m, etcdCACert, ca.CertPEM, 0o644); err != nil {
		return err
	}
	if err := b.write(ctx, step, m, etcdClientCert, crt, 0o644); err != nil {
		return err
	}
	return b.write(ctx, step, m, etcdClientKey, key, 0o600)
}

// RemoveEtcdMember removes the etcd member of machine name (a dead control plane with stacked
// etcd, or a dead machine of the external tier) through the surviving members, so that a
// replacement can join and the quorum counts only live members. A name that is not a member is
// nothing to do.
func (b *Bootstrap) RemoveEtcdMember(ctx context.Context, name string) error {
	step := "remove etcd member " + name
	pool := b.Cluster.ControlPlanes
	if len(b.Cluster.Etcd) > 0 {
		pool = b.Cluster.Etcd
	}
	var survivors []Machine
	var dead Machine
	for _, m := range pool {
		if m.Name() == name {
			dead = m
			continue
		}
		survivors = append(survivors, m)
	}
	ca, err := b.etcdCA(ctx, step, false, survivors)
	if err != nil {
		return err
	}
	cli, err := b.etcdClient(ctx, ca, survivors)
	if err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	defer cli.Close()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	list, err := cli.MemberList(cctx)
	if err != nil {
		return fmt.Errorf("%s: member list: %w", step, err)
	}
	for _, mem := range list.Members {
		match := mem.Name == name
		if dead != nil && !match {
			match = contains(mem.PeerURLs, "https://"+hostPort(dead.Address(), EtcdPeerPort))
		}
		if !match {
			continue
		}
		b.logf("%s: member %x", step, mem.ID)
		// etcd refuses to remove a member while the others have not all been connected for a
		// while ("unhealthy cluster": one that just joined, after a heal or the previous roll's
		// machine); ask again.
		for deadline := time.Now().Add(2 * time.Minute); ; {
			_, err := cli.MemberRemove(ctx, mem.ID)
			if err == nil {
				return nil
			}
			if !strings.Contains(err.Error(), "unhealthy cluster") || time.Now().After(deadline) {
				return fmt.Errorf("%s: %w", step, err)
			}
			b.logf("%s: etcd is not ready to remove a member yet (%v); asking again", step, err)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(2 * time.Second):
			}
		}
	}
	b.logf("%s: not a member", step)
	return nil
}

// EtcdMembers lists the names of the etcd cluster's members (stacked or external), asked of the
// given members (nil: every etcd machine, or every control plane).
func (b *Bootstrap) EtcdMembers(ctx context.Context) ([]string, error) {
	pool := b.Cluster.ControlPlanes
	if len(b.Cluster.Etcd) > 0 {
		pool = b.Cluster.Etcd
	}
	ca, err := b.etcdCA(ctx, "etcd members", false, pool)
	if err != nil {
		return nil, err
	}
	cli, err := b.etcdClient(ctx, ca, pool)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	list, err := cli.MemberList(cctx)
	if err != nil {
		return nil, fmt.Errorf("etcd member list: %w", err)
	}
	var names []string
	for _, mem := range list.Members {
		names = append(names, mem.Name)
	}
	return names, nil
}

// apiServerManifest is the static pod kubeadm writes for a control plane's API server.
const apiServerManifest = "/etc/kubernetes/manifests/kube-apiserver.yaml"

// EtcdServersFlag is the API server's flag listing the external etcd tier's client URLs, as the
// cluster's etcd machines are now.
func (c *Cluster) EtcdServersFlag() string {
	var eps []string
	for _, m := range c.Etcd {
		eps = append(eps, "https://"+hostPort(m.Address(), EtcdClientPort))
	}
	return "--etcd-servers=" + strings.Join(eps, ",")
}

// RepointEtcd brings the control planes to the external etcd tier's addresses after a member
// moved (a lost etcd machine healed at another address): each API server's --etcd-servers (the
// kubelet restarts it when its manifest changes) and kubeadm's ClusterConfiguration in the
// cluster (which later joins read). Control planes already right, and a cluster not initialised
// yet, are left alone.
func (b *Bootstrap) RepointEtcd(ctx context.Context) error {
	const step = "repoint etcd"
	c := &b.Cluster
	if len(c.Etcd) == 0 {
		return nil
	}
	want := c.EtcdServersFlag()
	changed := false
	for _, m := range c.ControlPlanes {
		cur, err := m.ReadFile(ctx, apiServerManifest)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s on %s: read %s: %w", step, m.Name(), apiServerManifest, err)
		}
		next, ok := replaceFlag(string(cur), want)
		if !ok || next == string(cur) {
			continue
		}
		b.logf("%s: %s: %s", step, m.Name(), want)
		if err := b.write(ctx, step, m, apiServerManifest, []byte(next), 0o600); err != nil {
			return err
		}
		changed = true
	}
	if !changed || len(c.ControlPlanes) == 0 {
		return nil
	}
	m := c.ControlPlanes[0]
	cfg, err := c.UploadCertsConfig(m, Secrets{})
	if err != nil {
		return err
	}
	path := ConfigDir + "/upload-config.yaml"
	if err := b.write(ctx, step, m, path, cfg, 0o600); err != nil {
		return err
	}
	_, err = b.run(ctx, step, m, "kubeadm init phase upload-config kubeadm --config "+path+" 2>&1\nrm -f "+path+"\n", nil)
	return err
}

// replaceFlag replaces the line of manifest that sets flag (want's name) with want, keeping its
// indentation; ok is false when no line sets it.
func replaceFlag(manifest, want string) (string, bool) {
	name, _, _ := strings.Cut(want, "=")
	lines := strings.Split(manifest, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if !strings.HasPrefix(t, "- "+name+"=") {
			continue
		}
		lines[i] = l[:strings.Index(l, "- ")] + "- " + want
		return strings.Join(lines, "\n"), true
	}
	return manifest, false
}
