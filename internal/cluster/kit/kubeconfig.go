package kit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/paths"
)

// KubeconfigPath is where the kubeconfig of a project's cluster goes: PROJECT/clusters/NAME.kubeconfig.
func KubeconfigPath(project, name string) string {
	return paths.Kubeconfig(project, name)
}

// WriteKubeconfig writes a kubeconfig to path atomically (a reader sees the old file or the new
// one, never half of it), 0600 since it may hold credentials, making its folder if need be.
func WriteKubeconfig(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	if err := fsutil.WriteFileAtomic(path, b, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

// Kubeconfig is a kubeconfig of one cluster: one cluster, user and context, all named Context,
// which is current.
type Kubeconfig struct {
	Context string
	Server  string
	CA      []byte // PEM
	// User is the credential: client certificate data, or an exec plugin (ExecUser).
	User clientcmdapi.AuthInfo
}

// ExecUser is a user whose credential an exec plugin provides (client.authentication.k8s.io): no
// token on disk, never an interactive prompt. env are the plugin's environment as name, value
// pairs; a pair with an empty value is left out.
func ExecUser(apiVersion, command string, args []string, env ...string) clientcmdapi.AuthInfo {
	x := &clientcmdapi.ExecConfig{APIVersion: apiVersion, Command: command, Args: args, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
	for i := 0; i+1 < len(env); i += 2 {
		if env[i+1] != "" {
			x.Env = append(x.Env, clientcmdapi.ExecEnvVar{Name: env[i], Value: env[i+1]})
		}
	}
	return clientcmdapi.AuthInfo{Exec: x}
}

// Render is the kubeconfig's YAML.
func (k Kubeconfig) Render() ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	u := k.User
	cfg.Clusters[k.Context] = &clientcmdapi.Cluster{Server: k.Server, CertificateAuthorityData: k.CA}
	cfg.AuthInfos[k.Context] = &u
	cfg.Contexts[k.Context] = &clientcmdapi.Context{Cluster: k.Context, AuthInfo: k.Context}
	cfg.CurrentContext = k.Context
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("render kubeconfig of %s: %w", k.Context, err)
	}
	return b, nil
}

// CurrentExec is the exec credential of a kubeconfig file's current context, nil when the file
// cannot be read, has no current context or its user no exec plugin; server is that context's
// cluster's server.
func CurrentExec(path string) (server string, exec *clientcmdapi.ExecConfig) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", nil
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil {
		return "", nil
	}
	cl, ai := cfg.Clusters[ctx.Cluster], cfg.AuthInfos[ctx.AuthInfo]
	if cl == nil || ai == nil {
		return "", nil
	}
	return cl.Server, ai.Exec
}

// RemoveKubeconfig deletes the kubeconfig at path; one already gone is done.
func RemoveKubeconfig(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove kubeconfig: %w", err)
	}
	return nil
}
