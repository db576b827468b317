package local

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/lazy"
)

// state is what nuv records about one local cluster in <home>/clusters/<name>/state.json. It is
// written atomically; everything else in the directory (pki/, data/, logs/, pids/, config/) can be
// derived from it.
type state struct {
	Name     string `json:"name"`
	Provider string `json:"provider"`
	Version  string `json:"version"`
	Flavor   string `json:"flavor,omitempty"`
	HA       bool   `json:"ha,omitempty"`
	Nodes    int    `json:"nodes"`
	// NodeGroups are the cluster's node groups (empty in state written before they existed: one
	// default group of Nodes).
	NodeGroups []NodeGroup `json:"nodeGroups,omitempty"`
	// PodCIDR and ServiceCIDR are the cluster's networks ("" in older state: the defaults).
	PodCIDR     string    `json:"podCIDR,omitempty"`
	ServiceCIDR string    `json:"serviceCIDR,omitempty"`
	Created     time.Time `json:"created"`
	Kubeconfig  string    `json:"kubeconfig"`
	APIURL      string    `json:"apiURL"`
	// Binary is the nuv-kube companion the components run, or a directory of upstream binaries.
	Binary string `json:"binary"`
	// BinarySource says how nuv got Binary (downloaded and verified, built, given by the user).
	BinarySource string `json:"binarySource,omitempty"`
	// Ports maps a port's role ("etcd-0-client", "apiserver-0", "lb", ...) to its loopback port.
	Ports map[string]int `json:"ports"`
	// Phase is "creating" until create finished, then "created".
	Phase string `json:"phase"`
	// TokenWebhook is CreateOptions.TokenWebhook.
	TokenWebhook string `json:"tokenWebhook,omitempty"`
	// Durability is Fast or Safe ("" in older state: Fast).
	Durability string `json:"durability,omitempty"`
}

// durable reports whether etcd fsyncs.
func (s *state) durable() bool { return s.Durability == Safe }

const stateFile = "state.json"

// StateDir returns the state directory of the local cluster name under nuv home.
func StateDir(home, name string) string { return filepath.Join(home, "clusters", name) }

// PIDDir is where every process of a cluster is recorded as <component>.pid; stop and delete stop
// each one. Other parts of nuv record processes they start for a cluster here (RegisterProcess).
func PIDDir(home, name string) string { return filepath.Join(StateDir(home, name), "pids") }

var nameRE = lazy.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ValidName reports whether name can name a local cluster (a DNS label of at most 40 characters).
func ValidName(name string) error {
	if len(name) > 40 || !nameRE.MatchString(name) {
		return fmt.Errorf("invalid cluster name %q: use lower-case letters, digits and '-', at most 40 characters", name)
	}
	return nil
}

func loadState(dir string) (*state, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, fmt.Errorf("read cluster state: %w", err)
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("cluster state %s is corrupt: %w", filepath.Join(dir, stateFile), err)
	}
	if s.Name == "" || s.Ports == nil {
		return nil, fmt.Errorf("cluster state %s is incomplete", filepath.Join(dir, stateFile))
	}
	return &s, nil
}

func saveState(dir string, s *state) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(filepath.Join(dir, stateFile), append(b, '\n'), 0o600)
}
