package allkubes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nuv-dev/nuv/internal/kube"
)

// An emulated cloud cluster and a real one of the same distribution detect the same way (by the
// distribution's markers); the report tells them apart by nuv's emulator label.
func TestDescribePlatformEmulated(t *testing.T) {
	kwok := map[string]string{kube.AnnotationKwokNode: "fake"}
	// An emulated cluster's nodes are a local cluster's (nuv.dev/provider=local, so the operator runs
	// on the host for it) but its cell names the cloud: provider eks, aks or gke, and the emulator.
	for _, tc := range []struct {
		name                     string
		labels, annotations      map[string]string
		providerID               string
		typ, by, evidence, label string
	}{
		{"real GKE", map[string]string{"cloud.google.com/gke-nodepool": "web"}, nil, "gce://p/us-central1-a/gke-c-web-1", "gke", "providerID", "gce://", "kubeconfig, 1 real node"},
		{"emulated GKE", map[string]string{"cloud.google.com/gke-nodepool": "web", kube.LabelProvider: "local", kube.LabelFlavor: "gke", kube.LabelEmulated: "gcp"}, kwok,
			"gce://p/us-central1-a/c-web-1", "gke", "providerID", "gce://", "gke emulated by gcp, 1 simulated node"},
		{"emulated EKS", map[string]string{"eks.amazonaws.com/nodegroup": "ng", kube.LabelProvider: "local", kube.LabelFlavor: "eks", kube.LabelEmulated: "aws"}, kwok,
			"aws:///us-east-1a/i-c-ng-1", "eks", "providerID", "aws://", "eks emulated by aws, 1 simulated node"},
		{"emulated AKS", map[string]string{"kubernetes.azure.com/agentpool": "system", kube.LabelProvider: "local", kube.LabelFlavor: "aks", kube.LabelEmulated: "azure"}, kwok,
			"azure:///subscriptions/s/resourceGroups/mc/providers/Microsoft.Compute/virtualMachineScaleSets/aks-system-vmss/virtualMachines/0", "aks", "providerID", "azure://", "aks emulated by azure, 1 simulated node"},
		{"real EKS", map[string]string{"eks.amazonaws.com/nodegroup": "ng"}, nil, "aws:///us-east-1a/i-0abc", "eks", "providerID", "aws://", "kubeconfig, 1 real node"},
		{"real AKS by providerID only", nil, nil, "azure:///subscriptions/s/resourceGroups/mc/providers/Microsoft.Compute/virtualMachineScaleSets/aks-np/virtualMachines/0", "aks", "providerID", "azure://", "kubeconfig, 1 real node"},
		{"self-managed on emulated machines", map[string]string{kube.LabelProvider: "aws", kube.LabelBootstrap: "kubeadm", kube.LabelEmulated: "aws", kube.LabelCluster: "sm"}, nil,
			"", "kubeadm", "label", kube.LabelBootstrap, "self-managed (kubeadm), emulated by aws, 1 real node"},
		{"self-managed on AWS", map[string]string{kube.LabelProvider: "aws", kube.LabelBootstrap: "kubeadm", kube.LabelCluster: "sm"}, nil,
			"aws:///us-east-1a/i-0abc", "kubeadm", "label", kube.LabelBootstrap, "self-managed (kubeadm) on aws, 1 real node"},
		{"flavored local GKE", map[string]string{"cloud.google.com/gke-nodepool": "default-pool", kube.LabelProvider: "local", kube.LabelFlavor: "gke"}, kwok, "gce://project/us-central1-a/x", "gke", "providerID", "gce://", "local/gke, 1 simulated node"},
	} {
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: tc.labels, Annotations: tc.annotations}, Spec: corev1.NodeSpec{ProviderID: tc.providerID}}
		typ, p := describePlatform([]corev1.Node{n}, "", "")
		if typ != tc.typ || p.DetectedBy != tc.by || p.Evidence != tc.evidence || p.Label() != tc.label {
			t.Errorf("%s: %s %+v %q", tc.name, typ, p, p.Label())
		}
	}
}
