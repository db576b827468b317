package gke

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"cloud.google.com/go/container/apiv1/containerpb"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/paths"
)

// TokenFlag is the hidden nuv entry the kubeconfig's exec credential runs.
const TokenFlag = "-gke-token"

func (p *Provider) kubeconfigPath(name string) string {
	return filepath.Join(paths.Clusters(p.Project), name+".kubeconfig")
}

func (p *Provider) exe() string {
	if p.Exe != "" {
		return p.Exe
	}
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return "nuv"
}

// contextName is gcloud's name for a cluster's context.
func contextName(project, location, name string) string {
	return "gke_" + project + "_" + location + "_" + name
}

// kubeconfigFor renders the kubeconfig of cluster c: its endpoint and CA, and an exec credential
// that runs `nuv -gke-token` (a token from Application Default Credentials, as
// gke-gcloud-auth-plugin gets one from gcloud). The credentials file in use, if named by
// GOOGLE_APPLICATION_CREDENTIALS, is passed on so the kubeconfig works from any shell.
func (p *Provider) kubeconfigFor(project string, c *containerpb.Cluster) ([]byte, error) {
	ca, err := base64.StdEncoding.DecodeString(c.GetMasterAuth().GetClusterCaCertificate())
	if err != nil || len(ca) == 0 {
		return nil, fmt.Errorf("cluster %s reports no usable CA certificate", c.Name)
	}
	if c.Endpoint == "" {
		return nil, fmt.Errorf("cluster %s reports no endpoint yet", c.Name)
	}
	name := contextName(project, c.Location, c.Name)
	exec := &clientcmdapi.ExecConfig{
		APIVersion:         "client.authentication.k8s.io/v1beta1",
		Command:            p.exe(),
		Args:               []string{TokenFlag},
		InstallHint:        "nuv provides GKE tokens itself (nuv -gke-token): install nuv, or point this kubeconfig's exec command at it",
		ProvideClusterInfo: true,
		InteractiveMode:    clientcmdapi.NeverExecInteractiveMode,
	}
	getenv := p.getenv()
	for _, k := range []string{"GOOGLE_APPLICATION_CREDENTIALS"} {
		if v := getenv(k); v != "" {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
			exec.Env = append(exec.Env, clientcmdapi.ExecEnvVar{Name: k, Value: v})
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: "https://" + c.Endpoint, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Exec: exec}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("render kubeconfig: %w", err)
	}
	return b, nil
}

func (p *Provider) getenv() func(string) string {
	if p.Getenv == nil {
		return os.Getenv
	}
	return p.Getenv
}

// writeKubeconfig writes the kubeconfig of c atomically, 0600.
func (p *Provider) writeKubeconfig(project string, c *containerpb.Cluster, name string) error {
	b, err := p.kubeconfigFor(project, c)
	if err != nil {
		return err
	}
	path := p.kubeconfigPath(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(path, b, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// observeKubeconfig says whether the kubeconfig of name is nuv's GKE kubeconfig (found) and whether
// it is current for c (its server and CA are c's); a file that is not nuv's GKE kubeconfig is
// foreign.
func (p *Provider) observeKubeconfig(project string, name string, c *containerpb.Cluster) (found, current, foreign bool) {
	path := p.kubeconfigPath(name)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, false, false
	}
	cfg, err := clientcmd.Load(b)
	if err != nil {
		return true, false, true
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || cfg.AuthInfos[ctx.AuthInfo] == nil || cfg.AuthInfos[ctx.AuthInfo].Exec == nil ||
		!slices.Contains(cfg.AuthInfos[ctx.AuthInfo].Exec.Args, TokenFlag) {
		return true, false, true
	}
	if c == nil {
		return true, false, false
	}
	want, err := p.kubeconfigFor(project, c)
	return true, err == nil && bytes.Equal(want, b), false
}
