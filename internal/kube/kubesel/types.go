package kubesel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/paths"
)

// Cluster types nuv knows. They are the values of KUBE in tasks and the directory names under
// tests/ for instance files.
const (
	TypeLocal   = "local"   // nuv's own local clusters (node label nuv.dev/provider=local)
	TypeKind    = "kind"    // kind (providerID kind://)
	TypeEKS     = "eks"     // Amazon EKS
	TypeAKS     = "aks"     // Azure AKS
	TypeGKE     = "gke"     // Google GKE
	TypeK3s     = "k3s"     // k3s
	TypeM8s     = "m8s"     // MicroK8s
	TypeOSH     = "osh"     // OpenShift
	TypeLKS     = "lks"     // Linode LKE
	TypeKubeadm = "kubeadm" // a self-managed cluster nuv bootstrapped with kubeadm on machines (node label nuv.dev/bootstrap=kubeadm)
	TypeGeneric = "generic" // anything else
)

// Types lists every valid type, in detection order of the distribution markers.
func Types() []string {
	return []string{TypeKubeadm, TypeEKS, TypeAKS, TypeGKE, TypeK3s, TypeM8s, TypeOSH, TypeKind, TypeLKS, TypeLocal, TypeGeneric}
}

// ValidType tells whether t is one of Types.
func ValidType(t string) bool {
	for _, v := range Types() {
		if v == t {
			return true
		}
	}
	return false
}

// OverridePath is the file that forces a cluster's type: clusters/<name>.type holding one type.
func OverridePath(project, name string) string {
	return filepath.Join(paths.Clusters(project), name+".type")
}

// Override returns the explicit type of a cluster, if any: clusters/<name>.type first, then the
// detect.force setting (DETECT_FORCE in the environment, else "detect": {"force": T} in
// $NUV_HOME/config.json). An invalid value is an error naming where it came from.
func Override(project, name string, getenv func(string) string) (string, error) {
	p := OverridePath(project, name)
	if data, err := os.ReadFile(p); err == nil {
		t := strings.TrimSpace(string(data))
		if !ValidType(t) {
			return "", fmt.Errorf("%s: unknown cluster type %q (valid: %s)", p, t, strings.Join(Types(), ", "))
		}
		return t, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read type override: %w", err)
	}
	t, src := ForcedType(getenv)
	if t == "" {
		return "", nil
	}
	if !ValidType(t) {
		return "", fmt.Errorf("%s: unknown cluster type %q (valid: %s)", src, t, strings.Join(Types(), ", "))
	}
	return t, nil
}

// ForcedType reads detect.force from the environment or nuv's config file.
func ForcedType(getenv func(string) string) (value, source string) {
	if v := strings.TrimSpace(getenv("DETECT_FORCE")); v != "" {
		return v, "DETECT_FORCE"
	}
	home, err := paths.Home(getenv)
	if err != nil {
		return "", ""
	}
	p := filepath.Join(home, "config.json")
	data, err := os.ReadFile(p)
	if err != nil {
		return "", ""
	}
	var cfg struct {
		Detect struct {
			Force any `json:"force"`
		} `json:"detect"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return "", ""
	}
	if s, ok := cfg.Detect.Force.(string); ok {
		return strings.TrimSpace(s), p + " (detect.force)"
	}
	return "", ""
}

// typeCache remembers a detected type for one kubeconfig, keyed by the file's content so a
// recreated cluster under the same name is detected afresh.
type typeCache struct {
	Type string `json:"type"`
	Sum  string `json:"sum"`
}

func typeCachePath(project, name string) string {
	return filepath.Join(paths.ProjectState(project), "types", name+".json")
}

func fileSum(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// Remember records a detected type for the cluster name whose kubeconfig is path (atomic write).
func Remember(project, name, path, kubeType string) error {
	if !ValidType(kubeType) {
		return fmt.Errorf("remember type of %s: unknown type %q", name, kubeType)
	}
	data, _ := json.Marshal(typeCache{Type: kubeType, Sum: fileSum(path)})
	data = append(data, '\n')
	p := typeCachePath(project, name)
	if old, err := os.ReadFile(p); err == nil && string(old) == string(data) {
		return nil // already known: spare the write and its fsync
	}
	return fsutil.WriteFileAtomic(p, data, 0o644)
}

// Remembered returns the type remembered for the kubeconfig at path, "" when none or stale.
func Remembered(project, name, path string) string {
	data, err := os.ReadFile(typeCachePath(project, name))
	if err != nil {
		return ""
	}
	var tc typeCache
	if json.Unmarshal(data, &tc) != nil || !ValidType(tc.Type) || tc.Sum != fileSum(path) {
		return ""
	}
	return tc.Type
}

// KnownType is the type of a cluster that needs no network call: the override, else the
// remembered detection, else "".
func KnownType(project, name string, getenv func(string) string) (string, error) {
	t, err := Override(project, name, getenv)
	if err != nil || t != "" {
		return t, err
	}
	return Remembered(project, name, filepath.Join(paths.Clusters(project), name+Ext)), nil
}
