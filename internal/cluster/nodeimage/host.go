package nodeimage

import "os"

// kubeletCgroupV1Patch lets the kubelet of Kubernetes 1.35+ run on a cgroup v1 host (it refuses by
// default).
const kubeletCgroupV1Patch = `kind: KubeletConfiguration
apiVersion: kubelet.config.k8s.io/v1beta1
failCgroupV1: false
`

// KubeadmPatches are the kind kubeadmConfigPatches this host needs for clusters of these node
// images: on a cgroup v1 host (no /sys/fs/cgroup/cgroup.controllers), the kubelet's
// `failCgroupV1: false`.
func KubeadmPatches() []string {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return nil
	}
	return []string{kubeletCgroupV1Patch}
}
