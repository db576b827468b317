package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nuv-dev/nuv/internal/cluster"
)

func node(name string, labels map[string]string, providerID string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

// Nodes as the real distributions label them (and nothing of nuv's).
func TestDetectNodesRealDistributions(t *testing.T) {
	cases := []struct {
		name  string
		nodes []corev1.Node
		want  string
	}{
		{"eks", []corev1.Node{node("ip-10-0-1-2.ec2.internal", map[string]string{"eks.amazonaws.com/nodegroup": "ng"}, "aws:///us-east-1a/i-0abc")}, TypeEKS},
		{"eks by providerID only", []corev1.Node{node("n", nil, "aws:///eu-west-1b/i-0123")}, TypeEKS},
		{"aks", []corev1.Node{node("aks-nodepool1-1", map[string]string{"kubernetes.azure.com/agentpool": "nodepool1"}, "azure:///subscriptions/x")}, TypeAKS},
		{"gke", []corev1.Node{node("gke-c-default-pool-1", map[string]string{"cloud.google.com/gke-nodepool": "default-pool"}, "gce://p/z/i")}, TypeGKE},
		{"aks by providerID only", []corev1.Node{node("aks-np-0", nil, "azure:///subscriptions/s/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-np/virtualMachines/0")}, TypeAKS},
		{"gke by providerID only", []corev1.Node{node("gke-c-pool-1", nil, "gce://my-project/us-central1-a/gke-c-pool-1a2b3c4d-x1y2")}, TypeGKE},
		{"emulated gke", []corev1.Node{node("c-web-1", map[string]string{"cloud.google.com/gke-nodepool": "web", LabelProvider: "local", LabelFlavor: "gke", LabelEmulated: "gcp"}, "gce://nuv-emulator/us-central1-a/c-web-1")}, TypeGKE},
		{"k3s", []corev1.Node{node("srv", map[string]string{"node.kubernetes.io/instance-type": "k3s"}, "k3s://srv")}, TypeK3s},
		{"microk8s", []corev1.Node{node("m", map[string]string{"microk8s.io/cluster": "true"}, "")}, TypeM8s},
		{"openshift", []corev1.Node{node("w", map[string]string{"node.openshift.io/os_id": "rhcos"}, "")}, TypeOSH},
		{"kind", []corev1.Node{node("kind-control-plane", map[string]string{"node-role.kubernetes.io/control-plane": ""}, "kind://docker/kind/kind-control-plane")}, TypeKind},
		{"old kind without providerID", []corev1.Node{node("dev-control-plane", map[string]string{"node-role.kubernetes.io/control-plane": ""}, "")}, TypeKind},
		{"lke", []corev1.Node{node("lke1-1", map[string]string{"lke.linode.com/pool-id": "1"}, "linode://1")}, TypeLKS},
		{"nuv local generic flavor", []corev1.Node{node("dev-node-1", map[string]string{LabelProvider: "local", LabelFlavor: "generic"}, "")}, TypeGeneric},
		{"nuv local", []corev1.Node{node("dev-node-1", map[string]string{LabelProvider: "local", LabelCluster: "dev"}, "")}, TypeLocal},
		{"nuv local with a control-plane-named node", []corev1.Node{node("dev-control-plane", map[string]string{LabelProvider: "local", "node-role.kubernetes.io/control-plane": ""}, "")}, TypeLocal},
		{"kubeadm", []corev1.Node{node("cp-1", map[string]string{"node-role.kubernetes.io/control-plane": "", "kubernetes.io/os": "linux"}, "")}, TypeGeneric},
		{"nuv self-managed (kubeadm on emulated machines)", []corev1.Node{node("sm-control-plane-0", map[string]string{LabelProvider: "aws", LabelCluster: "sm", LabelBootstrap: "kubeadm", LabelEmulated: "aws", "node-role.kubernetes.io/control-plane": ""}, "")}, TypeKubeadm},
		{"nuv self-managed on AWS with the cloud's controller manager", []corev1.Node{node("ip-10-0-1-2", map[string]string{LabelProvider: "aws", LabelBootstrap: "kubeadm"}, "aws:///us-east-1a/i-0abc")}, TypeKubeadm},
		{"no nodes", nil, TypeGeneric},
		{"marker on a later node", []corev1.Node{node("a", nil, ""), node("b", map[string]string{"microk8s.io/cluster": "true"}, "")}, TypeM8s},
	}
	for _, c := range cases {
		if got := DetectNodes(c.nodes); got != c.want {
			t.Errorf("%s: DetectNodes = %q, want %q", c.name, got, c.want)
		}
	}
}

// Nodes exactly as `nuv cluster create local --flavor F` makes them (the shared contract): every
// flavor detects as itself, no flavor as local.
func TestDetectNodesLocalFlavors(t *testing.T) {
	for name, f := range cluster.Flavors() {
		want := name
		if name == "" {
			want = TypeLocal
		}
		var nodes []corev1.Node
		for i := 0; i < 3; i++ {
			n, labels, pid := cluster.NodeLabels(f, "c1", i)
			nodes = append(nodes, node(n, labels, pid))
		}
		if got := DetectNodes(nodes); got != want {
			t.Errorf("flavor %q: DetectNodes = %q, want %q", name, got, want)
		}
	}
}
