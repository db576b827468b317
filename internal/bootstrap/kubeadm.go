package bootstrap

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"strings"
)

// Markers nuv writes when a kubeadm command has finished: kubeadm writes admin.conf and
// kubelet.conf part-way through, so only the marker says the command completed.
const (
	initDone = ConfigDir + "/init.done"
	joinDone = ConfigDir + "/join.done"
)

// What a kubeadm command left on a machine.
const (
	stateNone    = "none"    // it never ran
	statePartial = "partial" // it ran part-way (its files, no marker)
	stateDone    = "done"    // it completed (the marker)
)

// kubeadmWait bounds the wait for a kubeadm still running on a machine (seconds): longer than
// kubeadm's own longest wait (timeouts).
const kubeadmWait = 900

// KubeadmLog is the file on a machine that keeps what nuv's kubeadm commands print (0600). kubeadm
// writes there, never to nuv's connection: a kubeadm that outlives a killed apply would otherwise
// die at its next line of output (the connection is gone) and leave its work half-done; this way
// it completes, and the marker after it is written, for the next apply to find. A failed
// command's error carries the end of the file.
const KubeadmLog = "/var/log/nuv-kubeadm.log"

// kubeadmScript runs a kubeadm command line, its output in KubeadmLog, then removes its
// configuration file and writes marker: one script, so a kubeadm that outlives nuv still marks
// its completion.
func kubeadmScript(cmdline, config, marker string) string {
	return cmdline + " </dev/null >>" + KubeadmLog + " 2>&1 || { rc=$?; tail -n 40 " + KubeadmLog + "; " + kubeletReport + " exit $rc; }\n" +
		"rm -f " + config + "\ntouch " + marker + "\n"
}

// kubeletReport prints, after a failed kubeadm, what its most common failure ("the kubelet is not
// healthy") needs to be understood: how far the machine's systemd got, the kubelet's and
// containerd's unit states and the end of the kubelet's journal.
const kubeletReport = `echo "--- systemd: $(systemctl is-system-running 2>&1); kubelet: $(systemctl is-active kubelet 2>&1); containerd: $(systemctl is-active containerd 2>&1); the kubelet's journal:"; journalctl -u kubelet --no-pager -n 15 -o cat 2>&1 | cut -c1-300;`

// kubeadmState waits until no kubeadm runs on m (one a killed apply left running finishes, and
// the script that ran it writes its marker, first) and says whether the command completed
// (marker), ran part-way (its file partial) or never ran.
func (b *Bootstrap) kubeadmState(ctx context.Context, step string, m Machine, marker, partial string) (string, error) {
	script := fmt.Sprintf(`i=0
while grep -qsx kubeadm /proc/[0-9]*/comm; do
  i=$((i+1)); [ $i -lt %d ] || { echo "a kubeadm still runs after %d s" >&2; exit 1; }
  sleep 1
done
j=0
while [ $i -gt 0 ] && [ $j -lt 5 ] && [ ! -e %s ]; do j=$((j+1)); sleep 1; done
[ -e %s ] && echo %s && exit 0
[ -e %s ] && echo %s && exit 0
echo %s
`, kubeadmWait, kubeadmWait, shq(marker), shq(marker), stateDone, shq(partial), statePartial, stateNone)
	out, err := b.run(ctx, step, m, script, nil)
	if err != nil {
		return "", err
	}
	switch st := strings.TrimSpace(string(out)); st {
	case stateNone, statePartial, stateDone:
		return st, nil
	default:
		return "", fmt.Errorf("%s on %s: unexpected state %q", step, m.Name(), st)
	}
}

const uploadCerts = ConfigDir + "/upload-certs.yaml"

const kubeadmFlags = " --skip-token-print --skip-certificate-key-print"

// Init runs `kubeadm init --upload-certs` on the first control plane with the load balancer as
// controlPlaneEndpoint, once: a machine where it completed (nuv's marker) is left alone, and its
// secrets are read back when the provider has none. An init interrupted part-way (admin.conf
// without the marker; no machine can have joined yet) is reset and run again.
func (b *Bootstrap) Init(ctx context.Context) error {
	const step = "kubeadm init"
	c := &b.Cluster
	m := c.ControlPlanes[0]
	st, err := b.kubeadmState(ctx, step, m, initDone, AdminConf)
	if err != nil {
		return err
	}
	if st == stateDone {
		b.logf("%s: %s is initialised", step, m.Name())
		return b.readCAHash(ctx, step, m)
	}
	if len(c.Etcd) > 0 {
		if err := b.placeEtcdClient(ctx, step, m); err != nil {
			return err
		}
	}
	if st == statePartial {
		b.logf("%s: %s has an interrupted init: kubeadm reset", step, m.Name())
		if _, err := b.run(ctx, step, m, "kubeadm reset -f >/dev/null 2>&1 || true\nrm -rf /etc/cni/net.d/* /var/lib/etcd\n", nil); err != nil {
			return err
		}
		if len(c.Etcd) > 0 {
			if err := b.placeEtcdClient(ctx, step, m); err != nil {
				return err
			}
		}
	}
	if err := b.newSecrets(); err != nil {
		return err
	}
	cfg, err := c.InitConfig(m, b.Secrets)
	if err != nil {
		return err
	}
	path := ConfigDir + "/init.yaml"
	if err := b.write(ctx, step, m, path, cfg, 0o600); err != nil {
		return err
	}
	b.logf("%s: %s (endpoint %s)", step, m.Name(), c.Endpoint)
	if _, err := b.run(ctx, step, m, kubeadmScript("kubeadm init --config "+path+" --upload-certs"+kubeadmFlags, path, initDone), nil); err != nil {
		return err
	}
	b.fresh = true
	return b.readCAHash(ctx, step, m)
}

// newSecrets makes a bootstrap token and a certificate key where the provider gave none.
func (b *Bootstrap) newSecrets() error {
	if b.Secrets.Token == "" {
		t, err := NewToken()
		if err != nil {
			return err
		}
		b.Secrets.Token = t
	}
	if b.Secrets.CertificateKey == "" {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return fmt.Errorf("certificate key: %w", err)
		}
		b.Secrets.CertificateKey = hex.EncodeToString(k)
	}
	return nil
}

// NewToken makes a kubeadm bootstrap token ([a-z0-9]{6}.[a-z0-9]{16}).
func NewToken() (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	buf := make([]byte, 22)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("bootstrap token: %w", err)
	}
	out := make([]byte, 0, 23)
	for i, c := range buf {
		if i == 6 {
			out = append(out, '.')
		}
		out = append(out, alphabet[int(c)%len(alphabet)])
	}
	return string(out), nil
}

// readCAHash sets the CA hash of the secrets from the cluster CA on m.
func (b *Bootstrap) readCAHash(ctx context.Context, step string, m Machine) error {
	ca, err := b.read(ctx, step, m, PKIDir+"/ca.crt")
	if err != nil {
		return err
	}
	h, err := CACertHash(ca)
	if err != nil {
		return fmt.Errorf("%s on %s: %s/ca.crt: %w", step, m.Name(), PKIDir, err)
	}
	b.Secrets.CACertHash = h
	return nil
}

// CACertHash is kubeadm's discovery hash of a CA certificate (PEM): sha256 of its public key
// (SubjectPublicKeyInfo).
func CACertHash(caPEM []byte) (string, error) {
	blk, _ := pem.Decode(caPEM)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return "", fmt.Errorf("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// ensureJoinSecrets makes sure the token and the uploaded certificates are valid before a join:
// after Init in this run they are; otherwise (a resumed apply, a later scale-up: the token and
// the uploaded certificates expire after 2 hours) the token is created again and the
// certificates uploaded again with the key, both through the script's standard input.
func (b *Bootstrap) ensureJoinSecrets(ctx context.Context) error {
	if b.fresh {
		return nil
	}
	const step = "refresh join secrets"
	m := b.Cluster.ControlPlanes[0]
	if err := b.newSecrets(); err != nil {
		return err
	}
	if b.Secrets.CACertHash == "" {
		if err := b.readCAHash(ctx, step, m); err != nil {
			return err
		}
	}
	// the key goes in the configuration file (kubeadm refuses --certificate-key beside --config),
	// the token on the standard input
	script := `read -r token
kubeadm token delete "${token%%.*}" --kubeconfig ` + AdminConf + ` >/dev/null 2>&1 || true
kubeadm token create "$token" --ttl ` + tokenTTL + ` --kubeconfig ` + AdminConf + ` >/dev/null
kubeadm init phase upload-certs --upload-certs --config ` + uploadCerts + ` >/dev/null
rm -f ` + uploadCerts + `
`
	cfg, err := b.Cluster.UploadCertsConfig(m, b.Secrets)
	if err != nil {
		return err
	}
	if err := b.write(ctx, step, m, uploadCerts, cfg, 0o600); err != nil {
		return err
	}
	b.logf("%s: a bootstrap token and the control-plane certificates on %s", step, m.Name())
	if _, err := b.run(ctx, step, m, script, strings.NewReader(b.Secrets.Token+"\n")); err != nil {
		return err
	}
	b.fresh = true
	return nil
}

// JoinControlPlane joins control plane m (not the first) with `kubeadm join --control-plane` and
// the uploaded certificates; one at a time (kubeadm adds its etcd member). A machine that joined
// (nuv's marker) is left alone; one whose join was interrupted is reset, its etcd member removed,
// and joined again.
func (b *Bootstrap) JoinControlPlane(ctx context.Context, m Machine) error {
	return b.join(ctx, "join control plane", m, true)
}

// JoinWorker joins worker m with `kubeadm join`, the bootstrap token and the CA hash.
func (b *Bootstrap) JoinWorker(ctx context.Context, m Machine) error {
	return b.join(ctx, "join worker", m, false)
}

func (b *Bootstrap) join(ctx context.Context, step string, m Machine, controlPlane bool) error {
	c := &b.Cluster
	st, err := b.kubeadmState(ctx, step, m, joinDone, KubeletConf)
	if err != nil {
		return err
	}
	if st == stateDone {
		b.logf("%s: %s has joined", step, m.Name())
		return nil
	}
	if st == statePartial {
		b.logf("%s: %s has an interrupted join: kubeadm reset", step, m.Name())
		if err := b.Reset(ctx, m); err != nil {
			return err
		}
		if controlPlane && len(c.Etcd) == 0 {
			if err := b.RemoveEtcdMember(ctx, m.Name()); err != nil {
				return err
			}
		}
		if _, err := b.run(ctx, step, c.ControlPlanes[0], retried("kubectl --kubeconfig "+AdminConf+" delete node "+shq(m.Name())+" --ignore-not-found >/dev/null"), nil); err != nil {
			return err
		}
	}
	if err := b.ensureJoinSecrets(ctx); err != nil {
		return err
	}
	if controlPlane && len(c.Etcd) > 0 {
		if err := b.placeEtcdClient(ctx, step, m); err != nil {
			return err
		}
	}
	cfg, err := c.JoinConfig(m, controlPlane, b.Secrets)
	if err != nil {
		return err
	}
	path := ConfigDir + "/join.yaml"
	if err := b.write(ctx, step, m, path, cfg, 0o600); err != nil {
		return err
	}
	b.logf("%s: %s", step, m.Name())
	if _, err := b.run(ctx, step, m, kubeadmScript("kubeadm join --config "+path, path, joinDone), nil); err != nil {
		return err
	}
	return nil
}

// Reset undoes kubeadm on machine m that leaves the cluster (`kubeadm reset`, which removes a
// stacked control plane's own etcd member while etcd answers) and removes what reset leaves:
// the pod network's configuration, etcd's data, nuv's markers.
func (b *Bootstrap) Reset(ctx context.Context, m Machine) error {
	b.logf("reset: %s", m.Name())
	_, err := b.run(ctx, "reset", m, "kubeadm reset -f >/dev/null 2>&1 || true\nrm -rf /etc/cni/net.d/* /var/lib/etcd "+ConfigDir+"\n", nil)
	return err
}

// Drain cordons node and evicts its pods (DaemonSets' stay) through the first control plane's
// admin kubeconfig, before its machine leaves; a node that is not there is drained already.
func (b *Bootstrap) Drain(ctx context.Context, node string) error {
	m := b.Cluster.ControlPlanes[0]
	b.logf("drain: %s", node)
	script := "kc='kubectl --kubeconfig " + AdminConf + "'\n" +
		"$kc get node " + shq(node) + " >/dev/null 2>&1 || exit 0\n" +
		"$kc drain " + shq(node) + " --ignore-daemonsets --delete-emptydir-data --force --timeout=120s 2>&1\n"
	_, err := b.run(ctx, "drain "+node, m, script, nil)
	return err
}

// DeleteNode removes node's Node object (after Drain and Reset, when its machine is gone).
func (b *Bootstrap) DeleteNode(ctx context.Context, node string) error {
	// The pods bound to it go at once too (the pod garbage collector would take a minute): the
	// mirror pod of a lost control plane's etcd is where kubeadm looks for etcd's members.
	_, err := b.run(ctx, "delete node "+node, b.Cluster.ControlPlanes[0],
		retried("kubectl --kubeconfig "+AdminConf+" delete node "+shq(node)+" --ignore-not-found >/dev/null")+
			retried("kubectl --kubeconfig "+AdminConf+" delete pods --all-namespaces --field-selector spec.nodeName="+shq(node)+" --force --grace-period=0 --ignore-not-found >/dev/null"), nil)
	return err
}

// retried is a script line running command again, every 2 s for up to a minute, while it fails,
// and failing with its last error output after that. kubectl on the first control plane reaches the
// API through the load balancer, which keeps sending connections to an API server that just went
// away (a control plane reset in a roll, a lost machine) until its health check notices: such a
// request ends in "Unable to connect to the server: EOF" for a few seconds.
func retried(command string) string {
	return command + " 2>/tmp/nuv-kubectl.err || { i=0; until " + command + " 2>/tmp/nuv-kubectl.err; do " +
		"i=$((i+1)); if [ $i -ge 30 ]; then cat /tmp/nuv-kubectl.err >&2; exit 1; fi; sleep 2; done; }\n"
}

// Initialised reports whether m is the machine `kubeadm init` completed on (nuv's marker): the
// cluster's first control plane, which a provider puts first in Cluster.ControlPlanes and never
// joins.
func Initialised(ctx context.Context, m Machine) (bool, error) {
	out, err := m.Run(ctx, "if [ -e "+initDone+" ]; then echo yes; else echo no; fi\n", nil)
	if err != nil {
		return false, fmt.Errorf("is %s initialised: %w", m.Name(), err)
	}
	return strings.TrimSpace(string(out)) == "yes", nil
}
