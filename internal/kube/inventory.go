package kube

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nuv-dev/nuv/internal/kube/kubesel"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/yamlerr"
)

// Ext is the file extension of a kubeconfig in clusters/.
const Ext = kubesel.Ext

// Cluster is one kubeconfig in the project's clusters/ directory.
type Cluster struct {
	Index    int    // 1-based position in the order clusters were added (see ordered)
	Name     string // file name without .kubeconfig
	Path     string // absolute path of the kubeconfig
	Context  string // current-context
	Server   string // API server URL (a password in it is shown as xxxxx)
	Type     string // detected or overridden type ("" until detected)
	Selected bool
	Err      error // non-nil: the file is invalid (reason), the others still work
}

// List returns every clusters/*.kubeconfig of project, numbered from 1 in the order they were added
// to clusters/ (recorded in .nuv/order; a first batch in name order), with
// the selection (NUV_CLUSTER of this process, else .nuv/current) marked and the type known without
// a network call (override or remembered detection). It only parses files. A missing clusters/
// directory is an empty list, not an error.
func List(project string) ([]Cluster, error) { return ListEnv(project, os.Getenv) }

// ListEnv is List with the environment read through getenv (NUV_CLUSTER, DETECT_FORCE, NUV_HOME).
func ListEnv(project string, getenv func(string) string) ([]Cluster, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	cs, err := scan(project)
	if err != nil {
		return nil, err
	}
	sel, _ := selectedName(project, getenv, cs)
	for i := range cs {
		c := &cs[i]
		c.Selected = sel != "" && (c.Name == sel || c.Path == sel)
		if c.Err == nil {
			c.Type, c.Err = KnownType(project, c.Name, getenv)
		}
	}
	return cs, nil
}

// scan reads clusters/*.kubeconfig without selection or types.
func scan(project string) ([]Cluster, error) {
	dir := paths.Clusters(project)
	abs, err := filepath.Abs(dir)
	if err == nil {
		dir = abs
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read clusters directory %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, Ext) && len(n) > len(Ext) && !strings.HasPrefix(n, ".") && !e.IsDir() {
			names = append(names, strings.TrimSuffix(n, Ext))
		}
	}
	names = kubesel.Ordered(project, names)
	cs := make([]Cluster, 0, len(names))
	for i, n := range names {
		c := Cluster{Index: i + 1, Name: n, Path: filepath.Join(dir, n+Ext)}
		c.Context, c.Server, c.Err = parseKubeconfig(c.Path)
		cs = append(cs, c)
	}
	return cs, nil
}

// loadKubeconfig reads and validates a kubeconfig, returning it and the context nuv uses: the
// current-context, or the only context when current-context is empty.
func loadKubeconfig(path string) (*clientcmdapi.Config, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("unreadable: %w", err)
	}
	cfg, err := decodeKubeconfig(path, data)
	if err != nil {
		return nil, "", err
	}
	ctxName, _, err := modelOf(cfg).Pick()
	if err != nil {
		return nil, "", err
	}
	return cfg, ctxName, nil
}

// decodeKubeconfig parses data (read from path) with client-go, relative certificate and key
// paths made relative to the kubeconfig's directory.
func decodeKubeconfig(path string, data []byte) (*clientcmdapi.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		// clientcmd's parse errors name the line (one too early for some), never the content;
		// yamlerr names the file and the line of the fault.
		if serr := yamlerr.Syntax(path, data); serr != nil {
			return nil, fmt.Errorf("not a kubeconfig: %w", serr)
		}
		return nil, fmt.Errorf("not a kubeconfig: %w", err)
	}
	setOrigin(cfg, path)
	if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
		return nil, fmt.Errorf("resolve paths: %w", err)
	}
	return cfg, nil
}

// modelOf is what the inventory needs of a kubeconfig client-go decoded.
func modelOf(cfg *clientcmdapi.Config) kubesel.Model {
	m := kubesel.Model{Current: cfg.CurrentContext, Contexts: map[string]kubesel.ContextRef{},
		Clusters: map[string]string{}, Users: map[string]bool{}}
	for n, c := range cfg.Contexts {
		if c != nil {
			m.Contexts[n] = kubesel.ContextRef{Cluster: c.Cluster, User: c.AuthInfo}
		}
	}
	for n, c := range cfg.Clusters {
		if c != nil {
			m.Clusters[n] = c.Server
		}
	}
	for n, u := range cfg.AuthInfos {
		if u != nil {
			m.Users[n] = true
		}
	}
	return m
}

// parseKubeconfig returns the context and the server URL (a password in it hidden) of the
// kubeconfig at path, read without client-go where kubesel.Quick can vouch for the file.
func parseKubeconfig(path string) (context, server string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", fmt.Errorf("unreadable: %w", err)
	}
	m, ok := kubesel.Quick(data)
	if !ok {
		cfg, err := decodeKubeconfig(path, data)
		if err != nil {
			return "", "", err
		}
		m = modelOf(cfg)
	}
	context, server, err = m.Pick()
	if err != nil {
		return "", "", err
	}
	return context, redactURL(server), nil
}

// redactURL hides a password embedded in a server URL (https://user:secret@host).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}

// Find resolves a user's reference to a cluster in cs: a 1-based number or a name (exact).
func Find(cs []Cluster, ref string) (Cluster, error) {
	if ref == "" {
		return Cluster{}, errors.New("no cluster given: pass a number or a name")
	}
	if n, err := strconv.Atoi(ref); err == nil {
		if n < 1 || n > len(cs) {
			if len(cs) == 0 {
				return Cluster{}, fmt.Errorf("no cluster number %d: clusters/ holds no kubeconfig", n)
			}
			return Cluster{}, fmt.Errorf("no cluster number %d: valid numbers are 1..%d", n, len(cs))
		}
		return cs[n-1], nil
	}
	for _, c := range cs {
		if c.Name == ref || strings.TrimSuffix(ref, Ext) == c.Name {
			return c, nil
		}
	}
	return Cluster{}, fmt.Errorf("no cluster named %q in clusters/", ref)
}

func setOrigin(cfg *clientcmdapi.Config, path string) {
	for _, c := range cfg.Clusters {
		c.LocationOfOrigin = path
	}
	for _, a := range cfg.AuthInfos {
		a.LocationOfOrigin = path
	}
	for _, c := range cfg.Contexts {
		c.LocationOfOrigin = path
	}
}
