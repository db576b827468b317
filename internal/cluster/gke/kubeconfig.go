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

	"github.com/nuv-dev/nuv/internal/cluster/kit"
)

// TokenFlag is the hidden nuv entry the kubeconfig's exec credential runs.
const TokenFlag = "-gke-token"

func (p *Provider) kubeconfigPath(name string) string { return kit.KubeconfigPath(p.Project, name) }

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
	creds := p.getenv()("GOOGLE_APPLICATION_CREDENTIALS")
	if abs, err := filepath.Abs(creds); err == nil && creds != "" {
		creds = abs
	}
	user := kit.ExecUser("client.authentication.k8s.io/v1beta1", p.exe(), []string{TokenFlag}, "GOOGLE_APPLICATION_CREDENTIALS", creds)
	user.Exec.InstallHint = "nuv provides GKE tokens itself (nuv -gke-token): install nuv, or point this kubeconfig's exec command at it"
	user.Exec.ProvideClusterInfo = true
	return kit.Kubeconfig{Context: contextName(project, c.Location, c.Name), Server: "https://" + c.Endpoint, CA: ca, User: user}.Render()
}

func (p *Provider) getenv() func(string) string { return kit.Getenv(p.Getenv) }

// writeKubeconfig writes the kubeconfig of c atomically, 0600.
func (p *Provider) writeKubeconfig(project string, c *containerpb.Cluster, name string) error {
	b, err := p.kubeconfigFor(project, c)
	if err != nil {
		return err
	}
	return kit.WriteKubeconfig(p.kubeconfigPath(name), b)
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
	if _, exec := kit.CurrentExec(path); exec == nil || !slices.Contains(exec.Args, TokenFlag) {
		return true, false, true
	}
	if c == nil {
		return true, false, false
	}
	want, err := p.kubeconfigFor(project, c)
	return true, err == nil && bytes.Equal(want, b), false
}
