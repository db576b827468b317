package kind

import (
	"strings"
	"testing"
	"time"
)

// kubeadmSample has the shape of kubeadm init --v=6 output as kind logs it: kubeadm's "[phase]"
// lines carry no time, the klog lines between them do.
const kubeadmSample = `I1130 19:30:00.000000     210 initconfiguration.go:261] loading configuration from "/kind/kubeadm.conf"
[init] Using Kubernetes version: v1.36.3
[certs] Using certificateDir folder "/etc/kubernetes/pki"
I1130 19:30:00.500000     210 certs.go:112] creating a new certificate authority for ca
[certs] Generating "ca" certificate and key
I1130 19:30:01.500000     210 kubeconfig.go:111] creating kubeconfig file for admin.conf
[kubeconfig] Using kubeconfig folder "/etc/kubernetes"
[kubeconfig] Writing "admin.conf" kubeconfig file
I1130 19:30:02.000000     210 kubelet.go:67] Stopping the kubelet
[kubelet-start] Starting the kubelet
I1130 19:30:02.100000     210 kubeconfig.go:667] ensuring that the ClusterRoleBinding for the kubeadm:cluster-admins Group exists
I1130 19:30:02.600000     210 round_trippers.go:632] "Response" verb="POST" url="https://node:6443/apis/rbac.authorization.k8s.io/v1/clusterrolebindings?timeout=10s" status="" milliseconds=0
I1130 19:30:09.200000     210 round_trippers.go:632] "Response" verb="POST" url="https://node:6443/apis/rbac.authorization.k8s.io/v1/clusterrolebindings?timeout=10s" status="201 Created" milliseconds=396
[wait-control-plane] Waiting for the kubelet to boot up the control plane as static Pods from directory "/etc/kubernetes/manifests"
[kubelet-check] The kubelet is healthy after 1.0s
I1130 19:30:09.300000     210 round_trippers.go:632] "Response" verb="GET" url="https://node:6443/livez" status="200 OK"
[control-plane-check] kube-apiserver is healthy after 7.0s
I1130 19:30:10.000000     210 uploadconfig.go:112] [upload-config] Uploading the kubeadm ClusterConfiguration
[upload-config] Storing the configuration used in ConfigMap "kubeadm-config" in the "kube-system" Namespace
I1130 19:30:11.000000     210 round_trippers.go:632] "Response" verb="POST" url="https://node:6443/api/v1/namespaces/kube-system/configmaps" status="201 Created"
[addons] Applied essential addon: CoreDNS
I1130 19:30:11.500000     210 round_trippers.go:632] "Response" verb="POST" status="201 Created"
[addons] Applied essential addon: kube-proxy
I1130 19:30:11.600000     210 loader.go:405] Config loaded from file:  /etc/kubernetes/admin.conf
Your Kubernetes control-plane has initialized successfully!`

func TestKubeadmPhases(t *testing.T) {
	got := FormatPhases(kubeadmPhases(kubeadmSample))
	want := "certs 1.5s, kubeconfig 0.5s, kubelet-start 0.1s, " + apiServerWait + " 7.1s, kubelet-check 0.1s, control-plane-check 0.7s, upload-config 1.0s, addons 0.6s, 2 more under 0.05s"
	if got != want {
		t.Fatalf("kubeadm phases:\n got %s\nwant %s", got, want)
	}
	if ps := kubeadmPhases("no kubeadm here\n"); len(ps) != 0 {
		t.Fatalf("phases of text without kubeadm's: %v", ps)
	}
}

// TestPhaseClock feeds the clock kind's status lines (as kind's cli.Status logs them without a
// terminal) and kubeadm's output, and checks what it timed and in which order.
func TestPhaseClock(t *testing.T) {
	logger, phases := PhaseLogger(nil)
	logger.V(0).Infof("Creating cluster %q ...\n", "x")
	steps := []string{"Ensuring node image (nuv.dev/kind-node:v1.36.3-abc) 🖼", "Preparing nodes 📦 📦", "Writing configuration 📜", "Starting control-plane 🕹️"}
	for _, s := range steps {
		logger.V(0).Infof(" • %s  ...\n", s)
		time.Sleep(2 * time.Millisecond)
	}
	logger.V(3).Info(kubeadmSample)
	logger.V(0).Infof(" ✓ %s\n", steps[3])
	logger.V(0).Infof(" • %s  ...\n", "Installing CNI 🔌")
	logger.V(0).Infof(" ✗ %s\n", "Installing CNI 🔌")
	var names []string
	for _, p := range phases() {
		names = append(names, p.Name)
		if p.Duration < 0 {
			t.Errorf("%s took %s", p.Name, p.Duration)
		}
	}
	want := "kind: ensuring node image (nuv.dev/kind-node:v1.36.3-abc)|kind: preparing nodes|kind: writing configuration|kind: starting control-plane|" +
		"  kubeadm: init|  kubeadm: certs|  kubeadm: kubeconfig|  kubeadm: kubelet-start|  kubeadm: " + apiServerWait + "|  kubeadm: wait-control-plane|  kubeadm: kubelet-check|  kubeadm: control-plane-check|  kubeadm: upload-config|  kubeadm: addons|" +
		"kind: installing cni"
	if got := strings.Join(names, "|"); got != want {
		t.Fatalf("phases:\n got %s\nwant %s", got, want)
	}
	if d := phases()[0].Duration; d < 2*time.Millisecond {
		t.Errorf("the first step took %s, want at least the 2ms slept", d)
	}
}

func TestEntrypointPhases(t *testing.T) {
	logs := "2026-11-30T19:33:54.901632201Z INFO: ensuring we can execute mount/umount even with userns-remap\n" +
		"2026-11-30T19:33:54.937431419Z INFO: detected cgroup v1\n" +
		"2026-11-30T19:33:55.056758638Z INFO: setting iptables to detected mode: nft\n" +
		"2026-11-30T19:34:00.169244726Z INFO: detected IPv4 address: 172.28.0.3\n" +
		"2026-11-30T19:34:00.177091726Z INFO: detected IPv6 address: fc00:f853:ccd:e793::3\n" +
		"2026-11-30T19:34:00.178380728Z INFO: starting init\n" +
		"2026-11-30T19:34:00.253377344Z systemd 252.39-1~deb12u2 running in system mode\n"
	got := FormatPhases(entrypointPhases("n-control-plane", logs))
	want := "node n-control-plane: entrypoint before systemd 5.3s, node n-control-plane: entrypoint's network detection (DNS lookup of host.docker.internal) 5.1s"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if ps := entrypointPhases("n", "not a log\n"); len(ps) != 0 {
		t.Fatalf("phases of a log without timestamps: %v", ps)
	}
}

func TestLabelVersion(t *testing.T) {
	for _, tc := range []struct{ labels, want, err string }{
		{"nuv cluster node-image build|v1.36.3\n", "1.36.3", ""},
		{"|\n", "", ""},
		{"<no value>|<no value>", "", ""},
		{"someone else|v1.36.3", "", ""},
		{"nuv cluster node-image build|banana", "", "not a Kubernetes version"},
	} {
		got, err := labelVersion(tc.labels)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("labelVersion(%q) = %q, %v; want %q, %q", tc.labels, got, err, tc.want, tc.err)
		}
	}
}
