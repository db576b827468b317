package cluster

import (
	"regexp"
	"strings"
	"testing"
)

func TestFlavorNodes(t *testing.T) {
	tests := []struct {
		flavor   string
		node     int
		name     string
		labels   map[string]string
		idPrefix string
		idRE     string
	}{
		{"", 0, "c-node-1", nil, "", "^$"},
		{"generic", 1, "c-node-2", nil, "", "^$"},
		{"eks", 0, "c-node-1", map[string]string{"eks.amazonaws.com/nodegroup": "ng-1", "eks.amazonaws.com/compute-type": "ec2"}, "", `^aws:///us-east-1a/i-0[0-9a-f]{16}$`},
		{"aks", 2, "c-node-3", map[string]string{"kubernetes.azure.com/cluster": "MC_rg_c_eastus", "kubernetes.azure.com/agentpool": "nodepool1"}, "",
			`^azure:///subscriptions/[0-9a-f-]{36}/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-nodepool1/virtualMachines/2$`},
		{"gke", 0, "c-node-1", map[string]string{"cloud.google.com/gke-nodepool": "default-pool", "cloud.google.com/gke-os-distribution": "cos"}, "", `^gce://project/us-central1-a/gke-c-default-pool-[0-9a-f]{8}$`},
		{"k3s", 0, "c-node-1", map[string]string{"node.kubernetes.io/instance-type": "k3s", "k3s.io/hostname": "c-node-1"}, "", `^k3s://c-node-1$`},
		{"m8s", 0, "c-node-1", map[string]string{"microk8s.io/cluster": "true"}, "", "^$"},
		{"osh", 0, "c-node-1", map[string]string{"node.openshift.io/os_id": "rhcos"}, "", "^$"},
		{"kind", 0, "c-control-plane", map[string]string{"node-role.kubernetes.io/control-plane": ""}, "", `^kind://docker/c/c-control-plane$`},
		{"kind", 1, "c-worker", nil, "", `^kind://docker/c/c-worker$`},
		{"kind", 2, "c-worker2", nil, "", `^kind://docker/c/c-worker2$`},
		{"lks", 0, "c-node-1", map[string]string{"lke.linode.com/pool-id": "1234"}, "", `^linode://\d+$`},
	}
	for _, tt := range tests {
		t.Run(tt.flavor+"/"+tt.name, func(t *testing.T) {
			f, err := LookupFlavor(tt.flavor)
			if err != nil {
				t.Fatal(err)
			}
			name, labels, id := NodeLabels(f, "c", tt.node)
			if name != tt.name {
				t.Errorf("name %q, want %q", name, tt.name)
			}
			if labels[LabelCluster] != "c" || labels[LabelProvider] != "local" || labels["kubernetes.io/hostname"] != name {
				t.Errorf("nuv labels missing: %v", labels)
			}
			for k, v := range tt.labels {
				if got, ok := labels[k]; !ok || got != v {
					t.Errorf("label %s=%q, want %q", k, got, v)
				}
			}
			if !regexp.MustCompile(tt.idRE).MatchString(id) {
				t.Errorf("providerID %q does not match %s", id, tt.idRE)
			}
		})
	}
}

func TestLookupFlavorUnknown(t *testing.T) {
	_, err := LookupFlavor("openshift")
	if err == nil || !strings.Contains(err.Error(), "valid: aks, eks, generic, gke, k3s, kind, lks, m8s, osh") {
		t.Fatalf("error %v should list the valid flavors", err)
	}
}
