package eks

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/paths"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeconfigPath is where a cluster's kubeconfig goes: PROJECT/clusters/NAME.kubeconfig.
func (p *Provider) KubeconfigPath(name string) string {
	return filepath.Join(paths.Clusters(p.Project), name+".kubeconfig")
}

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
	var env []clientcmdapi.ExecEnvVar
	if region != "" {
		env = append(env, clientcmdapi.ExecEnvVar{Name: "AWS_REGION", Value: region})
	}
	if awsEndpoint != "" {
		env = append(env, clientcmdapi.ExecEnvVar{Name: "AWS_ENDPOINT_URL", Value: awsEndpoint})
	}
	if profile != "" {
		env = append(env, clientcmdapi.ExecEnvVar{Name: "AWS_PROFILE", Value: profile})
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: exe,
		Args: []string{"-eks-token", "--cluster", name}, Env: env, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("render kubeconfig of %s: %w", name, err)
	}
	return b, nil
}

func (p *Provider) writeKubeconfig(name string, b []byte) error {
	path := p.KubeconfigPath(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, b, 0o600)
}

// readKubeconfig reports whether clusters/NAME.kubeconfig is an EKS kubeconfig of cluster name
// pointing at server.
func (p *Provider) kubeconfigMatches(name, server string) bool {
	cfg, err := clientcmd.LoadFromFile(p.KubeconfigPath(name))
	if err != nil {
		return false
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		return false
	}
	cl, ai := cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
	return cl != nil && ai != nil && ai.Exec != nil && cl.Server == server && slices.Equal(ai.Exec.Args, []string{"-eks-token", "--cluster", name})
}

// restConfig is a client configuration for the cluster from its kubeconfig.
func (p *Provider) restConfig(name string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", p.KubeconfigPath(name))
	if err != nil {
		return nil, fmt.Errorf("kubeconfig of %s: %w", name, err)
	}
	return cfg, nil
}
