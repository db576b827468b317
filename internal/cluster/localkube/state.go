package localkube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/quickread"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	record "github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/lazy"
	"github.com/nuv-dev/nuv/internal/paths"
)

// state is local's view of the record of one cluster, <home>/clusters/<name>/state.json: a
// state.Record (the lifecycle engine's record type, with its phases) whose spec says what the
// cluster is (version, control plane, networks, node groups, flavor, durability) and whose
// provider data (localData) says what runs where (ports, API URL, binaries, kubeconfig). It is
// written atomically; everything else in the directory (pki/, data/, logs/, pids/, config/) can be
// derived from it. The JSON tags are the flat form an older nuv wrote, read as such (loadState).
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
	// Phase is record.Creating until create finished, then record.Running (an older nuv wrote
	// "creating" and "created").
	Phase record.Phase `json:"phase"`
	// TokenWebhook is CreateOptions.TokenWebhook.
	TokenWebhook string `json:"tokenWebhook,omitempty"`
	// Durability is Fast or Safe ("" in older state: Fast).
	Durability string `json:"durability,omitempty"`

	updated    time.Time // of the record last read or written
	generation int64
}

// localData is the local provider's data in a cluster's record (state.Record.Data), defined
// once in package quickread, which the slim nuv reads it with.
type localData = quickread.LocalData

// durable reports whether etcd fsyncs.
func (s *state) durable() bool { return s.Durability == Safe }

const StateFile = "state.json"

// StateDir returns the state directory of the local cluster name under nuv home (or under an
// emulator's control-plane home; paths.Locator knows the layout).
func StateDir(home, name string) string { return paths.Locator{Home: home}.ControlPlane(name) }

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

// legacyPhases are the phases an older nuv wrote in its flat state.json.
var legacyPhases = map[record.Phase]record.Phase{"creating": record.Creating, "created": record.Running}

// loadState reads a cluster's record; a flat state.json of an older nuv is read as it is (and
// written as a record by the next save).
func loadState(dir string) (*state, error) {
	path := filepath.Join(dir, StateFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cluster state: %w", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, fmt.Errorf("cluster state %s is corrupt: %w", path, err)
	}
	if _, ok := keys["generation"]; !ok {
		var s state
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("cluster state %s is corrupt: %w", path, err)
		}
		if s.Name == "" || s.Ports == nil {
			return nil, fmt.Errorf("cluster state %s is incomplete", path)
		}
		if p, ok := legacyPhases[s.Phase]; ok {
			s.Phase = p
		}
		return &s, nil
	}
	var r record.Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("cluster state %s is corrupt: %w", path, err)
	}
	s, err := fromRecord(&r)
	if err != nil {
		return nil, fmt.Errorf("cluster state %s is %w", path, err)
	}
	return s, nil
}

// fromRecord is local's view of a cluster's record.
func fromRecord(r *record.Record) (*state, error) {
	var d localData
	if err := r.DataInto(&d); err != nil {
		return nil, fmt.Errorf("corrupt: %w", err)
	}
	if r.Name == "" || r.Spec == nil || d.Ports == nil {
		return nil, errors.New("incomplete")
	}
	c := &r.Spec.Spec
	s := &state{Name: r.Name, Provider: r.Provider, Phase: r.Phase, Created: r.Created, updated: r.Updated, generation: r.Generation,
		Version: c.KubernetesVersion, HA: c.ControlPlane.Count > 1, PodCIDR: c.Networking.PodCIDR, ServiceCIDR: c.Networking.ServiceCIDR,
		NodeGroups: GroupsOf(r.Spec), Kubeconfig: d.Kubeconfig, APIURL: d.APIURL, Binary: d.Binary, BinarySource: d.BinarySource,
		Ports: d.Ports, TokenWebhook: d.TokenWebhook}
	if sec := Key.Get(r.Spec); sec.Flavor != "" || sec.Durability != "" {
		s.Flavor, s.Durability = sec.Flavor, sec.Durability
	}
	for i := range s.NodeGroups {
		s.NodeGroups[i].ProviderIDPrefix = d.ProviderIDs[s.NodeGroups[i].Name]
	}
	s.Nodes = totalNodes(s.NodeGroups)
	return s, nil
}

// record is the cluster's record as saveState writes it.
func (s *state) record() (*record.Record, error) {
	r := &record.Record{Name: s.Name, Provider: "local", Phase: s.Phase, Spec: s.spec(), Created: s.Created, Updated: s.updated, Generation: s.generation}
	d := localData{Kubeconfig: s.Kubeconfig, APIURL: s.APIURL, Binary: s.Binary, BinarySource: s.BinarySource, Ports: s.Ports, TokenWebhook: s.TokenWebhook}
	for _, g := range s.groups() {
		if g.ProviderIDPrefix != "" {
			if d.ProviderIDs == nil {
				d.ProviderIDs = map[string]string{}
			}
			d.ProviderIDs[g.Name] = g.ProviderIDPrefix
		}
	}
	return r, r.SetData(d)
}

// spec describes the cluster as a spec: what its record holds, and what Adopt returns.
func (s *state) spec() *spec.Cluster {
	c := &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: s.Name},
		Spec: spec.Spec{Provider: "local", KubernetesVersion: s.Version,
			Networking: spec.Networking{PodCIDR: s.PodCIDR, ServiceCIDR: s.ServiceCIDR}}}
	if s.HA {
		c.Spec.ControlPlane.Count = 3
	}
	if s.Flavor != "" || s.durable() {
		sec := &Section{Flavor: s.Flavor}
		if s.durable() {
			sec.Durability = Safe
		}
		Key.Set(c, sec)
	}
	for _, g := range s.groups() {
		n := g.Count
		sg := spec.NodeGroup{Name: g.Name, Count: &n, Labels: g.Labels, InstanceType: g.InstanceType, Spot: g.Spot}
		for _, t := range g.Taints {
			ts := t.Key
			if t.Value != "" {
				ts += "=" + t.Value
			}
			sg.Taints = append(sg.Taints, ts+":"+string(t.Effect))
		}
		c.Spec.NodeGroups = append(c.Spec.NodeGroups, sg)
	}
	return c
}

// saveState writes the cluster's record (as a record, whatever form it was read from).
func saveState(dir string, s *state) error {
	r, err := s.record()
	if err != nil {
		return err
	}
	if err := record.WriteFile(filepath.Join(dir, StateFile), r); err != nil {
		return err
	}
	s.updated, s.generation = r.Updated, r.Generation
	if s.Created.IsZero() {
		s.Created = r.Created
	}
	return nil
}

// Adopt describes an existing local cluster as a spec, what its record says (for clusters made
// without a state record); a cluster whose record cannot be read gets enough of a spec to delete it.
func (p Clusters) Adopt(_ context.Context, name string) (*spec.Cluster, error) {
	dir := StateDir(p.Home, name)
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%q: %w", name, cluster.ErrNotFound)
	}
	s, err := loadState(dir)
	if err != nil { // broken: enough of a spec to delete it
		return &spec.Cluster{APIVersion: spec.APIVersion, Kind: spec.Kind, Metadata: spec.Metadata{Name: name}, Spec: spec.Spec{Provider: "local"}}, nil
	}
	return s.spec(), nil
}

// Recorded is a local cluster as its record and its processes show it, for the local provider's
// view of what exists.
type Recorded struct {
	Version, Flavor, PodCIDR, ServiceCIDR string
	HA                                    bool
	// Complete says the cluster's create finished (its record's phase is Running).
	Complete bool
	// Groups are the node groups the record holds.
	Groups []NodeGroup
	// Status is that of its processes (Running, Degraded, Stopped).
	Status cluster.Status
}

// ReadRecord reads the record of the local cluster whose state directory is dir; the error wraps
// os.ErrNotExist when there is none (a create killed before it recorded anything).
func ReadRecord(dir string) (*Recorded, error) {
	s, err := loadState(dir)
	if err != nil {
		return nil, err
	}
	_, status := processStatus(dir, s)
	return &Recorded{Version: s.Version, Flavor: s.Flavor, PodCIDR: s.PodCIDR, ServiceCIDR: s.ServiceCIDR, HA: s.HA,
		Complete: s.Phase == record.Running, Groups: s.groups(), Status: status}, nil
}
