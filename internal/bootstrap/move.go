package bootstrap

import (
	"context"
	"fmt"
)

// What a control plane's state is: kubeadm's and nuv's files (certificates, kubeconfigs, static
// pod manifests, markers), stacked etcd's data, the kubelet's configuration and credentials, and
// the pod network's configuration.
var controlPlaneState = []string{"etc/kubernetes", "var/lib/etcd", "var/lib/kubelet/config.yaml",
	"var/lib/kubelet/kubeadm-flags.env", "var/lib/kubelet/pki", "etc/cni/net.d"}

// stateArchive is where the archive of a control plane's state is staged on a machine (0600,
// removed after use).
const stateArchive = ConfigDir + "/.state.tgz"

// SaveControlPlane stops the lone control plane m (its static pods, etcd last, then the kubelet),
// so that etcd's data is consistent, and returns its state as a gzipped tar archive: what a cloud
// keeps on a control plane's volume. Its replacement, at the same address and under the same
// name, starts from it as the same etcd member (RestoreControlPlane). The archive holds the
// cluster's keys: the caller keeps it in memory only.
func SaveControlPlane(ctx context.Context, b *Bootstrap, m Machine) ([]byte, error) {
	const step = "save control-plane state"
	b.logf("%s: %s (the API stops)", step, m.Name())
	script := `set -e
mf=/etc/kubernetes/manifests
if [ -d $mf ] && [ -n "$(ls -A $mf)" ]; then
  mkdir -p /etc/kubernetes/manifests.stopped
  mv $mf/* /etc/kubernetes/manifests.stopped/
  i=0
  while grep -qsxE 'etcd|kube-apiserver' /proc/[0-9]*/comm; do
    i=$((i+1)); [ $i -lt 120 ] || { echo "the static pods do not stop" >&2; exit 1; }
    sleep 1
  done
  systemctl stop kubelet
  mv /etc/kubernetes/manifests.stopped/* $mf/
  rmdir /etc/kubernetes/manifests.stopped
fi
systemctl stop kubelet
files=""
for f in ` + joinWords(controlPlaneState) + `; do [ -e /$f ] && files="$files $f"; done
umask 077
tar -C / -czf ` + stateArchive + ` --exclude=` + stateArchive[1:] + ` $files
`
	if _, err := b.run(ctx, step, m, script, nil); err != nil {
		return nil, err
	}
	data, err := b.read(ctx, step, m, stateArchive)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%s on %s: the archive is empty", step, m.Name())
	}
	return data, nil
}

// RestoreControlPlane puts the state SaveControlPlane read on machine m (the replacement, same
// name and address) and starts its kubelet, which starts the static pods: etcd resumes as the same
// member with its data, the API server with its certificates.
func RestoreControlPlane(ctx context.Context, b *Bootstrap, m Machine, state []byte) error {
	const step = "restore control-plane state"
	b.logf("%s: %s", step, m.Name())
	if err := b.write(ctx, step, m, stateArchive, state, 0o600); err != nil {
		return err
	}
	_, err := b.run(ctx, step, m, "set -e\ntar -C / -xzf "+stateArchive+"\nrm -f "+stateArchive+
		"\nsystemctl daemon-reload\nsystemctl enable kubelet >/dev/null 2>&1 || true\nsystemctl restart kubelet\n", nil)
	return err
}

func joinWords(ws []string) string {
	out := ""
	for i, w := range ws {
		if i > 0 {
			out += " "
		}
		out += shq(w)
	}
	return out
}
