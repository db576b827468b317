package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/machine"
)

// Machines loads the image into the containerd of nodes that are machines nuv made and reaches
// over SSH (a self-managed cluster's: `provider: aws`, on EC2 or on the emulator's machines): it
// streams a single-platform docker archive into `ctr -n k8s.io images import` on each node, as
// kind's node loading does through `docker exec`. The machines come from the file the provider
// keeps beside its SSH key (machine.HostsFile under Dir); each is dialled with its host key
// pinned. The same path works for real machines and emulated ones.
type Machines struct {
	// Dir holds nuv's SSH key of the cluster's machines and the machines file
	// (machine.ClusterDir: $NUV_HOME/aws/<cluster>).
	Dir string
	// Nodes names the nodes to load into (the cluster's nodes, as its API lists them); each must
	// be in the machines file.
	Nodes []string
	// Platform is the nodes' platform (default linux/<host arch>).
	Platform *v1.Platform
	Log      cli.Logger
	// Getenv reads the environment (default os.Getenv): machine.EnvSSHKey, when set, is nuv's SSH
	// key in place of the one under Dir, as for `nuv cluster apply`.
	Getenv func(string) string
}

var _ image.Publisher = (*Machines)(nil)

// importScript imports the archive on stdin into containerd's k8s.io namespace (the kubelet's)
// with the snapshotter the CRI plugin unpacks with (kind reads it the same way), so the image is
// ready to run without a pull.
const importScript = `sn=$(containerd config dump 2>/dev/null | sed -n 's/^[[:space:]]*snapshotter[[:space:]]*=[[:space:]]*"\([a-z0-9]*\)".*/\1/p' | head -n 1)
ctr --namespace=k8s.io images import --all-platforms --digests --snapshotter="${sn:-overlayfs}" - >/dev/null
`

// Publish implements image.Publisher; ref must carry a tag (the nodes know the image by it).
func (m *Machines) Publish(ctx context.Context, idx v1.ImageIndex, ref name.Reference) (string, error) {
	tag, ok := ref.(name.Tag)
	if !ok {
		return "", fmt.Errorf("loading into machines needs a tagged reference, got %s", ref)
	}
	if len(m.Nodes) == 0 {
		return "", errors.New("the cluster has no nodes to load the image into")
	}
	key, err := m.key()
	if err != nil {
		return "", err
	}
	hostsFile := filepath.Join(m.Dir, machine.HostsFile)
	hosts, err := machine.ReadHosts(hostsFile)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("the cluster's machines are not known to nuv (%s is missing): run `nuv cluster apply` for it with this nuv home", hostsFile)
	}
	if err != nil {
		return "", err
	}
	byName := map[string]machine.Host{}
	for _, h := range hosts {
		byName[h.Name] = h
	}
	var targets []machine.Host
	for _, n := range m.Nodes {
		h, ok := byName[n]
		if !ok {
			return "", fmt.Errorf("node %s is not among the machines nuv knows of in %s (run `nuv cluster apply` for the cluster: it writes the file again)", n, hostsFile)
		}
		targets = append(targets, h)
	}
	p := HostPlatform()
	if m.Platform != nil {
		p = *m.Platform
	}
	var buf bytes.Buffer
	if err := SinglePlatformArchive(idx, p, tag, &buf); err != nil {
		return "", err
	}
	log := m.Log
	if log == nil {
		log = cli.Quiet()
	}
	for _, h := range targets {
		if err := loadInto(ctx, key, h, buf.Bytes(), log); err != nil {
			return "", fmt.Errorf("load %s into node %s: %w", tag, h.Name, err)
		}
		log.Infof("loaded %s into node %s (%s, over SSH)", tag, h.Name, h.Endpoint)
	}
	return tag.String(), nil
}

// key is nuv's SSH key of the cluster's machines: $NUV_AWS_SSH_KEY's, else the one under Dir.
func (m *Machines) key() (*machine.Key, error) {
	k, err := machine.ClusterKey(m.Dir, m.Getenv)
	if err != nil {
		return nil, fmt.Errorf("nuv's SSH key of the cluster's machines: %w (it is made by the apply that created the cluster, under that nuv home, or given in $%s)", err, machine.EnvSSHKey)
	}
	return k, nil
}

// loadInto streams archive into the containerd of machine h.
func loadInto(ctx context.Context, key *machine.Key, h machine.Host, archive []byte, log cli.Logger) error {
	hk, err := machine.ParsePublicKey(h.HostKey)
	if err != nil {
		return err
	}
	c, err := machine.DialSSH(ctx, machine.SSHConfig{Name: h.Name, Address: h.Address, Endpoint: h.Endpoint, Key: key, HostKey: hk,
		Wait: sshWait, Log: log})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Run(ctx, importScript, bytes.NewReader(archive))
	return err
}

// sshWait is how long a node's sshd is waited for: the machines run already, so not long.
const sshWait = 30 * time.Second
