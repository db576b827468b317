package awsmachines

import (
	"maps"
	"net"
	"path/filepath"
	"slices"

	"github.com/nuv-dev/nuv/internal/bootstrap"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/machine"
)

// emulatorMark is the file in which a cloud emulator's machine names its emulator ("aws"): nuv's
// AWS emulator writes it into every instance it boots; a real EC2 instance has none.
const emulatorMark = "/etc/nuv/emulator"

// BootstrapKubeadm is the value of the nuv.dev/bootstrap label of a self-managed cluster's nodes.
const BootstrapKubeadm = "kubeadm"

// emulatorName tells whether an emulator mark says a name (lower-case letters and digits, as a
// label value; anything else is no emulator's).
func emulatorName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// machineNodeLabels are the labels every node of self-managed cluster name registers with (the
// kubelet's --node-labels at join): nuv's cluster and provider, the bootstrap (the marker of
// cluster type kubeadm), and, on an emulator's machines, the emulator (reports say "emulated by
// aws"; on real EC2 instances there is no such label).
func machineNodeLabels(name string, host bootstrap.Host) map[string]string {
	l := map[string]string{kube.LabelCluster: name, kube.LabelProvider: Name, kube.LabelBootstrap: BootstrapKubeadm}
	if emulatorName(host.Emulator) {
		l[kube.LabelEmulated] = host.Emulator
	}
	return l
}

// rememberNodes writes the machines file of cluster name beside nuv's SSH key (machine.HostsFile):
// its running control planes and workers, the nodes, each with the endpoint nuv dials and its
// pinned host key. `nuv image load` and `nuv image workload --load` read it to stream images
// into the nodes' containerd over SSH. A failure to write it is only a warning: the apply does
// not depend on it.
func (p *Provider) rememberNodes(name string, machines map[string]*sshMachine) {
	var hosts []machine.Host
	for _, k := range slices.Sorted(maps.Keys(machines)) {
		m := machines[k]
		if m.info.role != RoleControlPlane && m.info.role != RoleWorker || m.info.hostKey == "" || m.info.ip == "" {
			continue
		}
		addr := m.info.public
		if addr == "" {
			addr = m.info.ip
		}
		hosts = append(hosts, machine.Host{Name: m.name, Address: m.info.ip, Endpoint: net.JoinHostPort(addr, "22"), HostKey: m.info.hostKey})
	}
	path := filepath.Join(filepath.Dir(p.sshKeyPath(name)), machine.HostsFile)
	if err := machine.WriteHosts(path, hosts); err != nil {
		p.log().Warnf("cluster %s: remember its machines in %s: %v", name, path, err)
	}
}
