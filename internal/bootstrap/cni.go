package bootstrap

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"text/template"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// CNIManifestPath is the pod network's manifest in nuv's node image (nuv-podnet, see
// internal/cluster/nodeimage).
const CNIManifestPath = "/kind/manifests/default-cni.yaml"

// CNI applies the node image's pod network (read from the first control plane) with the cluster's
// pod range filled in and the control-plane endpoint in its DaemonSet's environment (so that it
// reaches the API server before kube-proxy serves the kubernetes Service). `kubectl apply` leaves
// an applied, unchanged manifest as it is.
func (b *Bootstrap) CNI(ctx context.Context) error {
	const step = "pod network"
	m := b.Cluster.ControlPlanes[0]
	raw, err := b.read(ctx, step, m, CNIManifestPath)
	if err != nil {
		return err
	}
	manifest, err := CNIManifest(string(raw), b.Cluster.PodCIDR, b.Cluster.Endpoint)
	if err != nil {
		return fmt.Errorf("%s on %s: %s: %w", step, m.Name(), CNIManifestPath, err)
	}
	b.logf("%s: apply %s", step, CNIManifestPath)
	_, err = b.run(ctx, step, m, "kubectl --kubeconfig "+AdminConf+" apply -f - 2>&1\n", strings.NewReader(manifest))
	return err
}

// CNIManifest fills the node image's CNI manifest in: the template's PodSubnet, and
// CONTROL_PLANE_ENDPOINT added to the environment of every DaemonSet's first container.
func CNIManifest(raw, podCIDR, endpoint string) (string, error) {
	t, err := template.New("cni").Option("missingkey=error").Parse(raw)
	if err != nil {
		return "", err
	}
	var filled bytes.Buffer
	if err := t.Execute(&filled, struct{ PodSubnet string }{podCIDR}); err != nil {
		return "", err
	}
	var out []string
	for _, doc := range strings.Split(filled.String(), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return "", err
		}
		if obj["kind"] != "DaemonSet" {
			out = append(out, strings.TrimSpace(doc))
			continue
		}
		c, ok := dig(obj, "spec", "template", "spec", "containers").([]any)
		if !ok || len(c) == 0 {
			return "", fmt.Errorf("DaemonSet without containers")
		}
		first, _ := c[0].(map[string]any)
		env, _ := first["env"].([]any)
		first["env"] = append(env, map[string]any{"name": "CONTROL_PLANE_ENDPOINT", "value": endpoint})
		y, err := yaml.Marshal(obj)
		if err != nil {
			return "", err
		}
		out = append(out, strings.TrimSpace(string(y)))
	}
	return strings.Join(out, "\n---\n") + "\n", nil
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// ReadKubeconfig reads the admin kubeconfig back from the first control plane with every cluster's
// server rewritten to the endpoint (the load balancer); the provider writes it with mode 0600. It
// is kept in b.Kubeconfig too.
func (b *Bootstrap) ReadKubeconfig(ctx context.Context) ([]byte, error) {
	const step = "kubeconfig"
	m := b.Cluster.ControlPlanes[0]
	raw, err := b.read(ctx, step, m, AdminConf)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %s: %w", step, m.Name(), AdminConf, err)
	}
	for _, cl := range cfg.Clusters {
		cl.Server = "https://" + b.Cluster.Endpoint
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", step, err)
	}
	b.Kubeconfig = out
	return out, nil
}
