package kube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// GlobalKubeconfig is the user's kubeconfig that MergeGlobal writes: $HOME/.kube/config. It is
// never $KUBECONFIG, which inside tasks points at the selected clusters/ file.
func GlobalKubeconfig(getenv func(string) string) (string, error) {
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("locate ~/.kube/config: %w", err)
		}
		home = h
	}
	return filepath.Join(home, ".kube", "config"), nil
}

// GlobalContextName is the name of the context (and its cluster and user entries) MergeGlobal
// writes for a cluster: "nuv-<name>", so it never overwrites the user's own entries.
func GlobalContextName(name string) string { return "nuv-" + name }

// MergeGlobal merges c's context into the kubeconfig at dest (normally ~/.kube/config) and makes it
// the current context. Existing contexts, clusters and users are kept; certificates are embedded so
// the entry does not depend on the project. When dest exists its previous content is first saved
// to a timestamped backup (returned). The write is atomic (mode 0600) and serialised with other
// merges by a lock file beside dest. A dest that does not parse is left untouched.
func MergeGlobal(dest string, c Cluster) (contextName, backup string, err error) {
	src, ctxName, err := loadKubeconfig(c.Path)
	if err != nil {
		return "", "", fmt.Errorf("kubeconfig %s: %w", c.Path, err)
	}
	if err := clientcmdapi.FlattenConfig(src); err != nil {
		return "", "", fmt.Errorf("kubeconfig %s: embed certificates: %w", c.Path, err)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return "", "", fmt.Errorf("create %s: %w", filepath.Dir(dest), err)
	}
	unlock, err := lockFile(dest + ".nuv.lock")
	if err != nil {
		return "", "", err
	}
	defer unlock()

	old, err := os.ReadFile(dest)
	var cfg *clientcmdapi.Config
	switch {
	case errors.Is(err, os.ErrNotExist):
		cfg = clientcmdapi.NewConfig()
		old = nil
	case err != nil:
		return "", "", fmt.Errorf("read %s: %w", dest, err)
	default:
		if cfg, err = clientcmd.Load(old); err != nil {
			return "", "", fmt.Errorf("%s does not parse, left untouched: %w", dest, err)
		}
	}
	name := GlobalContextName(c.Name)
	sctx := src.Contexts[ctxName]
	cluster := src.Clusters[sctx.Cluster].DeepCopy()
	cluster.LocationOfOrigin = ""
	cfg.Clusters[name] = cluster
	kctx := sctx.DeepCopy()
	kctx.LocationOfOrigin = ""
	kctx.Cluster = name
	if sctx.AuthInfo != "" {
		user := src.AuthInfos[sctx.AuthInfo].DeepCopy()
		user.LocationOfOrigin = ""
		cfg.AuthInfos[name] = user
		kctx.AuthInfo = name
	}
	cfg.Contexts[name] = kctx
	cfg.CurrentContext = name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", "", fmt.Errorf("encode %s: %w", dest, err)
	}
	if old != nil {
		backup = fmt.Sprintf("%s.nuv-backup-%s", dest, time.Now().UTC().Format("20060102T150405.000Z"))
		if err := fsutil.WriteFileAtomic(backup, old, 0o600); err != nil {
			return "", "", fmt.Errorf("back up %s: %w", dest, err)
		}
	}
	if err := fsutil.WriteFileAtomic(dest, data, 0o600); err != nil {
		return "", "", err
	}
	return name, backup, nil
}

// lockFile takes an exclusive flock on path, creating it (0600).
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
