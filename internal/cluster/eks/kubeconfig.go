package eks

import (
	"encoding/base64"
	"fmt"
	"slices"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster/kit"
)

// KubeconfigPath is where a cluster's kubeconfig goes: PROJECT/clusters/NAME.kubeconfig.
func (p *Provider) KubeconfigPath(name string) string { return kit.KubeconfigPath(p.Project, name) }

// kubeconfig renders an EKS kubeconfig: the cluster's endpoint and CA, and `nuv -eks-token` as
// the exec credential (no token on disk). The endpoint and region the token needs are in the exec
// environment; credentials stay with the SDK's default chain of whoever runs kubectl.
func (p *Provider) kubeconfig(name, server, caData, region, awsEndpoint, profile string) ([]byte, error) {
	ca, err := base64.StdEncoding.DecodeString(caData)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: certificate authority is not base64: %w", name, err)
	}
	exe := p.Exe
	if exe == "" {
		exe = "nuv"
	}
	return kit.Kubeconfig{Context: name, Server: server, CA: ca,
		User: kit.ExecUser("client.authentication.k8s.io/v1", exe, tokenArgs(name),
			"AWS_REGION", region, "AWS_ENDPOINT_URL", awsEndpoint, "AWS_PROFILE", profile)}.Render()
}

// tokenArgs are the exec credential's arguments for cluster name.
func tokenArgs(name string) []string { return []string{"-eks-token", "--cluster", name} }

// kubeconfigMatches reports whether clusters/NAME.kubeconfig is an EKS kubeconfig of cluster name
// pointing at server.
func (p *Provider) kubeconfigMatches(name, server string) bool {
	have, exec := kit.CurrentExec(p.KubeconfigPath(name))
	return exec != nil && have == server && slices.Equal(exec.Args, tokenArgs(name))
}

// restConfig is a client configuration for the cluster from its kubeconfig.
func (p *Provider) restConfig(name string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", p.KubeconfigPath(name))
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of %s: %w", name, err)
	}
	return cfg, nil
}
