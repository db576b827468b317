package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// Labels every node of a nuv local cluster carries, so nuv's own clusters are recognisable.
const (
	LabelCluster  = "nuv.dev/cluster"
	LabelProvider = "nuv.dev/provider"
	// LabelFlavor names the --flavor a local cluster was created with (absent without one), so a
	// "generic" flavored cluster detects as generic while still recognisable as nuv's own.
	LabelFlavor = "nuv.dev/flavor"
)

// Flavor makes the nodes of a local cluster look like those of one distribution: the labels and
// spec.providerID that distribution really sets, so type detection and per-type instance files can
// be tested without it.
type Flavor struct {
	Name string
	// Node returns the node name, extra labels and providerID of node i (0-based) of cluster.
	Node func(cluster string, i int) (name string, labels map[string]string, providerID string)
}

// Flavors returns the supported flavors by name. "" (no --flavor) is the plain local type.
func Flavors() map[string]Flavor {
	plain := func(cluster string, i int) string { return fmt.Sprintf("%s-node-%d", cluster, i+1) }
	fl := []Flavor{
		{Name: "eks", Node: func(c string, i int) (string, map[string]string, string) {
			return plain(c, i), map[string]string{"eks.amazonaws.com/nodegroup": "ng-1", "eks.amazonaws.com/compute-type": "ec2"},
				"aws:///us-east-1a/i-0" + randHex(8)
		}},
		{Name: "aks", Node: func(c string, i int) (string, map[string]string, string) {
			return plain(c, i), map[string]string{"kubernetes.azure.com/cluster": "MC_rg_" + c + "_eastus", "kubernetes.azure.com/agentpool": "nodepool1"},
				fmt.Sprintf("azure:///subscriptions/%s/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachineScaleSets/aks-nodepool1/virtualMachines/%d", uuid(), i)
		}},
		{Name: "gke", Node: func(c string, i int) (string, map[string]string, string) {
			return plain(c, i), map[string]string{"cloud.google.com/gke-nodepool": "default-pool", "cloud.google.com/gke-os-distribution": "cos"},
				fmt.Sprintf("gce://project/us-central1-a/gke-%s-default-pool-%s", c, randHex(4))
		}},
		{Name: "k3s", Node: func(c string, i int) (string, map[string]string, string) {
			n := plain(c, i)
			return n, map[string]string{"node.kubernetes.io/instance-type": "k3s", "k3s.io/hostname": n}, "k3s://" + n
		}},
		{Name: "m8s", Node: func(c string, i int) (string, map[string]string, string) {
			return plain(c, i), map[string]string{"microk8s.io/cluster": "true"}, ""
		}},
		{Name: "osh", Node: func(c string, i int) (string, map[string]string, string) {
			return plain(c, i), map[string]string{"node.openshift.io/os_id": "rhcos"}, ""
		}},
		{Name: "kind", Node: func(c string, i int) (string, map[string]string, string) {
			if i == 0 {
				n := c + "-control-plane"
				return n, map[string]string{"node-role.kubernetes.io/control-plane": ""}, "kind://docker/" + c + "/" + n
			}
			n := c + "-worker"
			if i > 1 {
				n = fmt.Sprintf("%s-worker%d", c, i)
			}
			return n, map[string]string{}, "kind://docker/" + c + "/" + n
		}},
		{Name: "lks", Node: func(c string, i int) (string, map[string]string, string) {
			return plain(c, i), map[string]string{"lke.linode.com/pool-id": "1234"}, fmt.Sprintf("linode://%d", 40000000+i)
		}},
		{Name: "generic", Node: func(c string, i int) (string, map[string]string, string) {
			return plain(c, i), map[string]string{}, ""
		}},
		{Name: "", Node: func(c string, i int) (string, map[string]string, string) {
			return plain(c, i), map[string]string{}, ""
		}},
	}
	m := make(map[string]Flavor, len(fl))
	for _, f := range fl {
		m[f.Name] = f
	}
	return m
}

// FlavorNames lists the valid --flavor values, sorted.
func FlavorNames() []string {
	var names []string
	for n := range Flavors() {
		if n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// LookupFlavor returns the flavor called name or an error listing the valid ones.
func LookupFlavor(name string) (Flavor, error) {
	f, ok := Flavors()[name]
	if !ok {
		return Flavor{}, fmt.Errorf("unknown flavor %q (valid: %s)", name, strings.Join(FlavorNames(), ", "))
	}
	return f, nil
}

// NodeLabels returns every label node i of a cluster carries: nuv's own plus the flavor's.
func NodeLabels(f Flavor, cluster string, i int) (name string, labels map[string]string, providerID string) {
	name, extra, providerID := f.Node(cluster, i)
	labels = map[string]string{
		LabelCluster:             cluster,
		LabelProvider:            "local",
		"kubernetes.io/hostname": name,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "kwok",
	}
	if f.Name != "" {
		labels[LabelFlavor] = f.Name
	}
	for k, v := range extra {
		labels[k] = v
	}
	return name, labels, providerID
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func uuid() string {
	h := randHex(16)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
